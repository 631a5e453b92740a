// Original file: svc/v1/auth.proto

import type { User as _svc_v1_User, User__Output as _svc_v1_User__Output } from "../../svc/v1/User.ts";

export interface ListUsersResponse {
  users?: _svc_v1_User[];
}

export interface ListUsersResponse__Output {
  users: _svc_v1_User__Output[];
}
