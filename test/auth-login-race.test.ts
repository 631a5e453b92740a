// Parallel wrong passwords cannot outrun the login throttle: each attempt takes its number before
// the password is checked, so with 5 free failures, twenty guesses at once get exactly five password
// checks and fifteen refusals. Through the real auth server on a real SQLite file (the embedded
// default's backend), and on two auth replicas sharing one PostgreSQL schema, so the
// compare-and-swap under contention is the real one.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Backend } from "../core/backend/backend.ts";
import { openPostgresBackend } from "../core/backend/postgres.ts";
import { openSqliteBackend } from "../core/backend/sqlite.ts";
import { systemClock } from "../core/clock.ts";
import type { AuthServiceClient } from "../proto/generated/svc/v1/AuthService.ts";
import { callUnary, createAuthClient, userMetadata } from "../server/auth/client.ts";
import { type AuthTestEnv, makePki, PASSWORD, startAuthEnv, statusOf } from "./auth-fixture.ts";
import { dropSchema, testPostgresUrl, uniqueSchemaName } from "./harness/postgres.ts";

let env: AuthTestEnv;
let dir = "";
const clients: AuthServiceClient[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "svc-login-race-"));
  env = await startAuthEnv({
    backend: await openSqliteBackend({ path: join(dir, "state.db"), clock: systemClock, sweepIntervalMs: 0 }),
    lockout: { maxFailures: 5, lockoutMs: 60_000, baseDelayMs: 60_000 },
  });
  // Separate connections, so the calls really run side by side.
  for (let i = 0; i < 4; i++)
    clients.push(createAuthClient({ address: env.auth.address, caPems: [env.pki.hostCa.certPem] }));
}, 120_000);

afterAll(async () => {
  for (const c of clients) c.close();
  await env?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("login throttle under parallel guesses", () => {
  it("checks exactly maxFailures passwords; the rest are refused unverified and the name waits", async () => {
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        statusOf(
          callUnary(clients[i % clients.length] as AuthServiceClient, "AuthenticateLocal", {
            username: "carl",
            password: `wrong-guess-${i}`,
          }),
        ),
      ),
    );
    const codes = results.map((r) => r.code);
    expect(codes.filter((c) => c === status.UNAUTHENTICATED)).toHaveLength(5);
    expect(codes.filter((c) => c === status.RESOURCE_EXHAUSTED)).toHaveLength(15);

    const admin = await callUnary(env.client, "AuthenticateLocal", { username: "alice", password: PASSWORD });
    const md = userMetadata(admin.session?.session_id ?? "");
    const failures = await callUnary(
      env.client,
      "SearchAuditEvents",
      { type: "user.login", user: "carl", limit: 500, offset: 0 },
      md,
    );
    const reasons = failures.items.map((e) => JSON.parse(e.fields_json).reason);
    expect(reasons.filter((r) => r === "invalid credentials")).toHaveLength(5);
    // Refused while the five were being checked ("too many attempts") or after ("throttled").
    expect(reasons.filter((r) => r === "too many attempts" || r === "throttled")).toHaveLength(15);
    const locked = await callUnary(
      env.client,
      "SearchAuditEvents",
      { type: "login.throttled", user: "carl", limit: 500, offset: 0 },
      md,
    );
    expect(locked.total_count).toBe(1);
    // Waiting now: even the right password waits (from an address carl never logged in from).
    const right = await statusOf(
      callUnary(env.client, "AuthenticateLocal", { username: "carl", password: PASSWORD }),
    );
    expect(right.code).toBe(status.RESOURCE_EXHAUSTED);
  });

  it("a user's own parallel logins with the right password never throttle the name", async () => {
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        statusOf(
          callUnary(clients[i % clients.length] as AuthServiceClient, "AuthenticateLocal", {
            username: "bob",
            password: PASSWORD,
          }),
        ),
      ),
    );
    const codes = results.map((r) => r.code);
    // At most five run at once per name; the others are told to retry. None is a failure.
    expect(codes.filter((c) => c === status.OK).length).toBeGreaterThanOrEqual(5);
    expect(codes.every((c) => c === status.OK || c === status.RESOURCE_EXHAUSTED)).toBe(true);
    const again = await callUnary(env.client, "AuthenticateLocal", { username: "bob", password: PASSWORD });
    expect(again.session?.session_id).toBeTruthy();
    const admin = await callUnary(env.client, "AuthenticateLocal", { username: "alice", password: PASSWORD });
    const locked = await callUnary(
      env.client,
      "SearchAuditEvents",
      { type: "login.throttled", user: "bob", limit: 10, offset: 0 },
      userMetadata(admin.session?.session_id ?? ""),
    );
    expect(locked.total_count).toBe(0);
  });

  it("a right password clears the count its own reservation added", async () => {
    for (let i = 0; i < 4; i++) {
      const r = await statusOf(
        callUnary(env.client, "AuthenticateLocal", { username: "eve", password: "nope" }),
      );
      expect(r.code).toBe(status.UNAUTHENTICATED);
    }
    const ok = await callUnary(env.client, "AuthenticateLocal", { username: "eve", password: PASSWORD });
    expect(ok.session?.session_id).toBeTruthy();
    // Counting starts again: four more wrong ones do not lock.
    for (let i = 0; i < 4; i++) {
      const r = await statusOf(
        callUnary(env.client, "AuthenticateLocal", { username: "eve", password: "nope" }),
      );
      expect(r.code).toBe(status.UNAUTHENTICATED);
    }
    expect(
      (await callUnary(env.client, "AuthenticateLocal", { username: "eve", password: PASSWORD })).session,
    ).toBeTruthy();
  });
});

