// Original file: svc/v1/auth.proto

export interface CreatePasswordResetRequest {
  name?: string;
}

export interface CreatePasswordResetRequest__Output {
  name: string;
}
