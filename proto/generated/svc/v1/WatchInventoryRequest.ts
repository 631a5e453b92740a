// Original file: svc/v1/auth.proto

export interface WatchInventoryRequest {}

export interface WatchInventoryRequest__Output {}
