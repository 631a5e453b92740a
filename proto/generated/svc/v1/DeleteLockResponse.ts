// Original file: svc/v1/auth.proto

export interface DeleteLockResponse {}

export interface DeleteLockResponse__Output {}
