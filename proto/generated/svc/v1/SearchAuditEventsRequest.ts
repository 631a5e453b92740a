// Original file: svc/v1/auth.proto

import type { Long } from "@grpc/proto-loader";

export interface SearchAuditEventsRequest {
  type?: string;
  user?: string;
  start_unix_ms?: number | string | Long;
  end_unix_ms?: number | string | Long;
  limit?: number;
  offset?: number;
}

export interface SearchAuditEventsRequest__Output {
  type: string;
  user: string;
  start_unix_ms: number;
  end_unix_ms: number;
  limit: number;
  offset: number;
}
