// Original file: svc/v1/auth.proto

import type { Long } from "@grpc/proto-loader";

export interface ListRecordingsRequest {
  limit?: number;
  offset?: number;
  user?: string;
  protocol?: string;
  node?: string;
  start_unix_ms?: number | string | Long;
  end_unix_ms?: number | string | Long;
  _start_unix_ms?: "start_unix_ms";
  _end_unix_ms?: "end_unix_ms";
}

export interface ListRecordingsRequest__Output {
  limit: number;
  offset: number;
  user: string;
  protocol: string;
  node: string;
  start_unix_ms?: number;
  end_unix_ms?: number;
  _start_unix_ms?: "start_unix_ms";
  _end_unix_ms?: "end_unix_ms";
}
