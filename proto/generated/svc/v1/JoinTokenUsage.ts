// Original file: svc/v1/auth.proto

import type { Long } from "@grpc/proto-loader";

export interface JoinTokenUsage {
  used?: boolean;
  used_by?: string;
  used_by_id?: string;
  used_at_unix_ms?: number | string | Long;
}

export interface JoinTokenUsage__Output {
  used: boolean;
  used_by: string;
  used_by_id: string;
  used_at_unix_ms: number;
}
