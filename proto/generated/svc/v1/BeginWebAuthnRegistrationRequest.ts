// Original file: svc/v1/auth.proto

import type {
  WebAuthnRelyingParty as _svc_v1_WebAuthnRelyingParty,
  WebAuthnRelyingParty__Output as _svc_v1_WebAuthnRelyingParty__Output,
} from "../../svc/v1/WebAuthnRelyingParty.ts";

export interface BeginWebAuthnRegistrationRequest {
  relying_party?: _svc_v1_WebAuthnRelyingParty | null;
}

export interface BeginWebAuthnRegistrationRequest__Output {
  relying_party: _svc_v1_WebAuthnRelyingParty__Output | null;
}
