// Original file: svc/v1/auth.proto

export interface BindSSOAuthRequestRequest {
  request_id?: string;
  browser_binding_hash?: string;
}

export interface BindSSOAuthRequestRequest__Output {
  request_id: string;
  browser_binding_hash: string;
}
