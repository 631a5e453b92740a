// Original file: svc/v1/auth.proto

export interface DeleteUserRequest {
  name?: string;
}

export interface DeleteUserRequest__Output {
  name: string;
}
