// Original file: svc/v1/auth.proto

import type {
  JoinTokenInfo as _svc_v1_JoinTokenInfo,
  JoinTokenInfo__Output as _svc_v1_JoinTokenInfo__Output,
} from "../../svc/v1/JoinTokenInfo.ts";

export interface ListJoinTokensResponse {
  tokens?: _svc_v1_JoinTokenInfo[];
}

export interface ListJoinTokensResponse__Output {
  tokens: _svc_v1_JoinTokenInfo__Output[];
}
