// Original file: svc/v1/auth.proto

export interface CreateAppSessionRequest {
  app_name?: string;
  public_addr?: string;
}

export interface CreateAppSessionRequest__Output {
  app_name: string;
  public_addr: string;
}
