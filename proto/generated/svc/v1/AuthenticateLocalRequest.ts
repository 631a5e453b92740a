// Original file: svc/v1/auth.proto

import type {
  WebAuthnRelyingParty as _svc_v1_WebAuthnRelyingParty,
  WebAuthnRelyingParty__Output as _svc_v1_WebAuthnRelyingParty__Output,
} from "../../svc/v1/WebAuthnRelyingParty.ts";

export interface AuthenticateLocalRequest {
  username?: string;
  password?: string;
  client_address?: string;
  webauthn?: _svc_v1_WebAuthnRelyingParty | null;
}

export interface AuthenticateLocalRequest__Output {
  username: string;
  password: string;
  client_address: string;
  webauthn: _svc_v1_WebAuthnRelyingParty__Output | null;
}
