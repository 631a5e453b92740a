// Original file: svc/v1/auth.proto

import type { Long } from "@grpc/proto-loader";

export interface SSOAuthRequest {
  request_id?: string;
  redirect_url?: string;
  expires_unix_ms?: number | string | Long;
  connector_type?: string;
}

export interface SSOAuthRequest__Output {
  request_id: string;
  redirect_url: string;
  expires_unix_ms: number;
  connector_type: string;
}
