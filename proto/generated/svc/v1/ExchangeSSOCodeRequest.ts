// Original file: svc/v1/auth.proto

export interface ExchangeSSOCodeRequest {
  code?: string;
  code_verifier?: string;
}

export interface ExchangeSSOCodeRequest__Output {
  code: string;
  code_verifier: string;
}
