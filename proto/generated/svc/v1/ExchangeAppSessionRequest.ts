// Original file: svc/v1/auth.proto

export interface ExchangeAppSessionRequest {
  code?: string;
  public_addr?: string;
}

export interface ExchangeAppSessionRequest__Output {
  code: string;
  public_addr: string;
}
