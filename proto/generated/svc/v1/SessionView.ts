// Original file: svc/v1/auth.proto

import type { Long } from "@grpc/proto-loader";

export interface SessionView {
  session_id?: string;
  username?: string;
  roles?: string[];
  expires_unix_ms?: number | string | Long;
  created_unix_ms?: number | string | Long;
  mfa_verified?: boolean;
  scope?: string;
  allowed?: string[];
}

export interface SessionView__Output {
  session_id: string;
  username: string;
  roles: string[];
  expires_unix_ms: number;
  created_unix_ms: number;
  mfa_verified: boolean;
  scope: string;
  allowed: string[];
}
