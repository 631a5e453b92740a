// Original file: svc/v1/auth.proto

export interface AuthorizeNodeLoginRequest {
  hostname?: string;
  login?: string;
}

export interface AuthorizeNodeLoginRequest__Output {
  hostname: string;
  login: string;
}
