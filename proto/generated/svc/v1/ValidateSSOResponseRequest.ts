// Original file: svc/v1/auth.proto

import type {
  WebAuthnRelyingParty as _svc_v1_WebAuthnRelyingParty,
  WebAuthnRelyingParty__Output as _svc_v1_WebAuthnRelyingParty__Output,
} from "../../svc/v1/WebAuthnRelyingParty.ts";

export interface ValidateSSOResponseRequest {
  callback_query?: string;
  saml_response?: string;
  relay_state?: string;
  browser_binding_hash?: string;
  client_address?: string;
  relying_party?: _svc_v1_WebAuthnRelyingParty | null;
}

export interface ValidateSSOResponseRequest__Output {
  callback_query: string;
  saml_response: string;
  relay_state: string;
  browser_binding_hash: string;
  client_address: string;
  relying_party: _svc_v1_WebAuthnRelyingParty__Output | null;
}
