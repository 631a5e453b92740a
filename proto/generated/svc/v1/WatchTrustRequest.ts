// Original file: svc/v1/auth.proto

export interface WatchTrustRequest {}

export interface WatchTrustRequest__Output {}
