// Original file: svc/v1/auth.proto

import type { Long } from "@grpc/proto-loader";

export interface CreateAgentIdentityRequest {
  name?: string;
  roles?: string[];
  cert_ttl?: string;
  token_ttl_seconds?: number | string | Long;
  allow_workload_svids?: boolean;
}

export interface CreateAgentIdentityRequest__Output {
  name: string;
  roles: string[];
  cert_ttl: string;
  token_ttl_seconds: number;
  allow_workload_svids: boolean;
}
