// Original file: svc/v1/auth.proto

import type { Long } from "@grpc/proto-loader";

export interface AuthenticateSPIFFERequest {
  x509_svid_chain_pem?: string;
  ssh_public_key?: string;
  ttl_seconds?: number | string | Long;
  proof_signature?: Buffer | Uint8Array | string;
  proof_unix_ms?: number | string | Long;
}

export interface AuthenticateSPIFFERequest__Output {
  x509_svid_chain_pem: string;
  ssh_public_key: string;
  ttl_seconds: number;
  proof_signature: Buffer;
  proof_unix_ms: number;
}
