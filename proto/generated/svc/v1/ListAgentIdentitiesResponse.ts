// Original file: svc/v1/auth.proto

import type {
  AgentIdentityInfo as _svc_v1_AgentIdentityInfo,
  AgentIdentityInfo__Output as _svc_v1_AgentIdentityInfo__Output,
} from "../../svc/v1/AgentIdentityInfo.ts";

export interface ListAgentIdentitiesResponse {
  identities?: _svc_v1_AgentIdentityInfo[];
}

export interface ListAgentIdentitiesResponse__Output {
  identities: _svc_v1_AgentIdentityInfo__Output[];
}
