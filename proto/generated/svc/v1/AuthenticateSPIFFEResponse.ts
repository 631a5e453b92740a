// Original file: svc/v1/auth.proto

import type { Long } from "@grpc/proto-loader";

export interface AuthenticateSPIFFEResponse {
  ssh_certificate?: string;
  spiffe_id?: string;
  role?: string;
  valid_before_unix_ms?: number | string | Long;
}

export interface AuthenticateSPIFFEResponse__Output {
  ssh_certificate: string;
  spiffe_id: string;
  role: string;
  valid_before_unix_ms: number;
}
