// Child process for test/backend-concurrency.test.ts: opens the backend named in argv[2], waits
// for "go", then runs N concurrent compare-and-swap increments on one key, retrying each on
// CompareFailedError, and reports every winning (expected revision -> new revision) pair.
import type { Backend } from "../core/backend/backend.ts";
import { PostgresBackend } from "../core/backend/postgres.ts";
import { SqliteBackend } from "../core/backend/sqlite.ts";
import { systemClock } from "../core/clock.ts";
import { CompareFailedError } from "../core/errors.ts";

export interface CasWorkerConfig {
  kind: "sqlite" | "postgres";
  /** file path (sqlite) or connection URL (postgres) */
  target: string;
  schema?: string;
  key: string;
  increments: number;
}

export interface CasWin {
  expected: number;
  next: number;
  value: number;
}

export type CasWorkerMessage =
  | { type: "ready" }
  | { type: "done"; wins: CasWin[]; conflicts: number }
  | { type: "error"; message: string };

const MAX_ATTEMPTS = 10_000;

const send = (m: CasWorkerMessage): Promise<void> =>
  new Promise((resolve, reject) => process.send?.(m, (err: Error | null) => (err ? reject(err) : resolve())));

async function open(cfg: CasWorkerConfig): Promise<Backend> {
  if (cfg.kind === "sqlite")
    return new SqliteBackend({ path: cfg.target, clock: systemClock, sweepIntervalMs: 0 });
  return PostgresBackend.open({
    connectionString: cfg.target,
    clock: systemClock,
    sweepIntervalMs: 0,
    poolSize: 10,
    ...(cfg.schema ? { schema: cfg.schema } : {}),
  });
}

async function main(): Promise<void> {
  const cfg = JSON.parse(process.argv[2] ?? "{}") as CasWorkerConfig;
  const backend = await open(cfg);
  let conflicts = 0;
  const incrementOnce = async (): Promise<CasWin> => {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const current = await backend.get(cfg.key);
      if (typeof current.value !== "number") throw new Error("counter is not a number");
      try {
        const next = await backend.compareAndSwap(cfg.key, current.revision, current.value + 1);
        return { expected: current.revision, next: next.revision, value: next.value as number };
      } catch (err) {
        if (!(err instanceof CompareFailedError)) throw err;
        conflicts++;
      }
    }
    throw new Error(`no win after ${MAX_ATTEMPTS} attempts`);
  };
  const go = new Promise<void>((resolve) => process.once("message", () => resolve()));
  await send({ type: "ready" });
  await go;
  try {
    const wins = await Promise.all(Array.from({ length: cfg.increments }, incrementOnce));
    await send({ type: "done", wins, conflicts });
  } finally {
    await backend.close();
  }
}

main().then(
  () => process.disconnect?.(),
  async (err: unknown) => {
    await send({
      type: "error",
      message: err instanceof Error ? (err.stack ?? err.message) : String(err),
    }).catch(() => {});
    process.exit(1);
  },
);
