// Connector: valid only when its roles exist and its client secret reference resolves: a Secret
// that is missing (SecretNotFound) or lacks the key (SecretKeyNotFound) makes it Ready=False. The
// operator does not watch Secrets (reading every Secret would need list/watch on all of them), so
// a missing one is looked at again after ctx.recheckMs. A file reference lives in auth's pod and is
// checked there. No finalizer: nothing outside the object to clean up.
import type { ReadyState } from "../conditions.ts";
import type { ReconcileResult } from "../queue.ts";
import { checkResource, isDeleting, type ReconcileContext, unknownRoles, writeStatus } from "./common.ts";

export async function reconcileConnector(
  ctx: ReconcileContext,
  name: string,
): Promise<ReconcileResult | undefined> {
  // get
  const raw = await ctx.objects.get("Connector", name);
  if (!raw) return undefined;
  // finalizer: none needed
  // delete path
  if (isDeleting(raw)) return undefined;
  // desired state
  const checked = checkResource("Connector", raw);
  let state: ReadyState = checked.ok
    ? { status: "True", reason: "Valid", message: "the connector is valid" }
    : checked.state;
  let recheck = false;
  if (checked.ok) {
    const spec = checked.resource.spec;
    const roles = (spec.claims_to_roles ?? []).flatMap((m) => m.roles);
    const ref = spec.client_secret_ref;
    const missingRole = unknownRoles(ctx, roles);
    if (missingRole) state = missingRole;
    else if (ref?.secret_name !== undefined && ref.key !== undefined) {
      const found = await ctx.objects.secretHasKey(ref.secret_name, ref.key);
      if (found !== "present") {
        recheck = true;
        state =
          found === "secret-missing"
            ? { status: "False", reason: "SecretNotFound", message: `Secret "${ref.secret_name}" not found` }
            : {
                status: "False",
                reason: "SecretKeyNotFound",
                message: `Secret "${ref.secret_name}" has no key "${ref.key}"`,
              };
      }
    }
  }
  // status
  await writeStatus(ctx, "Connector", raw, state);
  return recheck ? { requeueAfterMs: ctx.recheckMs } : undefined;
}
