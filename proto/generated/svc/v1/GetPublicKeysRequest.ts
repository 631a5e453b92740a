// Original file: svc/v1/auth.proto

export interface GetPublicKeysRequest {}

export interface GetPublicKeysRequest__Output {}
