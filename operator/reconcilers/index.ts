// One reconciler per kind.
import type { ResourceKind } from "../../core/resources/index.ts";
import { reconcileAgentIdentity } from "./agent-identity.ts";
import { reconcileApp } from "./app.ts";
import type { Reconciler } from "./common.ts";
import { reconcileConnector } from "./connector.ts";
import { reconcileJoinToken } from "./join-token.ts";
import { reconcileLock } from "./lock.ts";
import { reconcileRole } from "./role.ts";
import { reconcileUser } from "./user.ts";

export const reconcilers: { readonly [K in ResourceKind]: Reconciler } = {
  Role: reconcileRole,
  User: reconcileUser,
  Connector: reconcileConnector,
  JoinToken: reconcileJoinToken,
  AgentIdentity: reconcileAgentIdentity,
  Lock: reconcileLock,
  App: reconcileApp,
};

export type { ReconcileContext, Reconciler } from "./common.ts";
export { REVOKE_SESSIONS_FINALIZER } from "./user.ts";
