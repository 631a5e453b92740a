// Original file: svc/v1/auth.proto

export interface CreateSSOAuthRequestRequest {
  connector?: string;
  browser_binding_hash?: string;
  client_redirect_url?: string;
  code_challenge?: string;
  client_address?: string;
}

export interface CreateSSOAuthRequestRequest__Output {
  connector: string;
  browser_binding_hash: string;
  client_redirect_url: string;
  code_challenge: string;
  client_address: string;
}
