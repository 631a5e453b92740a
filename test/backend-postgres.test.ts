// The PostgreSQL backend against the shared conformance suite (one fresh schema per test), plus
// migrations under concurrent start, two replicas sharing state, and an unreachable server.
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { backendConformance } from "../core/backend/conformance.ts";
import { openBackend } from "../core/backend/index.ts";
import { PostgresBackend } from "../core/backend/postgres.ts";
import { postgresMigrations } from "../core/backend/postgres-schema.ts";
import { ManualClock } from "../core/clock.ts";
import { UnavailableError } from "../core/errors.ts";
import { dropSchema, testPostgresUrl, uniqueSchemaName } from "./harness/postgres.ts";

const url = testPostgresUrl();
const schemas: string[] = [];
const freshSchema = (label: string): string => {
  const s = uniqueSchemaName(label);
  schemas.push(s);
  return s;
};
afterAll(async () => {
  for (const s of schemas) await dropSchema(url, s);
});

backendConformance("postgres", async (clock) => {
  const schema = uniqueSchemaName("conf");
  const backend = await PostgresBackend.open({
    connectionString: url,
    clock,
    schema,
    poolSize: 4,
    sweepIntervalMs: 0,
  });
  return { backend, cleanup: () => dropSchema(url, schema) };
});

