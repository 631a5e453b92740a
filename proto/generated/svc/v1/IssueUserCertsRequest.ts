// Original file: svc/v1/auth.proto

import type { Long } from "@grpc/proto-loader";

export interface IssueUserCertsRequest {
  ssh_public_key?: string;
  ttl_seconds?: number | string | Long;
  node?: string;
}

export interface IssueUserCertsRequest__Output {
  ssh_public_key: string;
  ttl_seconds: number;
  node: string;
}
