// The SQLite backend against the shared conformance suite (in memory and on a WAL file), plus
// what only a file-backed database has: reopening, migrations, and the periodic sweeper.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backendConformance } from "../core/backend/conformance.ts";
import { openBackend } from "../core/backend/index.ts";
import { SqliteBackend } from "../core/backend/sqlite.ts";
import { sqliteMigrations } from "../core/backend/sqlite-schema.ts";
import { ManualClock } from "../core/clock.ts";
import { BadParameterError, UnavailableError } from "../core/errors.ts";

let dir = "";
let seq = 0;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "svc-sqlite-test-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

backendConformance("sqlite :memory:", async (clock) => ({
  backend: new SqliteBackend({ path: ":memory:", clock, sweepIntervalMs: 0 }),
}));

backendConformance("sqlite file", async (clock) => ({
  backend: new SqliteBackend({ path: join(dir, `conf-${++seq}.db`), clock, sweepIntervalMs: 0 }),
}));

describe("sqlite file specifics", () => {
  it("keeps items, audit and the revision sequence across a reopen", async () => {
    const path = join(dir, "reopen.db");
    const clock = new ManualClock();
    const first = new SqliteBackend({ path, clock, sweepIntervalMs: 0 });
    const a = await first.put("/k", { n: 1 });
    await first.appendAudit({ event_type: "t", user_name: "u" });
    await first.close();
    const second = new SqliteBackend({ path, clock, sweepIntervalMs: 0 });
    try {
      expect(await second.get("/k")).toEqual(a);
      expect((await second.searchAudit({ limit: 10, offset: 0 })).totalCount).toBe(1);
      const b = await second.put("/other", 1);
      expect(b.revision).toBeGreaterThan(a.revision);
    } finally {
      await second.close();
    }
  });

  it("uses WAL and records the applied migrations in user_version", async () => {
    const path = join(dir, "pragmas.db");
    const backend = new SqliteBackend({ path, clock: new ManualClock(), sweepIntervalMs: 0 });
    await backend.close();
    const raw = new DatabaseSync(path);
    try {
      expect(raw.prepare("PRAGMA journal_mode").get()?.journal_mode).toBe("wal");
      expect(raw.prepare("PRAGMA user_version").get()?.user_version).toBe(sqliteMigrations.length);
    } finally {
      raw.close();
    }
  });

  it("the periodic sweeper physically removes expired rows", async () => {
    const path = join(dir, "sweeper.db");
    const clock = new ManualClock();
    const backend = new SqliteBackend({ path, clock, sweepIntervalMs: 20 });
    const raw = new DatabaseSync(path);
    try {
      await backend.put("/gone", 1, { ttlMs: 1_000 });
      await backend.put("/stays", 1);
      const count = (): unknown => raw.prepare("SELECT count(*) AS n FROM items").get()?.n;
      expect(count()).toBe(2);
      clock.advance(1_000);
      const deadline = Date.now() + 20_000;
      while (count() !== 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(count()).toBe(1);
      expect((await backend.get("/stays")).value).toBe(1);
    } finally {
      raw.close();
      await backend.close();
    }
  });

  it("a writer that outwaits busy_timeout gets UnavailableError, then succeeds once the lock is gone", async () => {
    const path = join(dir, "busy.db");
    const backend = new SqliteBackend({
      path,
      clock: new ManualClock(),
      sweepIntervalMs: 0,
      busyTimeoutMs: 50,
    });
    const other = new DatabaseSync(path);
    try {
      other.exec("BEGIN IMMEDIATE");
      await expect(backend.put("/k", 1)).rejects.toBeInstanceOf(UnavailableError);
      other.exec("ROLLBACK");
      expect((await backend.put("/k", 1)).value).toBe(1);
    } finally {
      other.close();
      await backend.close();
    }
  });

  it("openBackend opens SQLite from configuration and refuses an unknown type", async () => {
    const backend = await openBackend(
      { type: "sqlite", path: join(dir, "config.db") },
      { clock: new ManualClock() },
    );
    try {
      expect(backend).toBeInstanceOf(SqliteBackend);
      expect((await backend.put("/k", "v")).value).toBe("v");
    } finally {
      await backend.close();
    }
    await expect(
      openBackend({ type: "etcd" } as unknown as Parameters<typeof openBackend>[0], {
        clock: new ManualClock(),
      }),
    ).rejects.toBeInstanceOf(BadParameterError);
  });
});