describe("postgres specifics", () => {
  it("replicas starting together migrate once, under the advisory lock", async () => {
    const schema = freshSchema("mig");
    const clock = new ManualClock();
    const opened = await Promise.all(
      Array.from({ length: 4 }, () =>
        PostgresBackend.open({ connectionString: url, clock, schema, poolSize: 2, sweepIntervalMs: 0 }),
      ),
    );
    try {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        const res = await client.query<{ version: number }>(
          `SELECT version FROM ${schema}.schema_migrations ORDER BY version`,
        );
        expect(res.rows.map((r) => r.version)).toEqual(postgresMigrations.map((m) => m.version));
      } finally {
        await client.end();
      }
      const again = await PostgresBackend.open({ connectionString: url, clock, schema, sweepIntervalMs: 0 });
      await again.close();
    } finally {
      for (const b of opened) await b.close();
    }
  });

  it("two replicas on one schema see each other's writes and deletes", async () => {
    const schema = freshSchema("replicas");
    const clock = new ManualClock();
    const one = await PostgresBackend.open({ connectionString: url, clock, schema, sweepIntervalMs: 0 });
    const two = await PostgresBackend.open({ connectionString: url, clock, schema, sweepIntervalMs: 0 });
    try {
      const s = await one.create("/sessions/h1", { user: "alice" }, { ttlMs: 60_000 });
      expect(await two.get("/sessions/h1")).toEqual(s);
      await two.delete("/sessions/h1");
      await expect(one.get("/sessions/h1")).rejects.toThrow(/not found/);
    } finally {
      await one.close();
      await two.close();
    }
  });

  it("schemas keep parallel users apart", async () => {
    const clock = new ManualClock();
    const a = await PostgresBackend.open({ connectionString: url, clock, schema: freshSchema("iso_a") });
    const b = await PostgresBackend.open({ connectionString: url, clock, schema: freshSchema("iso_b") });
    try {
      await a.put("/k", "a");
      await expect(b.get("/k")).rejects.toThrow(/not found/);
      expect(a.schema).not.toBe(b.schema);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it("an unreachable server is UnavailableError, and a bad schema name is refused", async () => {
    const clock = new ManualClock();
    await expect(
      PostgresBackend.open({ connectionString: "postgres://postgres@127.0.0.1:1/none", clock }),
    ).rejects.toBeInstanceOf(UnavailableError);
    await expect(
      PostgresBackend.open({ connectionString: url, clock, schema: "bad; DROP TABLE x" }),
    ).rejects.toThrow(/schema/);
  });

  it("openBackend opens PostgreSQL from configuration", async () => {
    const schema = freshSchema("config");
    const backend = await openBackend(
      { type: "postgres", connectionString: url, schema, sweepIntervalMs: 0 },
      { clock: new ManualClock() },
    );
    try {
      expect(backend).toBeInstanceOf(PostgresBackend);
      expect((await backend.put("/k", "v")).value).toBe("v");
    } finally {
      await backend.close();
    }
  });

  // Audit appends are committed in groups (core/backend/audit-batcher.ts): one INSERT per group.
  describe("audit group commit", () => {
    const event = (i: number) => ({ event_type: "test.batch", user_name: `u${i}`, fields: { i } });
    const open = (schema: string) =>
      PostgresBackend.open({ connectionString: url, clock: new ManualClock(), schema, sweepIntervalMs: 0 });
    /** Rows another connection sees: what is committed. */
    const committed = async (
      schema: string,
    ): Promise<Array<{ id: string; user_name: string; fields: string }>> => {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        const res = await client.query<{ id: string; user_name: string; fields: string }>(
          `SELECT id::text AS id, user_name, fields FROM ${schema}.audit_events ORDER BY id`,
        );
        return res.rows;
      } finally {
        await client.end();
      }
    };

    it("gives each of many concurrent appends its own committed event, in the callers' order", async () => {
      const schema = freshSchema("auditbatch");
      const b = await open(schema);
      try {
        const events = await Promise.all(Array.from({ length: 200 }, (_v, i) => b.appendAudit(event(i))));
        const ids = events.map((e) => Number(e.id));
        expect(new Set(ids).size).toBe(200);
        expect(ids).toEqual([...ids].sort((x, y) => x - y));
        expect(events.map((e) => e.user_name)).toEqual(events.map((_e, i) => `u${i}`));
        // Each caller's id is the row holding its own event, as another connection reads it.
        const rows = await committed(schema);
        expect(rows).toHaveLength(200);
        for (const e of events) {
          const row = rows.find((r) => r.id === e.id);
          expect(row?.user_name).toBe(e.user_name);
          expect(JSON.parse(row?.fields ?? "null")).toEqual(e.fields);
        }
        const page = await b.searchAudit({ type: "test.batch", user: "u7", limit: 10, offset: 0 });
        expect(page.items.map((e) => e.id)).toEqual([events[7]?.id]);
      } finally {
        await b.close();
      }
    });

    it("commits appends still queued when the backend closes, and refuses appends after", async () => {
      const schema = freshSchema("auditclose");
      const b = await open(schema);
      // Some in one group that is in flight, some queued behind it.
      const first = Array.from({ length: 5 }, (_v, i) => b.appendAudit(event(i)));
      await new Promise((r) => setImmediate(r));
      const second = Array.from({ length: 5 }, (_v, i) => b.appendAudit(event(5 + i)));
      await b.close();
      await expect(Promise.all([...first, ...second])).resolves.toHaveLength(10);
      await expect(b.appendAudit(event(99))).rejects.toBeInstanceOf(UnavailableError);
      expect((await committed(schema)).map((r) => r.user_name).sort()).toEqual(
        Array.from({ length: 10 }, (_v, i) => `u${i}`).sort(),
      );
    });

    it("a group the server refuses rejects every event in it and the next group still commits", async () => {
      const schema = freshSchema("auditfail");
      const b = await open(schema);
      try {
        const client = new pg.Client({ connectionString: url });
        await client.connect();
        try {
          await client.query(
            `ALTER TABLE ${schema}.audit_events ADD CONSTRAINT no_bad CHECK (user_name <> 'bad')`,
          );
        } finally {
          await client.end();
        }
        const group = [b.appendAudit(event(1)), b.appendAudit({ ...event(2), user_name: "bad" })];
        const settled = await Promise.allSettled(group);
        expect(settled.map((s) => s.status)).toEqual(["rejected", "rejected"]);
        await expect(b.appendAudit(event(3))).resolves.toMatchObject({ user_name: "u3" });
        expect((await committed(schema)).map((r) => r.user_name)).toEqual(["u3"]);
      } finally {
        await b.close();
      }
    });
  });
});
