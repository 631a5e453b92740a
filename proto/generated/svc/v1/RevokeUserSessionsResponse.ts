// Original file: svc/v1/auth.proto

export interface RevokeUserSessionsResponse {
  revoked_sessions?: number;
}

export interface RevokeUserSessionsResponse__Output {
  revoked_sessions: number;
}
