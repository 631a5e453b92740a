// The child's side of startHarnessProcess (process.ts), kept apart so a provider process loads
// nothing but what it serves.
import type { ControlRequest } from "./process.ts";

/**
 * The child's side: waits for its configuration, runs `start`, reports ready, then answers
 * control requests with `handle`. Exits when the parent goes away.
 */
export function serveHarnessProcess<C>(
  start: (config: C) => Promise<Record<string, unknown>>,
  handle: (op: string, args: unknown) => Promise<unknown>,
): void {
  if (process.send === undefined) throw new Error("run this file through startHarnessProcess");
  const send = (m: unknown): void => {
    process.send?.(m);
  };
  process.on("disconnect", () => process.exit(0));
  process.on("SIGTERM", () => process.exit(0));
  let started = false;
  process.on("message", (m: unknown) => {
    const msg = m as { type?: string; config?: C } & Partial<ControlRequest>;
    if (msg.type === "init" && !started) {
      started = true;
      start(msg.config as C).then(
        (ready) => send({ type: "ready", ready }),
        (err: unknown) => {
          send({ type: "failed", error: err instanceof Error ? err.stack : String(err) });
          setTimeout(() => process.exit(1), 100);
        },
      );
      return;
    }
    if (typeof msg.id !== "number" || typeof msg.op !== "string") return;
    const id = msg.id;
    handle(msg.op, msg.args).then(
      (result) => send({ id, ok: true, result }),
      (err: unknown) => send({ id, ok: false, error: err instanceof Error ? err.message : String(err) }),
    );
  });
}
