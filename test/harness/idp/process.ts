// Runs a test identity provider as its own Node process and talks to it over the IPC channel:
// the parent sends its configuration, waits for "ready", then sends control requests (rotate
// keys, misbehave) and gets one answer per request. The child exits when the channel closes
// (the parent stopped or died); a watchdog also kills it if the test worker is SIGKILLed.
import { type ChildProcess, fork } from "node:child_process";
import { watchdog } from "../kube.ts";

/** Parent → child: one request; child → parent: its answer with the same id. */
export interface ControlRequest {
  id: number;
  op: string;
  args?: unknown;
}
export interface ControlAnswer {
  id: number;
  ok: boolean;
  result?: unknown;
  error?: string;
}

export interface HarnessProcess {
  /** What the child reported when it was ready (its URL etc.). */
  ready: Record<string, unknown>;
  /** the provider process's id */
  pid: number;
  control(op: string, args?: unknown): Promise<unknown>;
  stop(): Promise<void>;
}

const START_TIMEOUT_MS = 30_000;

/** Starts `entry` (a TypeScript file run by Node directly) with `config`; resolves when it is ready. */
export async function startHarnessProcess(entry: string, config: unknown): Promise<HarnessProcess> {
  const child: ChildProcess = fork(entry, [], {
    execPath: process.execPath,
    execArgv: [],
    stdio: ["ignore", "ignore", "pipe", "ipc"],
  });
  const guard = watchdog(child.pid ?? 0);
  let stderr = "";
  child.stderr?.on("data", (d: Buffer) => {
    stderr = (stderr + d.toString("utf8")).slice(-4000);
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  let nextId = 1;

  const ready = await new Promise<Record<string, unknown>>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${entry} not ready in time: ${stderr}`)),
      START_TIMEOUT_MS,
    );
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`${entry} exited (${code}) before it was ready: ${stderr}`));
    });
    child.on("message", (m: unknown) => {
      const msg = m as { type?: string; ready?: Record<string, unknown>; error?: string } & ControlAnswer;
      if (msg.type === "ready" && msg.ready) {
        clearTimeout(timer);
        resolve(msg.ready);
      } else if (msg.type === "failed") {
        clearTimeout(timer);
        reject(new Error(`${entry} failed to start: ${msg.error ?? ""} ${stderr}`));
      } else if (typeof msg.id === "number") {
        const p = pending.get(msg.id);
        pending.delete(msg.id);
        if (p === undefined) return;
        if (msg.ok) p.resolve(msg.result);
        else p.reject(new Error(msg.error ?? "control request failed"));
      }
    });
    child.send({ type: "init", config });
  }).catch(async (err: unknown) => {
    child.kill("SIGKILL");
    guard.kill("SIGKILL");
    await exited;
    throw err;
  });

  child.once("exit", () => {
    for (const p of pending.values()) p.reject(new Error(`${entry} exited: ${stderr}`));
    pending.clear();
  });

  return {
    ready,
    pid: child.pid ?? 0,
    control: (op, args) =>
      new Promise((resolve, reject) => {
        if (!child.connected) {
          reject(new Error(`${entry} is not running: ${stderr}`));
          return;
        }
        const id = nextId++;
        pending.set(id, { resolve, reject });
        child.send({ id, op, args } satisfies ControlRequest);
      }),
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill("SIGTERM");
        const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
        await exited;
        clearTimeout(timer);
      }
      guard.kill("SIGKILL");
    },
  };
}
