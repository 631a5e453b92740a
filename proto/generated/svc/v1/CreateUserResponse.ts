// Original file: svc/v1/auth.proto

import type { User as _svc_v1_User, User__Output as _svc_v1_User__Output } from "../../svc/v1/User.ts";
import type {
  PasswordResetToken as _svc_v1_PasswordResetToken,
  PasswordResetToken__Output as _svc_v1_PasswordResetToken__Output,
} from "../../svc/v1/PasswordResetToken.ts";

export interface CreateUserResponse {
  user?: _svc_v1_User | null;
  reset?: _svc_v1_PasswordResetToken | null;
}

export interface CreateUserResponse__Output {
  user: _svc_v1_User__Output | null;
  reset: _svc_v1_PasswordResetToken__Output | null;
}
