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
});
