// Puts with `batch` (WriteOptions) are committed in groups, as audit appends are: every caller
// gets its own item with its own revision, settled only after the COMMIT that holds it; a failed
// commit rejects every put in it and stores none of them; what was accepted is committed at
// close, nothing is accepted after; a put without `batch` is written at once, as before.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { systemClock } from "../clock.ts";
import { NotFoundError, UnavailableError } from "../errors.ts";
import { SqliteBackend } from "./sqlite.ts";

describe("SqliteBackend batched puts", () => {
  let dir: string;
  let path: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "svc-put-batch-"));
    path = join(dir, "s.db");
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  /** Keys another connection sees under nodes/: what is committed. */
  const committed = (): number => {
    const db = new DatabaseSync(path, { readOnly: true });
    try {
      return Number(db.prepare("SELECT count(*) AS n FROM items WHERE key LIKE 'nodes/%'").get()?.n);
    } finally {
      db.close();
    }
  };
  const open = (o: { busyTimeoutMs?: number } = {}) =>
    new SqliteBackend({ path, clock: systemClock, sweepIntervalMs: 0, ...o });

  it("gives each same-turn put its own committed item and revision, in one commit", async () => {
    const b = open();
    try {
      const puts = Array.from({ length: 40 }, (_v, i) => b.put(`nodes/n${i}`, { i }, { batch: true }));
      // Nothing is committed within the turn that queued them.
      expect(committed()).toBe(0);
      const items = await Promise.all(puts);
      expect(committed()).toBe(40);
      const revs = items.map((it) => it.revision);
      expect(new Set(revs).size).toBe(40);
      expect(revs).toEqual([...revs].sort((x, y) => x - y));
      expect(items.map((it) => it.value)).toEqual(items.map((_it, i) => ({ i })));
      expect((await b.get("nodes/n7")).value).toEqual({ i: 7 });
      // A later put of the same key in the same batch wins, as in order.
      const [first, second] = await Promise.all([
        b.put("nodes/same", { v: 1 }, { batch: true, ttlMs: 60_000 }),
        b.put("nodes/same", { v: 2 }, { batch: true, ttlMs: 60_000 }),
      ]);
      expect((second?.revision ?? 0) > (first?.revision ?? 0)).toBe(true);
      expect((await b.get("nodes/same")).value).toEqual({ v: 2 });
    } finally {
      await b.close();
    }
  });

  it("rejects every put of a failed commit and stores none; later puts commit", async () => {
    const b = open({ busyTimeoutMs: 0 });
    const other = new DatabaseSync(path);
    try {
      await b.put("nodes/before", { ok: true }, { batch: true });
      // Another connection holds the write lock: the group's commit fails (busy).
      other.exec("BEGIN IMMEDIATE");
      const group = ["a", "b", "c"].map((k) => b.put(`nodes/${k}`, { k }, { batch: true }));
      const results = await Promise.allSettled(group);
      expect(results.map((r) => r.status)).toEqual(["rejected", "rejected", "rejected"]);
      for (const r of results) if (r.status === "rejected") expect(r.reason).toBeInstanceOf(UnavailableError);
      other.exec("ROLLBACK");
      expect(committed()).toBe(1);
      await expect(b.get("nodes/a")).rejects.toBeInstanceOf(NotFoundError);
      await expect(b.put("nodes/a", { k: "a" }, { batch: true })).resolves.toMatchObject({ key: "nodes/a" });
      expect(committed()).toBe(2);
    } finally {
      other.close();
      await b.close();
    }
  });

  it("commits puts still queued when the backend closes, and refuses puts after", async () => {
    const b = open();
    const pending = [b.put("nodes/x", 1, { batch: true }), b.put("nodes/y", 2, { batch: true })];
    await b.close();
    await expect(Promise.all(pending)).resolves.toHaveLength(2);
    await expect(b.put("nodes/z", 3, { batch: true })).rejects.toBeInstanceOf(UnavailableError);
    expect(committed()).toBe(2);
  });

  it("a put without batch is committed before it returns to its turn", async () => {
    const b = open();
    try {
      const p = b.put("nodes/now", 1);
      expect(committed()).toBe(1);
      await p;
    } finally {
      await b.close();
    }
  });
});
