// Original file: svc/v1/auth.proto

export interface HeartbeatRequest {
  hostname?: string;
  addresses?: string[];
  labels?: { [key: string]: string };
  version?: string;
}

export interface HeartbeatRequest__Output {
  hostname: string;
  addresses: string[];
  labels: { [key: string]: string };
  version: string;
}
