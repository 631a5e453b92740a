// Original file: svc/v1/auth.proto

export interface AuthorizeSshLoginResponse {
  kind?: string;
  name?: string;
  roles?: string[];
  reason?: string;
}

export interface AuthorizeSshLoginResponse__Output {
  kind: string;
  name: string;
  roles: string[];
  reason: string;
}
