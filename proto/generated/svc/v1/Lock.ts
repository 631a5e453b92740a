// Original file: svc/v1/auth.proto

import type {
  LockTarget as _svc_v1_LockTarget,
  LockTarget__Output as _svc_v1_LockTarget__Output,
} from "../../svc/v1/LockTarget.ts";

export interface Lock {
  name?: string;
  target?: _svc_v1_LockTarget | null;
  message?: string;
  expires?: string;
  created_by?: string;
  created_at?: string;
}

export interface Lock__Output {
  name: string;
  target: _svc_v1_LockTarget__Output | null;
  message: string;
  expires: string;
  created_by: string;
  created_at: string;
}
