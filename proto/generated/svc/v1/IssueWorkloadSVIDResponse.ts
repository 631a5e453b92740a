// Original file: svc/v1/auth.proto

import type { Long } from "@grpc/proto-loader";

export interface IssueWorkloadSVIDResponse {
  spiffe_id?: string;
  x509_svid_pem?: string;
  spiffe_ca_pems?: string[];
  jwt_svid?: string;
  expires_unix_ms?: number | string | Long;
}

export interface IssueWorkloadSVIDResponse__Output {
  spiffe_id: string;
  x509_svid_pem: string;
  spiffe_ca_pems: string[];
  jwt_svid: string;
  expires_unix_ms: number;
}
