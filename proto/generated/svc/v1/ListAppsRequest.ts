// Original file: svc/v1/auth.proto

export interface ListAppsRequest {}

export interface ListAppsRequest__Output {}
