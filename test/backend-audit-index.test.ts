// Migration 3 (the audit index on type, user and time) upgrades a store an older release left at
// schema version 2 in place, on SQLite and on PostgreSQL: the index exists afterwards, the events
// written before are intact and found by a filtered search, and the search uses the index. Also
// the count cap of searchAudit (AUDIT_COUNT_CAP) on both.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Backend } from "../core/backend/backend.ts";
import { PostgresBackend } from "../core/backend/postgres.ts";
import { postgresMigrations } from "../core/backend/postgres-schema.ts";
import { SqliteBackend } from "../core/backend/sqlite.ts";
import { sqliteMigrations } from "../core/backend/sqlite-schema.ts";
import { AUDIT_COUNT_CAP } from "../core/backend/validate.ts";
import { ManualClock } from "../core/clock.ts";
import { createPostgresAtVersion, createSqliteAtVersion } from "./harness/backend-old-schema.ts";
import { dropSchema, testPostgresUrl, uniqueSchemaName } from "./harness/postgres.ts";

const INDEX = "audit_type_user_time";
const T0 = Date.UTC(2026, 0, 1);
const HOUR = 3_600_000;

/** 60 events an old release wrote: 3 types x 4 users, one hour apart. */
const OLD_EVENTS = Array.from({ length: 60 }, (_, i) => ({
  time: T0 + i * HOUR,
  type: ["user.login", "session.start", "exec"][i % 3] as string,
  user: `user${i % 4}`,
  success: i % 2 === 0,
  fields: JSON.stringify({ n: i }),
}));

/** What the old and the new store must both answer the same way. */
async function expectOldEventsFound(b: Backend): Promise<void> {
  const all = await b.searchAudit({ limit: 500, offset: 0 });
  expect(all.totalCount).toBe(60);
  expect(all.items.map((e) => e.fields["n"])).toEqual(Array.from({ length: 60 }, (_, i) => 59 - i));
  // type index 0 (i % 3 == 0) and user0 (i % 4 == 0): i = 0, 12, 24, 36, 48; the range keeps 12..36.
  const page = await b.searchAudit({
    type: "user.login",
    user: "user0",
    startTime: new Date(T0 + 12 * HOUR),
    endTime: new Date(T0 + 37 * HOUR),
    limit: 2,
    offset: 0,
  });
  expect(page.totalCount).toBe(3);
  expect(page.items.map((e) => [e.fields["n"], e.event_type, e.user_name, e.success])).toEqual([
    [36, "user.login", "user0", true],
    [24, "user.login", "user0", true],
  ]);
  expect(page.items[0]?.time.getTime()).toBe(T0 + 36 * HOUR);
}

/** AUDIT_COUNT_CAP + 60 events: 40 "rare" ones, the rest "busy", one a minute. */
const MANY = AUDIT_COUNT_CAP + 60;
const manyType = (i: number): string => (i % 253 === 0 ? "rare" : "busy");

/** The count stops at offset + AUDIT_COUNT_CAP; below it, it is exact. */
async function expectCappedCount(b: Backend): Promise<void> {
  const rare = Array.from({ length: MANY }, (_, i) => i).filter((i) => manyType(i) === "rare").length;
  const first = await b.searchAudit({ limit: 50, offset: 0 });
  expect(first.totalCount).toBe(AUDIT_COUNT_CAP);
  expect(first.items).toHaveLength(50);
  // Paging on past the cap: the count reaches further with the offset, exact once within reach.
  const later = await b.searchAudit({ limit: 50, offset: 100 });
  expect(later.totalCount).toBe(MANY);
  expect(later.items[0]?.fields["n"]).toBe(MANY - 1 - 100);
  expect((await b.searchAudit({ type: "rare", limit: 5, offset: 0 })).totalCount).toBe(rare);
  expect((await b.searchAudit({ type: "busy", limit: 5, offset: 0 })).totalCount).toBe(AUDIT_COUNT_CAP);
}

