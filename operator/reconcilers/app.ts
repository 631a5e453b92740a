// App: valid → Ready=True; an unusable URI, a reserved rewrite header or a bad label value →
// Ready=False with that reason. No finalizer: auth and the proxy read the App themselves.
import type { ReconcileResult } from "../queue.ts";
import { checkResource, isDeleting, type ReconcileContext, writeStatus } from "./common.ts";

export async function reconcileApp(
  ctx: ReconcileContext,
  name: string,
): Promise<ReconcileResult | undefined> {
  const raw = await ctx.objects.get("App", name);
  if (!raw) return undefined;
  if (isDeleting(raw)) return undefined;
  const checked = checkResource("App", raw);
  await writeStatus(
    ctx,
    "App",
    raw,
    checked.ok
      ? { status: "True", reason: "Valid", message: "the app is valid and reachable through the proxy" }
      : checked.state,
  );
  return undefined;
}
