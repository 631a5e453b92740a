// Original file: svc/v1/auth.proto

import type { App as _svc_v1_App, App__Output as _svc_v1_App__Output } from "../../svc/v1/App.ts";

export interface ListAppsResponse {
  apps?: _svc_v1_App[];
}

export interface ListAppsResponse__Output {
  apps: _svc_v1_App__Output[];
}
