// Original file: svc/v1/auth.proto

import type { Long } from "@grpc/proto-loader";

export interface PasswordResetToken {
  username?: string;
  token?: string;
  expires_unix_ms?: number | string | Long;
  revoked_sessions?: number;
}

export interface PasswordResetToken__Output {
  username: string;
  token: string;
  expires_unix_ms: number;
  revoked_sessions: number;
}
