// Audit appends are committed in batches (one transaction per event-loop turn): every caller still
// gets its own committed event, nothing accepted is dropped at close, and nothing is accepted after.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { systemClock } from "../clock.ts";
import { UnavailableError } from "../errors.ts";
import { SqliteBackend } from "./sqlite.ts";

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
});
