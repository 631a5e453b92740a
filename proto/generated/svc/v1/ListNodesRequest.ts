// Original file: svc/v1/auth.proto

export interface ListNodesRequest {}

export interface ListNodesRequest__Output {}
