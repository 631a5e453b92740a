// Original file: svc/v1/auth.proto

export interface BootstrapAgentIdentityRequest {
  token?: string;
  ssh_public_key?: string;
  tls_public_key_pem?: string;
}

export interface BootstrapAgentIdentityRequest__Output {
  token: string;
  ssh_public_key: string;
  tls_public_key_pem: string;
}
