// Original file: svc/v1/auth.proto

import type { Long } from "@grpc/proto-loader";

export interface Recording {
  id?: string;
  user_name?: string;
  protocol?: string;
  node?: string;
  login?: string;
  start_unix_ms?: number | string | Long;
  end_unix_ms?: number | string | Long;
  size_bytes?: number | string | Long;
  format?: string;
}

export interface Recording__Output {
  id: string;
  user_name: string;
  protocol: string;
  node: string;
  login: string;
  start_unix_ms: number;
  end_unix_ms: number;
  size_bytes: number;
  format: string;
}
