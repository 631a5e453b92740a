// Original file: svc/v1/auth.proto

export interface ListRolesRequest {}

export interface ListRolesRequest__Output {}
