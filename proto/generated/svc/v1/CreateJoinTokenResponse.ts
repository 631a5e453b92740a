// Original file: svc/v1/auth.proto

import type {
  JoinTokenInfo as _svc_v1_JoinTokenInfo,
  JoinTokenInfo__Output as _svc_v1_JoinTokenInfo__Output,
} from "../../svc/v1/JoinTokenInfo.ts";

export interface CreateJoinTokenResponse {
  info?: _svc_v1_JoinTokenInfo | null;
  token?: string;
}

export interface CreateJoinTokenResponse__Output {
  info: _svc_v1_JoinTokenInfo__Output | null;
  token: string;
}
