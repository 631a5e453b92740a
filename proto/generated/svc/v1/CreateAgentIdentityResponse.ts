// Original file: svc/v1/auth.proto

import type {
  AgentIdentityInfo as _svc_v1_AgentIdentityInfo,
  AgentIdentityInfo__Output as _svc_v1_AgentIdentityInfo__Output,
} from "../../svc/v1/AgentIdentityInfo.ts";
import type { Long } from "@grpc/proto-loader";

export interface CreateAgentIdentityResponse {
  identity?: _svc_v1_AgentIdentityInfo | null;
  token?: string;
  token_expires_unix_ms?: number | string | Long;
}

export interface CreateAgentIdentityResponse__Output {
  identity: _svc_v1_AgentIdentityInfo__Output | null;
  token: string;
  token_expires_unix_ms: number;
}
