// Original file: svc/v1/auth.proto

import type { Role as _svc_v1_Role, Role__Output as _svc_v1_Role__Output } from "../../svc/v1/Role.ts";
import type { Node as _svc_v1_Node, Node__Output as _svc_v1_Node__Output } from "../../svc/v1/Node.ts";
import type {
  InventoryUser as _svc_v1_InventoryUser,
  InventoryUser__Output as _svc_v1_InventoryUser__Output,
} from "../../svc/v1/InventoryUser.ts";

export interface InventoryEvent {
  kind?: string;
  roles?: _svc_v1_Role[];
  nodes?: _svc_v1_Node[];
  removed_node_ids?: string[];
  keepalive_seconds?: number;
  users?: _svc_v1_InventoryUser[];
  deleting_roles?: string[];
}

export interface InventoryEvent__Output {
  kind: string;
  roles: _svc_v1_Role__Output[];
  nodes: _svc_v1_Node__Output[];
  removed_node_ids: string[];
  keepalive_seconds: number;
  users: _svc_v1_InventoryUser__Output[];
  deleting_roles: string[];
}
