// JoinToken: the phase says whether it can still be redeemed. Used (auth's redemption record, via
// TokenUsage) wins over Expired (the clock against spec.expires); otherwise Pending and Ready=True,
// and the token is looked at again when it is due to expire so the phase flips on time (and every
// recheck period for a redemption). No
// finalizer: auth reads the token itself and forgets its redemption record on its own.
import type { JoinTokenStatus } from "../../core/resources/index.ts";
import type { TokenRedemption } from "../auth-hooks.ts";
import type { ReadyState } from "../conditions.ts";
import type { ReconcileResult } from "../queue.ts";
import { checkResource, isDeleting, type ReconcileContext, writeStatus } from "./common.ts";

export async function reconcileJoinToken(
  ctx: ReconcileContext,
  name: string,
): Promise<ReconcileResult | undefined> {
  // get
  const raw = await ctx.objects.get("JoinToken", name);
  if (!raw) return undefined;
  // finalizer: none needed
  // delete path
  if (isDeleting(raw)) return undefined;
  // desired state
  const checked = checkResource("JoinToken", raw);
  if (!checked.ok) {
    await writeStatus(ctx, "JoinToken", raw, checked.state);
    return undefined;
  }
  const expiresAt = Date.parse(checked.resource.spec.expires);
  const now = ctx.clock.now().getTime();
  const used: TokenRedemption | undefined = await ctx.tokenUsage?.redemption(name);
  let state: ReadyState;
  let extra: Partial<JoinTokenStatus>;
  let requeueAfterMs: number | undefined;
  if (used) {
    state = { status: "False", reason: "Used", message: `redeemed by ${used.usedBy} at ${used.usedAt}` };
    extra = { phase: "Used", used: true, used_by: used.usedBy, used_at: used.usedAt };
  } else if (expiresAt <= now) {
    state = { status: "False", reason: "Expired", message: `expired at ${checked.resource.spec.expires}` };
    extra = { phase: "Expired", used: false };
  } else {
    state = {
      status: "True",
      reason: "Pending",
      message: `can be redeemed until ${checked.resource.spec.expires}`,
    };
    extra = { phase: "Pending", used: false };
    // Look again when it expires, and, since a redemption happens in auth without any watch event
    // here, every recheck period while auth can tell us about redemptions.
    requeueAfterMs = expiresAt - now + 1_000;
    if (ctx.tokenUsage) requeueAfterMs = Math.min(requeueAfterMs, ctx.recheckMs);
  }
  // status
  await writeStatus(ctx, "JoinToken", raw, state, extra);
  return requeueAfterMs !== undefined ? { requeueAfterMs } : undefined;
}
