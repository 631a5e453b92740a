// Original file: svc/v1/auth.proto

export interface DeleteSessionRequest {}

export interface DeleteSessionRequest__Output {}
