// Original file: svc/v1/auth.proto

import type { Long } from "@grpc/proto-loader";

export interface CreateJoinTokenRequest {
  name?: string;
  ttl_seconds?: number | string | Long;
  node_labels?: { [key: string]: string };
}

export interface CreateJoinTokenRequest__Output {
  name: string;
  ttl_seconds: number;
  node_labels: { [key: string]: string };
}
