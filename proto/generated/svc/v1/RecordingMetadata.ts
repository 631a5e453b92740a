// Original file: svc/v1/auth.proto

import type { Long } from "@grpc/proto-loader";

export interface RecordingMetadata {
  id?: string;
  user_name?: string;
  protocol?: string;
  login?: string;
  start_unix_ms?: number | string | Long;
  end_unix_ms?: number | string | Long;
  format?: string;
  size_bytes?: number | string | Long;
}

export interface RecordingMetadata__Output {
  id: string;
  user_name: string;
  protocol: string;
  login: string;
  start_unix_ms: number;
  end_unix_ms: number;
  format: string;
  size_bytes: number;
}
