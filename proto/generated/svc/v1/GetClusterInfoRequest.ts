// Original file: svc/v1/auth.proto

export interface GetClusterInfoRequest {}

export interface GetClusterInfoRequest__Output {}
