// Original file: svc/v1/auth.proto

export interface CaKey {
  fingerprint?: string;
  role?: string;
  created_at?: string;
  public_key?: string;
}

export interface CaKey__Output {
  fingerprint: string;
  role: string;
  created_at: string;
  public_key: string;
}
