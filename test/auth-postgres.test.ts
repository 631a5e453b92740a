// Two auth replicas on one PostgreSQL: a session created through one is valid on the other, and
// logout (or a lockout) on one is effective on the other at once.
import { status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Backend } from "../core/backend/backend.ts";
import { openPostgresBackend } from "../core/backend/postgres.ts";
import { systemClock } from "../core/clock.ts";
import { MemorySource } from "../core/sources/memory.ts";
import { agentMetadata, callUnary, userMetadata } from "../server/auth/client.ts";
import {
  type AuthTestEnv,
  makePki,
  PASSWORD,
  startAuthEnv,
  statusOf,
  testResources,
} from "./auth-fixture.ts";
import { dropSchema, testPostgresUrl, uniqueSchemaName } from "./harness/postgres.ts";

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
  a = await startAuthEnv({ backend: ba, pki, source: new MemorySource(testResources()) });
  b = await startAuthEnv({ backend: bb, pki, source: new MemorySource(testResources()) });
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
