// Original file: svc/v1/auth.proto

import type {
  AuditEvent as _svc_v1_AuditEvent,
  AuditEvent__Output as _svc_v1_AuditEvent__Output,
} from "../../svc/v1/AuditEvent.ts";
import type { Long } from "@grpc/proto-loader";

export interface SearchAuditEventsResponse {
  items?: _svc_v1_AuditEvent[];
  total_count?: number | string | Long;
}

export interface SearchAuditEventsResponse__Output {
  items: _svc_v1_AuditEvent__Output[];
  total_count: number;
}
