// Original file: svc/v1/auth.proto

export interface DeleteUserResponse {}

export interface DeleteUserResponse__Output {}
