// Original file: svc/v1/auth.proto

export interface HeartbeatResponse {
  interval_seconds?: number;
}

export interface HeartbeatResponse__Output {
  interval_seconds: number;
}
