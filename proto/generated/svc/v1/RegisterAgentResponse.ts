// Original file: svc/v1/auth.proto

export interface RegisterAgentResponse {
  agent_id?: string;
  host_ssh_certificate?: string;
  tls_certificate_pem?: string;
  host_ca_pems?: string[];
  user_ca_ssh_public_keys?: string[];
}

export interface RegisterAgentResponse__Output {
  agent_id: string;
  host_ssh_certificate: string;
  tls_certificate_pem: string;
  host_ca_pems: string[];
  user_ca_ssh_public_keys: string[];
}
