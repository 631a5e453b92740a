// Original file: svc/v1/auth.proto

export interface CheckNodeRegisteredRequest {
  agent_id?: string;
}

export interface CheckNodeRegisteredRequest__Output {
  agent_id: string;
}
