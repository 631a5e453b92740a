// Original file: svc/v1/auth.proto

export interface ResetPasswordRequest {
  token?: string;
  new_password?: string;
}

export interface ResetPasswordRequest__Output {
  token: string;
  new_password: string;
}
