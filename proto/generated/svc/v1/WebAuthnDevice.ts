// Original file: svc/v1/auth.proto

import type { Long } from "@grpc/proto-loader";

export interface WebAuthnDevice {
  id?: string;
  name?: string;
  created_unix_ms?: number | string | Long;
  last_used_unix_ms?: number | string | Long;
}

export interface WebAuthnDevice__Output {
  id: string;
  name: string;
  created_unix_ms: number;
  last_used_unix_ms: number;
}
