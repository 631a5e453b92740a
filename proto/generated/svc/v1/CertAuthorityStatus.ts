// Original file: svc/v1/auth.proto

import type { CaKey as _svc_v1_CaKey, CaKey__Output as _svc_v1_CaKey__Output } from "../../svc/v1/CaKey.ts";
import type { Long } from "@grpc/proto-loader";

export interface CertAuthorityStatus {
  type?: string;
  phase?: string;
  mode?: string;
  phase_changed_at?: string;
  grace_period_seconds?: number | string | Long;
  next_phase_at?: string;
  keys?: _svc_v1_CaKey[];
  old_key_expires_at?: string;
}

export interface CertAuthorityStatus__Output {
  type: string;
  phase: string;
  mode: string;
  phase_changed_at: string;
  grace_period_seconds: number;
  next_phase_at: string;
  keys: _svc_v1_CaKey__Output[];
  old_key_expires_at: string;
}
