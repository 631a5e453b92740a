// Original file: svc/v1/auth.proto

import type {
  TunnelLocation as _svc_v1_TunnelLocation,
  TunnelLocation__Output as _svc_v1_TunnelLocation__Output,
} from "../../svc/v1/TunnelLocation.ts";
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
  tunnel?: _svc_v1_TunnelLocation | null;
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
  tunnel: _svc_v1_TunnelLocation__Output | null;
}
