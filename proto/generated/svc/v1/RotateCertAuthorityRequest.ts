// Original file: svc/v1/auth.proto

import type { Long } from "@grpc/proto-loader";

export interface RotateCertAuthorityRequest {
  type?: string;
  phase?: string;
  mode?: string;
  grace_period_seconds?: number | string | Long;
  force?: boolean;
}

export interface RotateCertAuthorityRequest__Output {
  type: string;
  phase: string;
  mode: string;
  grace_period_seconds: number;
  force: boolean;
}
