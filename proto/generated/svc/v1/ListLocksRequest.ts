// Original file: svc/v1/auth.proto

export interface ListLocksRequest {}

export interface ListLocksRequest__Output {}
