// Audit appends are committed in groups (audit-batcher.ts): every caller still gets its own
// committed event, settled only after its COMMIT; a lone append commits at the next turn, concurrent
// ones share a commit over a window or up to a cap; a failed commit rejects every event in it;
// nothing accepted is dropped at close, and nothing is accepted after.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { systemClock } from "../clock.ts";
import { UnavailableError } from "../errors.ts";
import { SqliteBackend, type SqliteBackendOptions } from "./sqlite.ts";

describe("SqliteBackend audit batching", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "svc-audit-batch-"));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const event = (i: number) => ({ event_type: "test.batch", user_name: `u${i}`, fields: { i } });

  it("gives each of many same-turn appends its own committed, ordered event", async () => {
    const b = new SqliteBackend({ path: join(dir, "s.db"), clock: systemClock, sweepIntervalMs: 0 });
    try {
      const events = await Promise.all(Array.from({ length: 50 }, (_v, i) => b.appendAudit(event(i))));
      const ids = events.map((e) => Number(e.id));
      expect(new Set(ids).size).toBe(50);
      expect(ids).toEqual([...ids].sort((x, y) => x - y));
      expect(events.map((e) => e.user_name)).toEqual(events.map((_e, i) => `u${i}`));
      const page = await b.searchAudit({ type: "test.batch", limit: 500, offset: 0 });
      expect(page.totalCount).toBe(50);
    } finally {
      await b.close();
    }
  });

  it("commits appends still queued when the backend closes, and refuses appends after", async () => {
    const path = join(dir, "s.db");
    const b = new SqliteBackend({ path, clock: systemClock, sweepIntervalMs: 0 });
    const pending = [b.appendAudit(event(1)), b.appendAudit(event(2))];
    await b.close();
    await expect(Promise.all(pending)).resolves.toHaveLength(2);
    await expect(b.appendAudit(event(3))).rejects.toBeInstanceOf(UnavailableError);
    const again = new SqliteBackend({ path, clock: systemClock, sweepIntervalMs: 0 });
    try {
      const page = await again.searchAudit({ type: "test.batch", limit: 10, offset: 0 });
      expect(page.items.map((e) => e.user_name).sort()).toEqual(["u1", "u2"]);
    } finally {
      await again.close();
    }
  });

  it("rejects a bad event at once without holding up the others", async () => {
    const b = new SqliteBackend({ path: ":memory:", clock: systemClock, sweepIntervalMs: 0 });
    try {
      const good = b.appendAudit(event(1));
      await expect(b.appendAudit({ event_type: "", user_name: "x" })).rejects.toThrow(/event_type/);
      await expect(good).resolves.toMatchObject({ user_name: "u1" });
    } finally {
      await b.close();
    }
  });

  /** Rows another connection sees: what is committed. */
  const committed = (path: string): number => {
    const db = new DatabaseSync(path, { readOnly: true });
    try {
      return Number(db.prepare("SELECT count(*) AS n FROM audit_events").get()?.n);
    } finally {
      db.close();
    }
  };
  const open = (path: string, auditBatch: SqliteBackendOptions["auditBatch"]) =>
    new SqliteBackend({ path, clock: systemClock, sweepIntervalMs: 0, auditBatch });
  /** Marks when a promise has settled, without awaiting it. */
  const track = <T>(p: Promise<T>) => {
    const t = { settled: false, p };
    p.then(
      () => {
        t.settled = true;
      },
      () => {
        t.settled = true;
      },
    );
    return t;
  };

  it("commits a lone append at the end of its turn, however long the window", async () => {
    const b = open(join(dir, "s.db"), { windowMs: 600_000 });
    try {
      // One at a time: never put off (with a 10-minute window the test would time out).
      for (let i = 0; i < 3; i++) await b.appendAudit(event(i));
      expect(committed(join(dir, "s.db"))).toBe(3);
    } finally {
      await b.close();
    }
  });

  /** A and B in one turn, C in the next: does A's commit hold C? */
  const acrossTurns = async (path: string, auditBatch: SqliteBackendOptions["auditBatch"]) => {
    const b = open(path, auditBatch);
    try {
      let seenWithA = -1;
      const a = b.appendAudit(event(0)).then((e) => {
        seenWithA = committed(path);
        return e;
      });
      const rest = [b.appendAudit(event(1))];
      // Runs after this turn's commit check: C arrives in the next turn.
      await new Promise<void>((resolve) =>
        setImmediate(() => {
          rest.push(b.appendAudit(event(2)));
          resolve();
        }),
      );
      const events = await Promise.all([a, ...rest]);
      expect(events.map((e) => e.user_name)).toEqual(["u0", "u1", "u2"]);
      expect(committed(path)).toBe(3);
      return seenWithA;
    } finally {
      await b.close();
    }
  };

  it("puts a commit off by a turn while turns bring more events, within the window", async () => {
    // A turn with company (A, B) waits one more turn; C comes in it: one commit holds all three.
    expect(await acrossTurns(join(dir, "s.db"), { windowMs: 600_000 })).toBe(3);
  });

  it("with a window of 0, commits at the end of every turn as before", async () => {
    expect(await acrossTurns(join(dir, "s.db"), { windowMs: 0 })).toBe(2);
  });

  it("commits at once when the cap is reached", async () => {
    const path = join(dir, "s.db");
    const b = open(path, { windowMs: 600_000, maxBatch: 3 });
    try {
      const first = [0, 1].map((i) => track(b.appendAudit(event(i))));
      expect(committed(path)).toBe(0);
      // The third append commits all three in its own call, before the turn ends.
      const third = b.appendAudit(event(2));
      expect(committed(path)).toBe(3);
      await expect(Promise.all([...first.map((t) => t.p), third])).resolves.toHaveLength(3);
    } finally {
      await b.close();
    }
  });

  it("rejects every event of a failed commit, and commits later appends", async () => {
    const path = join(dir, "s.db");
    const b = new SqliteBackend({
      path,
      clock: systemClock,
      sweepIntervalMs: 0,
      busyTimeoutMs: 0,
      auditBatch: { windowMs: 600_000, maxBatch: 3 },
    });
    const other = new DatabaseSync(path);
    try {
      await Promise.all([b.appendAudit(event(0)), b.appendAudit(event(1))]);
      // Another connection holds the write lock: the group's commit fails (busy).
      other.exec("BEGIN IMMEDIATE");
      const group = [b.appendAudit(event(2)), b.appendAudit(event(3)), b.appendAudit(event(4))];
      const results = await Promise.allSettled(group);
      expect(results.map((r) => r.status)).toEqual(["rejected", "rejected", "rejected"]);
      for (const r of results) if (r.status === "rejected") expect(r.reason).toBeInstanceOf(UnavailableError);
      other.exec("ROLLBACK");
      expect(committed(path)).toBe(2);
      await expect(b.appendAudit(event(5))).resolves.toMatchObject({ user_name: "u5" });
      expect(committed(path)).toBe(3);
    } finally {
      other.close();
      await b.close();
    }
  });

  it("close() commits a group still put off", async () => {
    const path = join(dir, "s.db");
    const b = open(path, { windowMs: 600_000 });
    const held = [0, 1].map((i) => b.appendAudit(event(i)));
    // The turn's check saw company and put the commit off by a turn; close() commits it now.
    await new Promise<void>((resolve) => setImmediate(resolve));
    expect(committed(path)).toBe(0);
    await b.close();
    await expect(Promise.all(held)).resolves.toHaveLength(2);
    expect(committed(path)).toBe(2);
  });
});
