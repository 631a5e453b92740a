// Original file: svc/v1/auth.proto

export interface RenewNodeCredentialsRequest {
  ssh_public_key?: string;
  tls_public_key_pem?: string;
}

export interface RenewNodeCredentialsRequest__Output {
  ssh_public_key: string;
  tls_public_key_pem: string;
}
