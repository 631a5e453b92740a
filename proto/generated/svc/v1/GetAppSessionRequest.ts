// Original file: svc/v1/auth.proto

export interface GetAppSessionRequest {
  session_id?: string;
  public_addr?: string;
}

export interface GetAppSessionRequest__Output {
  session_id: string;
  public_addr: string;
}
