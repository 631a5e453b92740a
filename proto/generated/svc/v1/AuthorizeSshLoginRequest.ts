// Original file: svc/v1/auth.proto

export interface AuthorizeSshLoginRequest {
  ssh_certificate?: string;
  login?: string;
  remote_address?: string;
}

export interface AuthorizeSshLoginRequest__Output {
  ssh_certificate: string;
  login: string;
  remote_address: string;
}
