// Two OS processes x 50 concurrent compare-and-swap increments on one key: every revision must
// have exactly one winner (no expected revision wins twice, the wins form one unbroken chain)
// and the counter ends at 100. Run for SQLite (one file, two processes) and PostgreSQL.
import { type ChildProcess, fork } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Backend } from "../core/backend/backend.ts";
import { PostgresBackend } from "../core/backend/postgres.ts";
import { SqliteBackend } from "../core/backend/sqlite.ts";
import { systemClock } from "../core/clock.ts";
import type { CasWin, CasWorkerConfig, CasWorkerMessage } from "./backend-cas-worker.ts";
import { dropSchema, testPostgresUrl, uniqueSchemaName } from "./harness/postgres.ts";

const WORKER = join(import.meta.dirname, "backend-cas-worker.ts");
const PROCESSES = 2;
const INCREMENTS = 50;
const KEY = "/counters/shared";

const children: ChildProcess[] = [];

interface WorkerHandle {
  ready: Promise<void>;
  done: Promise<{ wins: CasWin[]; conflicts: number }>;
  go(): void;
}

function startWorker(cfg: CasWorkerConfig): WorkerHandle {
  const child = fork(WORKER, [JSON.stringify(cfg)], {
    execPath: process.execPath,
    execArgv: [],
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  children.push(child);
  let onReady: () => void = () => {};
  const ready = new Promise<void>((resolve) => {
    onReady = resolve;
  });
  const done = new Promise<{ wins: CasWin[]; conflicts: number }>((resolve, reject) => {
    child.on("message", (m: CasWorkerMessage) => {
      if (m.type === "ready") onReady();
      else if (m.type === "done") resolve({ wins: m.wins, conflicts: m.conflicts });
      else reject(new Error(`worker failed: ${m.message}`));
    });
    child.on("exit", (code) => reject(new Error(`worker exited with ${code} before reporting`)));
    child.on("error", reject);
  });
  // A worker that dies before "ready" must fail the wait for ready too.
  const readyOrDead = Promise.race([ready, done.then(() => {})]);
  return { ready: readyOrDead, done, go: () => child.send("go") };
}

async function runContest(backend: Backend, cfg: Omit<CasWorkerConfig, "key" | "increments">): Promise<void> {
  const start = await backend.create(KEY, 0);
  const workers = Array.from({ length: PROCESSES }, () =>
    startWorker({ ...cfg, key: KEY, increments: INCREMENTS }),
  );
  await Promise.all(workers.map((w) => w.ready));
  for (const w of workers) w.go();
  const results = await Promise.all(workers.map((w) => w.done));

  const wins = results.flatMap((r) => r.wins);
  for (const r of results) expect(r.wins).toHaveLength(INCREMENTS);
  // Exactly one winner per revision: no expected revision was won twice...
  const expected = wins.map((w) => w.expected);
  expect(new Set(expected).size).toBe(wins.length);
  // ...and the wins form one chain from the created revision, each building on the previous one.
  wins.sort((a, b) => a.expected - b.expected);
  let revision = start.revision;
  for (const [i, w] of wins.entries()) {
    expect(w.expected).toBe(revision);
    expect(w.value).toBe(i + 1);
    expect(w.next).toBeGreaterThan(w.expected);
    revision = w.next;
  }
  const final = await backend.get(KEY);
  expect(final.value).toBe(PROCESSES * INCREMENTS);
  expect(final.revision).toBe(revision);
}

afterAll(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
});

describe("compare-and-swap across two processes", () => {
  let dir = "";
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "svc-cas-"));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("sqlite: one file, exactly one winner per revision", { timeout: 180_000 }, async () => {
    const path = join(dir, "cas.db");
    const backend = new SqliteBackend({ path, clock: systemClock, sweepIntervalMs: 0 });
    try {
      await runContest(backend, { kind: "sqlite", target: path });
    } finally {
      await backend.close();
    }
  });

  it("postgres: one schema, exactly one winner per revision", { timeout: 180_000 }, async () => {
    const url = testPostgresUrl();
    const schema = uniqueSchemaName("cas");
    const backend = await PostgresBackend.open({ connectionString: url, clock: systemClock, schema });
    try {
      await runContest(backend, { kind: "postgres", target: url, schema });
    } finally {
      await backend.close();
      await dropSchema(url, schema);
    }
  });
});
