// Original file: svc/v1/auth.proto

import type { Node as _svc_v1_Node, Node__Output as _svc_v1_Node__Output } from "../../svc/v1/Node.ts";

export interface ListNodesResponse {
  nodes?: _svc_v1_Node[];
}

export interface ListNodesResponse__Output {
  nodes: _svc_v1_Node__Output[];
}
