// Original file: svc/v1/auth.proto

import type { Node as _svc_v1_Node, Node__Output as _svc_v1_Node__Output } from "../../svc/v1/Node.ts";

export interface ListNodesResponse {
  nodes?: _svc_v1_Node[];
  next_key?: string;
  total_count?: number;
}

export interface ListNodesResponse__Output {
  nodes: _svc_v1_Node__Output[];
  next_key: string;
  total_count: number;
}
