// Original file: svc/v1/auth.proto

export interface WebAuthnChallenge {
  challenge_id?: string;
  options_json?: string;
}

export interface WebAuthnChallenge__Output {
  challenge_id: string;
  options_json: string;
}
