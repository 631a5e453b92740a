// Original file: svc/v1/auth.proto

export interface SessionEvent {
  position?: string;
  kind?: string;
  session_hash?: string;
  username?: string;
  role?: string;
  keepalive_seconds?: number;
}

export interface SessionEvent__Output {
  position: string;
  kind: string;
  session_hash: string;
  username: string;
  role: string;
  keepalive_seconds: number;
}
