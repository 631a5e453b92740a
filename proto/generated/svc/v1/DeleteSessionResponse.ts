// Original file: svc/v1/auth.proto

export interface DeleteSessionResponse {}

export interface DeleteSessionResponse__Output {}
