// Original file: svc/v1/auth.proto

export interface ListAgentIdentitiesRequest {}

export interface ListAgentIdentitiesRequest__Output {}
