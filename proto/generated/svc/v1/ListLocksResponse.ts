// Original file: svc/v1/auth.proto

import type { Lock as _svc_v1_Lock, Lock__Output as _svc_v1_Lock__Output } from "../../svc/v1/Lock.ts";

export interface ListLocksResponse {
  locks?: _svc_v1_Lock[];
}

export interface ListLocksResponse__Output {
  locks: _svc_v1_Lock__Output[];
}
