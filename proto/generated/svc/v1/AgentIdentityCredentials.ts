// Original file: svc/v1/auth.proto

import type { Long } from "@grpc/proto-loader";

export interface AgentIdentityCredentials {
  ssh_certificate?: string;
  tls_certificate_pem?: string;
  host_ca_pems?: string[];
  renewal_token?: string;
  generation?: number | string | Long;
  expires_unix_ms?: number | string | Long;
  host_ca_ssh_public_keys?: string[];
  principals?: string[];
  name?: string;
  renew_after_unix_ms?: number | string | Long;
}

export interface AgentIdentityCredentials__Output {
  ssh_certificate: string;
  tls_certificate_pem: string;
  host_ca_pems: string[];
  renewal_token: string;
  generation: number;
  expires_unix_ms: number;
  host_ca_ssh_public_keys: string[];
  principals: string[];
  name: string;
  renew_after_unix_ms: number;
}
