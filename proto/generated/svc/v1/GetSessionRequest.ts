// Original file: svc/v1/auth.proto

export interface GetSessionRequest {}

export interface GetSessionRequest__Output {}
