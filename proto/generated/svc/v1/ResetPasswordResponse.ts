// Original file: svc/v1/auth.proto

export interface ResetPasswordResponse {
  username?: string;
}

export interface ResetPasswordResponse__Output {
  username: string;
}
