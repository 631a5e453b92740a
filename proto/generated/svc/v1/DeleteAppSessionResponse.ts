// Original file: svc/v1/auth.proto

export interface DeleteAppSessionResponse {}

export interface DeleteAppSessionResponse__Output {}
