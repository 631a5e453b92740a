// Original file: svc/v1/auth.proto

import type {
  WebAuthnRelyingParty as _svc_v1_WebAuthnRelyingParty,
  WebAuthnRelyingParty__Output as _svc_v1_WebAuthnRelyingParty__Output,
} from "../../svc/v1/WebAuthnRelyingParty.ts";

export interface FinishWebAuthnLoginRequest {
  challenge_id?: string;
  credential_json?: string;
  relying_party?: _svc_v1_WebAuthnRelyingParty | null;
  client_address?: string;
  sso_request_id?: string;
}

export interface FinishWebAuthnLoginRequest__Output {
  challenge_id: string;
  credential_json: string;
  relying_party: _svc_v1_WebAuthnRelyingParty__Output | null;
  client_address: string;
  sso_request_id: string;
}
