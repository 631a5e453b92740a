// Original file: svc/v1/auth.proto

export interface LockTarget {
  user?: string;
  role?: string;
  bot?: string;
  node?: string;
  key_id?: string;
}

export interface LockTarget__Output {
  user: string;
  role: string;
  bot: string;
  node: string;
  key_id: string;
}
