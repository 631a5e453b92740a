// Original file: svc/v1/auth.proto

export interface RegisterAgentRequest {
  token?: string;
  hostname?: string;
  host_ssh_public_key?: string;
  tls_public_key_pem?: string;
  labels?: { [key: string]: string };
  addresses?: string[];
  agentless?: boolean;
}

export interface RegisterAgentRequest__Output {
  token: string;
  hostname: string;
  host_ssh_public_key: string;
  tls_public_key_pem: string;
  labels: { [key: string]: string };
  addresses: string[];
  agentless: boolean;
}
