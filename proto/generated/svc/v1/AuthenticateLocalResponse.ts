// Original file: svc/v1/auth.proto

import type {
  SessionView as _svc_v1_SessionView,
  SessionView__Output as _svc_v1_SessionView__Output,
} from "../../svc/v1/SessionView.ts";
import type {
  MfaRequired as _svc_v1_MfaRequired,
  MfaRequired__Output as _svc_v1_MfaRequired__Output,
} from "../../svc/v1/MfaRequired.ts";

export interface AuthenticateLocalResponse {
  session?: _svc_v1_SessionView | null;
  mfa_required?: _svc_v1_MfaRequired | null;
  sso_cli_code?: string;
  sso_cli_redirect_url?: string;
  result?: "session" | "mfa_required";
}

export interface AuthenticateLocalResponse__Output {
  session?: _svc_v1_SessionView__Output | null;
  mfa_required?: _svc_v1_MfaRequired__Output | null;
  sso_cli_code: string;
  sso_cli_redirect_url: string;
  result?: "session" | "mfa_required";
}
