// Original file: svc/v1/auth.proto

import type { Long } from "@grpc/proto-loader";

export interface AgentIdentityInfo {
  name?: string;
  roles?: string[];
  cert_ttl?: string;
  allow_workload_svids?: boolean;
  generation?: number | string | Long;
  locked?: boolean;
  locked_reason?: string;
  locked_unix_ms?: number | string | Long;
  last_renewed_unix_ms?: number | string | Long;
  cert_expires_unix_ms?: number | string | Long;
}

export interface AgentIdentityInfo__Output {
  name: string;
  roles: string[];
  cert_ttl: string;
  allow_workload_svids: boolean;
  generation: number;
  locked: boolean;
  locked_reason: string;
  locked_unix_ms: number;
  last_renewed_unix_ms: number;
  cert_expires_unix_ms: number;
}
