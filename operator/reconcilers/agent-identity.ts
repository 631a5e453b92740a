// AgentIdentity (a bot): valid when its spec is and every role it acts with exists. Its
// credential fields in status (current_generation, ...) belong to auth and are left as they are.
// No finalizer: auth refuses renewals for an identity that no longer exists.
import type { ReconcileResult } from "../queue.ts";
import { checkResource, isDeleting, type ReconcileContext, unknownRoles, writeStatus } from "./common.ts";

export async function reconcileAgentIdentity(
  ctx: ReconcileContext,
  name: string,
): Promise<ReconcileResult | undefined> {
  // get
  const raw = await ctx.objects.get("AgentIdentity", name);
  if (!raw) return undefined;
  // finalizer: none needed
  // delete path
  if (isDeleting(raw)) return undefined;
  // desired state
  const checked = checkResource("AgentIdentity", raw);
  const state = checked.ok
    ? (unknownRoles(ctx, checked.resource.spec.roles) ?? {
        status: "True" as const,
        reason: "Valid",
        message: "the agent identity is valid",
      })
    : checked.state;
  // status
  await writeStatus(ctx, "AgentIdentity", raw, state);
  return undefined;
}
