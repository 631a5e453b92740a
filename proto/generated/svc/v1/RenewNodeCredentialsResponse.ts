// Original file: svc/v1/auth.proto

export interface RenewNodeCredentialsResponse {
  host_certificate?: string;
  tls_certificate_pem?: string;
  host_ca_pems?: string[];
  user_ca_ssh_public_keys?: string[];
  expires?: string;
}

export interface RenewNodeCredentialsResponse__Output {
  host_certificate: string;
  tls_certificate_pem: string;
  host_ca_pems: string[];
  user_ca_ssh_public_keys: string[];
  expires: string;
}
