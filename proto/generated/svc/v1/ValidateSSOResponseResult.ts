// Original file: svc/v1/auth.proto

import type {
  AuthenticateLocalResponse as _svc_v1_AuthenticateLocalResponse,
  AuthenticateLocalResponse__Output as _svc_v1_AuthenticateLocalResponse__Output,
} from "../../svc/v1/AuthenticateLocalResponse.ts";

export interface ValidateSSOResponseResult {
  login?: _svc_v1_AuthenticateLocalResponse | null;
  username?: string;
  client_redirect_url?: string;
  cli?: boolean;
  cli_code?: string;
  request_id?: string;
}

export interface ValidateSSOResponseResult__Output {
  login: _svc_v1_AuthenticateLocalResponse__Output | null;
  username: string;
  client_redirect_url: string;
  cli: boolean;
  cli_code: string;
  request_id: string;
}
