// Original file: svc/v1/auth.proto

export interface ListJoinTokensRequest {}

export interface ListJoinTokensRequest__Output {}
