// Original file: svc/v1/auth.proto

import type { Long } from "@grpc/proto-loader";

export interface SearchAuditEventsRequest {
  type?: string;
  user?: string;
  start_unix_ms?: number | string | Long;
  end_unix_ms?: number | string | Long;
  limit?: number;
  offset?: number;
  _start_unix_ms?: "start_unix_ms";
  _end_unix_ms?: "end_unix_ms";
}

export interface SearchAuditEventsRequest__Output {
  type: string;
  user: string;
  start_unix_ms?: number;
  end_unix_ms?: number;
  limit: number;
  offset: number;
  _start_unix_ms?: "start_unix_ms";
  _end_unix_ms?: "end_unix_ms";
}
