// Original file: svc/v1/auth.proto

export interface CheckNodeRegisteredResponse {
  registered?: boolean;
}

export interface CheckNodeRegisteredResponse__Output {
  registered: boolean;
}
