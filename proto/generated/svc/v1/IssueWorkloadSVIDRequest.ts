// Original file: svc/v1/auth.proto

import type { Long } from "@grpc/proto-loader";

export interface IssueWorkloadSVIDRequest {
  spiffe_path?: string;
  tls_public_key_pem?: string;
  jwt_audiences?: string[];
  ttl_seconds?: number | string | Long;
}

export interface IssueWorkloadSVIDRequest__Output {
  spiffe_path: string;
  tls_public_key_pem: string;
  jwt_audiences: string[];
  ttl_seconds: number;
}
