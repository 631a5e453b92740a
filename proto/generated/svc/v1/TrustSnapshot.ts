// Original file: svc/v1/auth.proto

import type { Lock as _svc_v1_Lock, Lock__Output as _svc_v1_Lock__Output } from "../../svc/v1/Lock.ts";
import type {
  PublicKeys as _svc_v1_PublicKeys,
  PublicKeys__Output as _svc_v1_PublicKeys__Output,
} from "../../svc/v1/PublicKeys.ts";
import type {
  CertAuthorityStatus as _svc_v1_CertAuthorityStatus,
  CertAuthorityStatus__Output as _svc_v1_CertAuthorityStatus__Output,
} from "../../svc/v1/CertAuthorityStatus.ts";

export interface TrustSnapshot {
  locks?: _svc_v1_Lock[];
  public_keys?: _svc_v1_PublicKeys | null;
  authorities?: _svc_v1_CertAuthorityStatus[];
  digest?: string;
  generated_at?: string;
  keepalive_seconds?: number;
}

export interface TrustSnapshot__Output {
  locks: _svc_v1_Lock__Output[];
  public_keys: _svc_v1_PublicKeys__Output | null;
  authorities: _svc_v1_CertAuthorityStatus__Output[];
  digest: string;
  generated_at: string;
  keepalive_seconds: number;
}
