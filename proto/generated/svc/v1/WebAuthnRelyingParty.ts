// Original file: svc/v1/auth.proto

export interface WebAuthnRelyingParty {
  rp_id?: string;
  rp_name?: string;
  origin?: string;
}

export interface WebAuthnRelyingParty__Output {
  rp_id: string;
  rp_name: string;
  origin: string;
}
