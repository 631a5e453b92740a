// EmitAuditEvent cannot forge what auth writes: each caller kind adds only the event types on its
// own list (server/auth/audit-emit.ts), about subjects it can vouch for, at a bounded rate. Through
// the real auth server with a node agent's, the proxy's and users' real credentials.
import { status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AuthServiceClient } from "../proto/generated/svc/v1/AuthService.ts";
import { EMIT_LIMITS, EmitRateLimiter } from "../server/auth/audit-emit.ts";
import { agentMetadata, callUnary, createAuthClient, userMetadata } from "../server/auth/client.ts";
import { type AuthTestEnv, clientCert, PASSWORD, startAuthEnv, statusOf } from "./auth-fixture.ts";

let env: AuthTestEnv;
let node: AuthServiceClient;
let proxy: AuthServiceClient;
const sessions = new Map<string, string>();

async function user(name: string) {
  let s = sessions.get(name);
  if (!s) {
    const r = await callUnary(env.client, "AuthenticateLocal", { username: name, password: PASSWORD });
    s = r.session?.session_id ?? "";
    sessions.set(name, s);
  }
  return userMetadata(s);
}

const emit = (client: AuthServiceClient, md: ReturnType<typeof userMetadata>, type: string, userName = "") =>
  statusOf(
    callUnary(client, "EmitAuditEvent", { event_type: type, user_name: userName, fields_json: "{}" }, md),
  );

// Everything auth writes itself (grep appendAudit/#audit in server/auth).
const SERVER_ONLY = [
  "user.login",
  "user.logout",
  "user.locked",
  "login.throttled",
  "login.released",
  "user.create",
  "user.delete",
  "user.password_reset",
  "cert.create",
  "node.join",
  "node.delete",
  "bot.create",
  "bot.bootstrap",
  "bot.renew",
  "bot.locked",
  "join_token.create",
  "join_token.delete",
  "mfa.device.add",
  "spiffe.auth",
  "auth.anything",
];

beforeAll(async () => {
  env = await startAuthEnv();
  node = await env.agentClient("node-1");
  const c = await clientCert(env.pki.hostCa, { service: "proxy", name: "p1" });
  proxy = createAuthClient({ address: env.auth.address, caPems: [env.pki.hostCa.certPem], ...c });
  env.clients.push(proxy);
}, 120_000);

afterAll(async () => {
  await env?.close();
});

describe("EmitAuditEvent", () => {
  it("a node agent emits its SSH events about the user it authenticated, nothing auth writes", async () => {
    for (const type of ["ssh.auth", "ssh.auth.refused", "session.start", "session.end"]) {
      expect((await emit(node, agentMetadata("node-1"), type, "bob")).code, type).toBe(status.OK);
    }
    for (const type of [...SERVER_ONLY, "proxy.terminal", "client.note"]) {
      const r = await emit(node, agentMetadata("node-1"), type, "alice");
      expect(r.code, type).toBe(status.PERMISSION_DENIED);
    }
  });

  it("the proxy emits nothing: not its own namespace, not a node's events, not auth's", async () => {
    for (const type of ["proxy.terminal.start", "session.start", "ssh.auth", ...SERVER_ONLY]) {
      const r = await emit(proxy, agentMetadata("proxy:p1"), type, "bob");
      expect(r.code, type).toBe(status.PERMISSION_DENIED);
      expect(r.details, type).toMatch(/not one this caller emits/);
    }
  });

  it("a user emits nothing (no client has an event of its own), about themselves or anyone", async () => {
    for (const type of [...SERVER_ONLY, "session.start", "ssh.auth", "client.ssh.exec"]) {
      expect((await emit(env.client, await user("bob"), type)).code, type).toBe(status.PERMISSION_DENIED);
      expect((await emit(env.client, await user("bob"), type, "alice")).code, type).toBe(
        status.PERMISSION_DENIED,
      );
    }
    // Nothing forged reached the log.
    const page = await callUnary(
      env.client,
      "SearchAuditEvents",
      { type: "node.join", user: "", limit: 0, offset: 0 },
      await user("alice"),
    );
    expect(page.total_count).toBe(0);
  });

  it("is rate limited per caller: past the burst RESOURCE_EXHAUSTED, other callers unaffected", async () => {
    const flooder = await env.agentClient("node-flood");
    const md = agentMetadata("node-flood");
    const { burst, perSecond } = EMIT_LIMITS.agent;
    const codes: number[] = [];
    const start = performance.now();
    // The burst and then as many again, 50 at a time: far faster than the bucket refills.
    for (let sent = 0; sent < 2 * burst; sent += 50) {
      const batch = Array.from({ length: 50 }, () => emit(flooder, md, "session.start", "bob"));
      for (const r of await Promise.all(batch)) codes.push(r.code);
    }
    const seconds = (performance.now() - start) / 1000;
    const ok = codes.filter((c) => c === status.OK).length;
    expect(ok).toBeGreaterThanOrEqual(burst);
    // The burst and what the bucket refilled meanwhile, no more (a loaded machine takes longer,
    // and a call in the last batch may find a token that came back while it waited).
    expect(ok).toBeLessThanOrEqual(burst + Math.ceil(seconds * perSecond) + 1);
    expect(ok).toBeLessThan(1.5 * burst);
    expect(codes.filter((c) => c !== status.OK).every((c) => c === status.RESOURCE_EXHAUSTED)).toBe(true);
    // Another node is unaffected.
    expect((await emit(node, agentMetadata("node-1"), "session.end", "bob")).code).toBe(status.OK);
  });
});

describe("EmitRateLimiter", () => {
  it("refills continuously up to the burst", () => {
    let now = 0;
    const limiter = new EmitRateLimiter(() => now);
    const limit = { perSecond: 2, burst: 3 };
    for (let i = 0; i < 3; i++) limiter.take("k", limit);
    expect(() => limiter.take("k", limit)).toThrow(/too many audit events/);
    now += 500; // one token back
    limiter.take("k", limit);
    expect(() => limiter.take("k", limit)).toThrow();
    now += 60_000; // long quiet: back to the burst, not more
    for (let i = 0; i < 3; i++) limiter.take("k", limit);
    expect(() => limiter.take("k", limit)).toThrow();
    limiter.take("other", limit);
  });
});
