// Original file: svc/v1/auth.proto

export interface RevokeUserSessionsRequest {
  username?: string;
}

export interface RevokeUserSessionsRequest__Output {
  username: string;
}
