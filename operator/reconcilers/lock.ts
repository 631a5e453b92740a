// Lock: Ready while its spec is valid and it has not expired. Auth enforces Locks straight from its
// resource source and removes expired ones itself; the operator only reports the state.
import type { ReconcileResult } from "../queue.ts";
import { checkResource, isDeleting, type ReconcileContext, writeStatus } from "./common.ts";

export async function reconcileLock(
  ctx: ReconcileContext,
  name: string,
): Promise<ReconcileResult | undefined> {
  const raw = await ctx.objects.get("Lock", name);
  if (!raw) return undefined;
  if (isDeleting(raw)) return undefined;
  const checked = checkResource("Lock", raw);
  if (!checked.ok) {
    await writeStatus(ctx, "Lock", raw, checked.state);
    return undefined;
  }
  const expires = checked.resource.spec.expires;
  const left = expires === undefined ? undefined : Date.parse(expires) - ctx.clock.now().getTime();
  const expired = left !== undefined && left <= 0;
  await writeStatus(
    ctx,
    "Lock",
    raw,
    expired
      ? { status: "False", reason: "Expired", message: `the lock expired at ${expires}` }
      : { status: "True", reason: "InForce", message: "the lock is in force" },
  );
  // Look again when it expires, so Ready turns False then.
  return left !== undefined && left > 0 ? { requeueAfterMs: left + 1000 } : undefined;
}
