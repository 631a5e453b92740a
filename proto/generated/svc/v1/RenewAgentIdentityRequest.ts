// Original file: svc/v1/auth.proto

import type { Long } from "@grpc/proto-loader";

export interface RenewAgentIdentityRequest {
  name?: string;
  renewal_token?: string;
  generation?: number | string | Long;
  ssh_public_key?: string;
  tls_public_key_pem?: string;
}

export interface RenewAgentIdentityRequest__Output {
  name: string;
  renewal_token: string;
  generation: number;
  ssh_public_key: string;
  tls_public_key_pem: string;
}
