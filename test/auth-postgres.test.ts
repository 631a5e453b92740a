// Two auth replicas on one PostgreSQL: a session created through one is valid on the other, and
// logout (or a lockout) on one is effective on the other at once, or, for a session the other had
// just read and keeps (server/auth/session-memo.ts), when the backend's notification reaches it.
import { status } from "@grpc/grpc-js";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Backend } from "../core/backend/backend.ts";
import { openPostgresBackend } from "../core/backend/postgres.ts";
import { PostgresNotifier } from "../core/backend/postgres-notify.ts";
import { systemClock } from "../core/clock.ts";
import { MemorySource } from "../core/sources/memory.ts";
import { agentMetadata, callUnary, userMetadata } from "../server/auth/client.ts";
import { hashSecret } from "../server/auth/sessions.ts";
import {
  type AuthTestEnv,
  makePki,
  PASSWORD,
  startAuthEnv,
  statusOf,
  testResources,
} from "./auth-fixture.ts";
import { dropSchema, testPostgresUrl, uniqueSchemaName } from "./harness/postgres.ts";
import { until } from "./harness/svcd.ts";

const url = testPostgresUrl();
const schema = uniqueSchemaName("auth_replicas");
const backends: Backend[] = [];
let a: AuthTestEnv;
let b: AuthTestEnv;

beforeAll(async () => {
  const pki = await makePki();
  for (let i = 0; i < 2; i++) {
    backends.push(
      await openPostgresBackend({ connectionString: url, schema, clock: systemClock, sweepIntervalMs: 0 }),
    );
  }
  const [ba, bb] = backends as [Backend, Backend];
  // A minute of memory: a refusal seen sooner came from a notification or a loss of them.
  const sessionMemoMaxAgeMs = 60_000;
  a = await startAuthEnv({
    backend: ba,
    pki,
    source: new MemorySource(testResources()),
    sessionMemoMaxAgeMs,
  });
  b = await startAuthEnv({
    backend: bb,
    pki,
    source: new MemorySource(testResources()),
    sessionMemoMaxAgeMs,
  });
});
afterAll(async () => {
  await a?.close();
  await b?.close();
  for (const be of backends) await be.close();
  await dropSchema(url, schema);
});

describe("auth replicas sharing PostgreSQL", () => {
  it("a session from one replica is valid on the other; logout on one ends it on both", async () => {
    expect(a.auth.port).not.toBe(b.auth.port);
    const r = await callUnary(a.client, "AuthenticateLocal", {
      username: "bob",
      password: PASSWORD,
      client_address: "",
    });
    const id = r.session?.session_id ?? "";
    const onB = await callUnary(b.client, "GetSession", {}, userMetadata(id));
    expect(onB.username).toBe("bob");
    expect(onB.expires_unix_ms).toBe(r.session?.expires_unix_ms);
    await callUnary(b.client, "DeleteSession", {}, userMetadata(id));
    for (const env of [a, b]) {
      const after = await statusOf(callUnary(env.client, "GetSession", {}, userMetadata(id)));
      expect(after.code).toBe(status.UNAUTHENTICATED);
    }
  });

  const login = async (env: AuthTestEnv): Promise<string> => {
    const r = await callUnary(env.client, "AuthenticateLocal", {
      username: "bob",
      password: PASSWORD,
      client_address: "",
    });
    return r.session?.session_id ?? "";
  };
  const sessionCode = async (env: AuthTestEnv, id: string): Promise<number> =>
    (await statusOf(callUnary(env.client, "GetSession", {}, userMetadata(id)))).code;

  it("a session one replica keeps is refused there once a logout on the other is heard", async () => {
    const id = await login(a);
    expect(await sessionCode(a, id)).toBe(status.OK);
    // Kept by A: removed behind both replicas' backs (no notification), A still answers it.
    const direct = await sqlClient();
    try {
      const other = await login(a);
      expect(await sessionCode(a, other)).toBe(status.OK);
      await direct.query(`DELETE FROM ${schema}.items WHERE key = $1`, [`web-sessions/${hashSecret(other)}`]);
      expect(await sessionCode(a, other)).toBe(status.OK);
      expect(await sessionCode(b, other)).toBe(status.UNAUTHENTICATED);
    } finally {
      await direct.end();
    }
    await callUnary(b.client, "DeleteSession", {}, userMetadata(id));
    expect(await sessionCode(b, id)).toBe(status.UNAUTHENTICATED);
    await until(
      "replica A hears the logout",
      async () => (await sessionCode(a, id)) === status.UNAUTHENTICATED,
      10_000,
    );
  });

  it("a replica that loses its notifications drops what it keeps and reads the backend", async () => {
    const id = await login(a);
    expect(await sessionCode(a, id)).toBe(status.OK);
    const direct = await sqlClient();
    try {
      await direct.query(`DELETE FROM ${schema}.items WHERE key = $1`, [`web-sessions/${hashSecret(id)}`]);
      expect(await sessionCode(a, id)).toBe(status.OK);
      // The listening connections of both replicas (named after the schema).
      const killed = await direct.query(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1 AND pid <> pg_backend_pid()",
        [new PostgresNotifier(url, schema).applicationName],
      );
      expect(killed.rowCount).toBe(2);
    } finally {
      await direct.end();
    }
    await until(
      "replica A reads the session again",
      async () => (await sessionCode(a, id)) === status.UNAUTHENTICATED,
      10_000,
    );
  });

  it("nodes heartbeating to one replica are listed by the other", async () => {
    const agent = await a.agentClient("pg-node");
    await callUnary(
      agent,
      "Heartbeat",
      { hostname: "pg-node", addresses: ["127.0.0.1:3022"], labels: { env: "dev" }, version: "1" },
      agentMetadata("pg-node"),
    );
    const r = await callUnary(b.client, "AuthenticateLocal", {
      username: "bob",
      password: PASSWORD,
      client_address: "",
    });
    const nodes = await callUnary(b.client, "ListNodes", {}, userMetadata(r.session?.session_id ?? ""));
    expect(nodes.nodes.map((n) => [n.hostname, n.status])).toContainEqual(["pg-node", "online"]);
  });
});

async function sqlClient(): Promise<pg.Client> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  return c;
}
