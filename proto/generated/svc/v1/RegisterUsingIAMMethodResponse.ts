// Original file: svc/v1/auth.proto

import type {
  RegisterAgentResponse as _svc_v1_RegisterAgentResponse,
  RegisterAgentResponse__Output as _svc_v1_RegisterAgentResponse__Output,
} from "../../svc/v1/RegisterAgentResponse.ts";

export interface RegisterUsingIAMMethodResponse {
  challenge?: string;
  credentials?: _svc_v1_RegisterAgentResponse | null;
  step?: "challenge" | "credentials";
}

export interface RegisterUsingIAMMethodResponse__Output {
  challenge?: string;
  credentials?: _svc_v1_RegisterAgentResponse__Output | null;
  step?: "challenge" | "credentials";
}
