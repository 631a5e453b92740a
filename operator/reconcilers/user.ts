// User: Ready=False UnknownRole when a role it names does not exist. Deleting a User revokes its
// sessions through auth before the object goes: the finalizer holds the object until that worked
// (a failure is retried by the queue, but only for so long: see giveUp). Without a SessionRevoker
// the finalizer is not added, so no User is ever stuck in deletion.
import type { RawObject } from "../kube.ts";
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

/**
 * Records one failed try of the finalizer work; once it has failed for finalizerTimeoutMs or
 * finalizerMaxTries times, returns the Event message saying what is skipped (else undefined).
 * Bounded so that uninstalling while auth is gone cannot leave Users stuck Terminating; skipping
 * is safe because auth itself drops a User's sessions when it sees the deletion begin.
 */
function giveUp(ctx: ReconcileContext, raw: RawObject, err: unknown): string | undefined {
  const key = raw.metadata?.uid ?? raw.metadata?.name ?? "";
  const now = ctx.clock.now().getTime();
  const seen = ctx.finalizerAttempts.get(key) ?? { firstFailureAt: now, tries: 0 };
  seen.tries++;
  ctx.finalizerAttempts.set(key, seen);
  const elapsedMs = now - seen.firstFailureAt;
  if (seen.tries < ctx.finalizerMaxTries && elapsedMs < ctx.finalizerTimeoutMs) return undefined;
  ctx.finalizerAttempts.delete(key);
  const reason = err instanceof Error ? err.message.split("\n")[0] : String(err);
  return (
    `gave up revoking the sessions of user "${raw.metadata?.name ?? ""}" after ${seen.tries} tries ` +
    `over ${Math.round(elapsedMs / 1000)} s (last error: ${reason}); finalizer removed without it: ` +
    "auth drops the sessions of a User being deleted once it sees the deletion"
  );
}

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
      try {
        await ctx.sessionRevoker.revokeUserSessions(name);
        ctx.finalizerAttempts.delete(raw.metadata?.uid ?? name);
        await ctx.events.record(
          "User",
          raw,
          "Normal",
          "SessionsRevoked",
          `sessions of user "${name}" revoked`,
        );
      } catch (err) {
        const gaveUp = giveUp(ctx, raw, err);
        if (!gaveUp) throw err; // the queue retries with backoff
        await ctx.events.record("User", raw, "Warning", "SessionsNotRevoked", gaveUp);
        ctx.onFinalizerSkipped?.("User", REVOKE_SESSIONS_FINALIZER);
        ctx.logger.warn({ user: name, finalizer: REVOKE_SESSIONS_FINALIZER }, gaveUp);
      }
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
