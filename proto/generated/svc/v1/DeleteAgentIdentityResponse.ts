// Original file: svc/v1/auth.proto

export interface DeleteAgentIdentityResponse {}

export interface DeleteAgentIdentityResponse__Output {}
