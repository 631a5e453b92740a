// Original file: svc/v1/auth.proto

import type {
  RegisterAgentRequest as _svc_v1_RegisterAgentRequest,
  RegisterAgentRequest__Output as _svc_v1_RegisterAgentRequest__Output,
} from "../../svc/v1/RegisterAgentRequest.ts";
import type {
  SignedStsRequest as _svc_v1_SignedStsRequest,
  SignedStsRequest__Output as _svc_v1_SignedStsRequest__Output,
} from "../../svc/v1/SignedStsRequest.ts";

export interface RegisterUsingIAMMethodRequest {
  init?: _svc_v1_RegisterAgentRequest | null;
  proof?: _svc_v1_SignedStsRequest | null;
  step?: "init" | "proof";
}

export interface RegisterUsingIAMMethodRequest__Output {
  init?: _svc_v1_RegisterAgentRequest__Output | null;
  proof?: _svc_v1_SignedStsRequest__Output | null;
  step?: "init" | "proof";
}
