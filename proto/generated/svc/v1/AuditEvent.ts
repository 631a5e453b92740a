// Original file: svc/v1/auth.proto

import type { Long } from "@grpc/proto-loader";

export interface AuditEvent {
  id?: string;
  time_unix_ms?: number | string | Long;
  event_type?: string;
  user_name?: string;
  success?: boolean;
  fields_json?: string;
  _success?: "success";
}

export interface AuditEvent__Output {
  id: string;
  time_unix_ms: number;
  event_type: string;
  user_name: string;
  success?: boolean;
  fields_json: string;
  _success?: "success";
}
