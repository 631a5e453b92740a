// Original file: svc/v1/auth.proto

import type {
  TraitValues as _svc_v1_TraitValues,
  TraitValues__Output as _svc_v1_TraitValues__Output,
} from "../../svc/v1/TraitValues.ts";
import type { Long } from "@grpc/proto-loader";

export interface User {
  name?: string;
  roles?: string[];
  traits?: { [key: string]: _svc_v1_TraitValues };
  webauthn_enrolled?: boolean;
  locked_until_unix_ms?: number | string | Long;
}

export interface User__Output {
  name: string;
  roles: string[];
  traits: { [key: string]: _svc_v1_TraitValues__Output };
  webauthn_enrolled: boolean;
  locked_until_unix_ms: number;
}