describe("login throttle under parallel guesses on two replicas sharing PostgreSQL", () => {
  const url = testPostgresUrl();
  const schema = uniqueSchemaName("login_race");
  const backends: Backend[] = [];
  const replicas: AuthTestEnv[] = [];
  const pgClients: AuthServiceClient[] = [];

  beforeAll(async () => {
    const pki = await makePki();
    for (let i = 0; i < 2; i++) {
      const backend = await openPostgresBackend({
        connectionString: url,
        schema,
        clock: systemClock,
        sweepIntervalMs: 0,
      });
      backends.push(backend);
      const r = await startAuthEnv({
        backend,
        pki,
        lockout: { maxFailures: 5, lockoutMs: 60_000, baseDelayMs: 60_000 },
      });
      replicas.push(r);
      for (let j = 0; j < 2; j++)
        pgClients.push(createAuthClient({ address: r.auth.address, caPems: [pki.hostCa.certPem] }));
    }
  }, 120_000);

  afterAll(async () => {
    for (const c of pgClients) c.close();
    for (const r of replicas) await r.close();
    for (const b of backends) await b.close();
    await dropSchema(url, schema);
  });

  it("twenty guesses split across both replicas get exactly five password checks", async () => {
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        statusOf(
          callUnary(pgClients[i % pgClients.length] as AuthServiceClient, "AuthenticateLocal", {
            username: "carl",
            password: `wrong-guess-${i}`,
          }),
        ),
      ),
    );
    const codes = results.map((r) => r.code);
    expect(codes.filter((c) => c === status.UNAUTHENTICATED)).toHaveLength(5);
    expect(codes.filter((c) => c === status.RESOURCE_EXHAUSTED)).toHaveLength(15);
    const [a, b] = replicas as [AuthTestEnv, AuthTestEnv];
    const admin = await callUnary(a.client, "AuthenticateLocal", { username: "alice", password: PASSWORD });
    const locked = await callUnary(
      b.client,
      "SearchAuditEvents",
      { type: "login.throttled", user: "carl", limit: 10, offset: 0 },
      userMetadata(admin.session?.session_id ?? ""),
    );
    expect(locked.total_count).toBe(1);
    // Waiting on both replicas: the right password waits on either.
    for (const r of replicas) {
      const right = await statusOf(
        callUnary(r.client, "AuthenticateLocal", { username: "carl", password: PASSWORD }),
      );
      expect(right.code).toBe(status.RESOURCE_EXHAUSTED);
    }
  });
});
