// Original file: svc/v1/auth.proto

import type {
  LockTarget as _svc_v1_LockTarget,
  LockTarget__Output as _svc_v1_LockTarget__Output,
} from "../../svc/v1/LockTarget.ts";
import type { Long } from "@grpc/proto-loader";

export interface CreateLockRequest {
  name?: string;
  target?: _svc_v1_LockTarget | null;
  message?: string;
  expires?: string;
  ttl_seconds?: number | string | Long;
}

export interface CreateLockRequest__Output {
  name: string;
  target: _svc_v1_LockTarget__Output | null;
  message: string;
  expires: string;
  ttl_seconds: number;
}
