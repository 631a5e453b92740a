// Original file: svc/v1/auth.proto

import type { Role as _svc_v1_Role, Role__Output as _svc_v1_Role__Output } from "../../svc/v1/Role.ts";

export interface ListRolesResponse {
  roles?: _svc_v1_Role[];
}

export interface ListRolesResponse__Output {
  roles: _svc_v1_Role__Output[];
}
