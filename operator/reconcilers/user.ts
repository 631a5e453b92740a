// User: Ready=False UnknownRole when a role it names does not exist. Deleting a User revokes its
// sessions through auth before the object goes: the finalizer holds the object until that worked
// (a failure is retried by the queue). Without a SessionRevoker the finalizer is not added, so no
// User is ever stuck in deletion.
import type { ReconcileResult } from "../queue.ts";
import {
  addFinalizer,
  checkResource,
  hasFinalizer,
  isDeleting,
  type ReconcileContext,
  removeFinalizer,
  unknownRoles,
  writeStatus,
} from "./common.ts";

export const REVOKE_SESSIONS_FINALIZER = "svc.dev/revoke-sessions";

export async function reconcileUser(
  ctx: ReconcileContext,
  name: string,
): Promise<ReconcileResult | undefined> {
  // get
  const raw = await ctx.objects.get("User", name);
  if (!raw) return undefined;
  // finalizer
  if (!isDeleting(raw) && ctx.sessionRevoker && !hasFinalizer(raw, REVOKE_SESSIONS_FINALIZER)) {
    await addFinalizer(ctx, "User", raw, REVOKE_SESSIONS_FINALIZER);
    return undefined; // the update event brings the object back with its finalizer
  }
  // delete path
  if (isDeleting(raw)) {
    if (!hasFinalizer(raw, REVOKE_SESSIONS_FINALIZER)) return undefined;
    if (ctx.sessionRevoker) {
      await ctx.sessionRevoker.revokeUserSessions(name);
      await ctx.events.record("User", raw, "Normal", "SessionsRevoked", `sessions of user "${name}" revoked`);
    } else {
      await ctx.events.record(
        "User",
        raw,
        "Warning",
        "SessionsNotRevoked",
        "no auth connection to revoke sessions",
      );
    }
    await removeFinalizer(ctx, "User", raw, REVOKE_SESSIONS_FINALIZER);
    return undefined;
  }
  // desired state
  const checked = checkResource("User", raw);
  const state = checked.ok
    ? (unknownRoles(ctx, checked.resource.spec.roles) ?? {
        status: "True" as const,
        reason: checked.resource.spec.disabled ? "Disabled" : "Valid",
        message: checked.resource.spec.disabled ? "the user is valid but disabled" : "the user is valid",
      })
    : checked.state;
  // status
  await writeStatus(ctx, "User", raw, state);
  return undefined;
}
