// Role: valid → Ready=True; a regex that does not compile, an unknown trait in a login template or
// an unknown rule target → Ready=False with that reason. No finalizer: auth reads the Role itself,
// so nothing outside the object must be cleaned up when it goes.

import type { ReconcileResult } from "../queue.ts";
import { checkResource, isDeleting, type ReconcileContext, writeStatus } from "./common.ts";

export async function reconcileRole(
  ctx: ReconcileContext,
  name: string,
): Promise<ReconcileResult | undefined> {
  // get
  const raw = await ctx.objects.get("Role", name);
  if (!raw) return undefined;
  // finalizer: none needed (see above)
  // delete path
  if (isDeleting(raw)) return undefined;
  // desired state
  const checked = checkResource("Role", raw);
  // status
  await writeStatus(
    ctx,
    "Role",
    raw,
    checked.ok
      ? { status: "True", reason: "Valid", message: "the role is valid and in force" }
      : checked.state,
  );
  return undefined;
}
