// Original file: svc/v1/auth.proto

import type { Long } from "@grpc/proto-loader";

export interface IssueUserCertsResponse {
  ssh_certificate?: string;
  principals?: string[];
  key_id?: string;
  valid_after_unix_ms?: number | string | Long;
  valid_before_unix_ms?: number | string | Long;
  host_ca_ssh_public_keys?: string[];
}

export interface IssueUserCertsResponse__Output {
  ssh_certificate: string;
  principals: string[];
  key_id: string;
  valid_after_unix_ms: number;
  valid_before_unix_ms: number;
  host_ca_ssh_public_keys: string[];
}
