// Original file: svc/v1/auth.proto

export interface DeleteAgentIdentityRequest {
  name?: string;
}

export interface DeleteAgentIdentityRequest__Output {
  name: string;
}
