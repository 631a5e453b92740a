// Original file: svc/v1/auth.proto

import type { App as _svc_v1_App, App__Output as _svc_v1_App__Output } from "../../svc/v1/App.ts";
import type { Long } from "@grpc/proto-loader";

export interface CreateAppSessionResponse {
  code?: string;
  app?: _svc_v1_App | null;
  expires_unix_ms?: number | string | Long;
}

export interface CreateAppSessionResponse__Output {
  code: string;
  app: _svc_v1_App__Output | null;
  expires_unix_ms: number;
}
