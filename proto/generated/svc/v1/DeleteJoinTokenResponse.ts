// Original file: svc/v1/auth.proto

export interface DeleteJoinTokenResponse {}

export interface DeleteJoinTokenResponse__Output {}
