// Original file: svc/v1/auth.proto

import type { Long } from "@grpc/proto-loader";

export interface Node {
  id?: string;
  hostname?: string;
  addresses?: string[];
  labels?: { [key: string]: string };
  status?: string;
  last_heartbeat_unix_ms?: number | string | Long;
  version?: string;
  logins?: string[];
}

export interface Node__Output {
  id: string;
  hostname: string;
  addresses: string[];
  labels: { [key: string]: string };
  status: string;
  last_heartbeat_unix_ms: number;
  version: string;
  logins: string[];
}
