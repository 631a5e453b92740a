// Original file: svc/v1/auth.proto

import type {
  TraitValues as _svc_v1_TraitValues,
  TraitValues__Output as _svc_v1_TraitValues__Output,
} from "../../svc/v1/TraitValues.ts";
import type {
  AppHeaderValue as _svc_v1_AppHeaderValue,
  AppHeaderValue__Output as _svc_v1_AppHeaderValue__Output,
} from "../../svc/v1/AppHeaderValue.ts";
import type { Long } from "@grpc/proto-loader";

export interface AppSessionGrant {
  session_id?: string;
  username?: string;
  roles?: string[];
  traits?: { [key: string]: _svc_v1_TraitValues };
  app_name?: string;
  app_uri?: string;
  public_addr?: string;
  insecure_skip_verify?: boolean;
  headers?: _svc_v1_AppHeaderValue[];
  redirect_hosts?: string[];
  expires_unix_ms?: number | string | Long;
  assertion?: string;
  assertion_expires_unix_ms?: number | string | Long;
  web_session_hash?: string;
}

export interface AppSessionGrant__Output {
  session_id: string;
  username: string;
  roles: string[];
  traits: { [key: string]: _svc_v1_TraitValues__Output };
  app_name: string;
  app_uri: string;
  public_addr: string;
  insecure_skip_verify: boolean;
  headers: _svc_v1_AppHeaderValue__Output[];
  redirect_hosts: string[];
  expires_unix_ms: number;
  assertion: string;
  assertion_expires_unix_ms: number;
  web_session_hash: string;
}
