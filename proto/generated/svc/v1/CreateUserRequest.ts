// Original file: svc/v1/auth.proto

export interface CreateUserRequest {
  name?: string;
  roles?: string[];
  logins?: string[];
}

export interface CreateUserRequest__Output {
  name: string;
  roles: string[];
  logins: string[];
}
