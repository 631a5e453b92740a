// Original file: svc/v1/auth.proto

export interface PublicKeys {
  user_ca_ssh_public_keys?: string[];
  host_ca_ssh_public_keys?: string[];
  host_ca_pems?: string[];
  spiffe_bundle_json?: string;
  spiffe_jwks_json?: string;
  app_jwt_jwks_json?: string;
  trust_domain?: string;
}

export interface PublicKeys__Output {
  user_ca_ssh_public_keys: string[];
  host_ca_ssh_public_keys: string[];
  host_ca_pems: string[];
  spiffe_bundle_json: string;
  spiffe_jwks_json: string;
  app_jwt_jwks_json: string;
  trust_domain: string;
}