describe("audit index migration on SQLite", () => {
  let dir = "";
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "svc-audit-index-"));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("upgrades a version-2 file in place: index built, events intact, search uses it, count capped", async () => {
    const path = join(dir, "old.db");
    createSqliteAtVersion(path, 2);
    const raw = new DatabaseSync(path);
    try {
      const ins = raw.prepare(
        "INSERT INTO audit_events (time, event_type, user_name, success, fields) VALUES (?, ?, ?, ?, ?)",
      );
      for (const e of OLD_EVENTS) ins.run(e.time, e.type, e.user, e.success ? 1 : 0, e.fields);
      const before = raw
        .prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND name = ?")
        .all(INDEX);
      expect(before).toEqual([]);
    } finally {
      raw.close();
    }

    const backend = new SqliteBackend({ path, clock: new ManualClock(), sweepIntervalMs: 0 });
    try {
      await expectOldEventsFound(backend);
      // New events land beside the old ones.
      await backend.appendAudit({ event_type: "exec", user_name: "user1", time: new Date(T0 + 100 * HOUR) });
      expect(
        (await backend.searchAudit({ type: "exec", user: "user1", limit: 50, offset: 0 })).totalCount,
      ).toBe(6);
    } finally {
      await backend.close();
    }

    const raw2 = new DatabaseSync(path);
    try {
      raw2.exec("BEGIN");
      raw2.exec("DELETE FROM audit_events");
      const ins = raw2.prepare(
        "INSERT INTO audit_events (time, event_type, user_name, success, fields) VALUES (?, ?, ?, NULL, ?)",
      );
      for (let i = 0; i < MANY; i++) ins.run(T0 + i * 60_000, manyType(i), "u", JSON.stringify({ n: i }));
      raw2.exec("COMMIT");
    } finally {
      raw2.close();
    }
    const reopened = new SqliteBackend({ path, clock: new ManualClock(), sweepIntervalMs: 0 });
    try {
      await expectCappedCount(reopened);
    } finally {
      await reopened.close();
    }

    const check = new DatabaseSync(path);
    try {
      expect(check.prepare("PRAGMA user_version").get()?.["user_version"]).toBe(
        sqliteMigrations.at(-1)?.version,
      );
      expect(
        check.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND name = ?").all(INDEX),
      ).toHaveLength(1);
      // The planner picks the new index for the console's filtered query.
      const plan = check
        .prepare(
          `EXPLAIN QUERY PLAN SELECT id FROM audit_events
           WHERE event_type = ? AND user_name = ? AND time >= ? AND time < ? ORDER BY time DESC, id DESC LIMIT 50`,
        )
        .all("exec", "user1", 0, T0 * 2)
        .map((r) => String(r["detail"]))
        .join("\n");
      expect(plan).toContain(INDEX);
      expect(plan).not.toContain("TEMP B-TREE");
    } finally {
      check.close();
    }
  });
});

describe("audit index migration on PostgreSQL", () => {
  const url = testPostgresUrl();
  const schemas: string[] = [];
  afterAll(async () => {
    for (const s of schemas) await dropSchema(url, s);
  });

  it("upgrades a version-2 schema in place: index built, events intact, search uses it, count capped", async () => {
    const schema = uniqueSchemaName("auditidx");
    schemas.push(schema);
    await createPostgresAtVersion(url, schema, 2);
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      for (const e of OLD_EVENTS) {
        await client.query(
          `INSERT INTO ${schema}.audit_events (time, event_type, user_name, success, fields) VALUES ($1, $2, $3, $4, $5)`,
          [e.time, e.type, e.user, e.success, e.fields],
        );
      }
      const indexes = `SELECT indexname FROM pg_indexes WHERE schemaname = $1 AND indexname = $2`;
      expect((await client.query(indexes, [schema, INDEX])).rows).toEqual([]);

      const backend = await PostgresBackend.open({
        connectionString: url,
        clock: new ManualClock(),
        schema,
        poolSize: 2,
        sweepIntervalMs: 0,
      });
      try {
        await expectOldEventsFound(backend);
        await backend.appendAudit({
          event_type: "exec",
          user_name: "user1",
          time: new Date(T0 + 100 * HOUR),
        });
        expect(
          (await backend.searchAudit({ type: "exec", user: "user1", limit: 50, offset: 0 })).totalCount,
        ).toBe(6);
        await client.query(`DELETE FROM ${schema}.audit_events`);
        const n = Array.from({ length: MANY }, (_, i) => i);
        await client.query(
          `INSERT INTO ${schema}.audit_events (time, event_type, user_name, fields)
           SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[])`,
          [
            n.map((i) => T0 + i * 60_000),
            n.map(manyType),
            n.map(() => "u"),
            n.map((i) => JSON.stringify({ n: i })),
          ],
        );
        await expectCappedCount(backend);
      } finally {
        await backend.close();
      }

      expect((await client.query(indexes, [schema, INDEX])).rows).toEqual([{ indexname: INDEX }]);
      const versions = await client.query<{ version: number }>(
        `SELECT version FROM ${schema}.schema_migrations ORDER BY version`,
      );
      expect(versions.rows.map((r) => r.version)).toEqual(postgresMigrations.map((m) => m.version));
      // With 60 rows a sequential scan is cheapest; with it priced out, the index that serves
      // type + user + time is the one chosen.
      await client.query("BEGIN");
      try {
        await client.query("SET LOCAL enable_seqscan = off");
        const plan = await client.query<{ "QUERY PLAN": string }>(
          `EXPLAIN SELECT id FROM ${schema}.audit_events
           WHERE event_type = $1 AND user_name = $2 AND time >= $3 AND time < $4
           ORDER BY time DESC, id DESC LIMIT 50`,
          ["exec", "user1", 0, T0 * 2],
        );
        expect(plan.rows.map((r) => r["QUERY PLAN"]).join("\n")).toContain(INDEX);
      } finally {
        await client.query("COMMIT");
      }
    } finally {
      await client.end();
    }
  });
});
