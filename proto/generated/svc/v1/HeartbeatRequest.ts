// Original file: svc/v1/auth.proto

import type {
  TunnelLocation as _svc_v1_TunnelLocation,
  TunnelLocation__Output as _svc_v1_TunnelLocation__Output,
} from "../../svc/v1/TunnelLocation.ts";

export interface HeartbeatRequest {
  hostname?: string;
  addresses?: string[];
  labels?: { [key: string]: string };
  version?: string;
  tunnel?: _svc_v1_TunnelLocation | null;
}

export interface HeartbeatRequest__Output {
  hostname: string;
  addresses: string[];
  labels: { [key: string]: string };
  version: string;
  tunnel: _svc_v1_TunnelLocation__Output | null;
}
