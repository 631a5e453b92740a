// Original file: svc/v1/auth.proto

import type {
  WebAuthnChallenge as _svc_v1_WebAuthnChallenge,
  WebAuthnChallenge__Output as _svc_v1_WebAuthnChallenge__Output,
} from "../../svc/v1/WebAuthnChallenge.ts";

export interface MfaRequired {
  mfa_token?: string;
  challenge?: _svc_v1_WebAuthnChallenge | null;
}

export interface MfaRequired__Output {
  mfa_token: string;
  challenge: _svc_v1_WebAuthnChallenge__Output | null;
}
