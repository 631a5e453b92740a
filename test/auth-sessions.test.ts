// Local login, sessions, login throttling and revocation through the real gRPC API.
import { status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { API_VERSION, type Role, type User } from "../core/resources/index.ts";
import { ADMIN_CAPABILITIES } from "../server/auth/authz.ts";
import { callUnary, userMetadata } from "../server/auth/client.ts";
import { SESSION_TTL_MS } from "../server/auth/sessions.ts";
import { type AuthTestEnv, PASSWORD, startAuthEnv, statusOf } from "./auth-fixture.ts";

let env: AuthTestEnv;

beforeAll(async () => {
  env = await startAuthEnv({ lockout: { maxFailures: 3, lockoutMs: 60_000, baseDelayMs: 60_000 } });
});
afterAll(async () => {
  await env?.close();
});

async function login(username: string, password = PASSWORD): Promise<string> {
  const r = await callUnary(env.client, "AuthenticateLocal", {
    username,
    password,
    client_address: "127.0.0.1",
  });
  expect(r.result).toBe("session");
  const id = r.session?.session_id ?? "";
  expect(id).not.toBe("");
  return id;
}

async function waitUntil(check: () => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe("AuthenticateLocal and sessions", () => {
  it("issues a 256-bit session that GetSession describes", async () => {
    const before = Date.now();
    const r = await callUnary(env.client, "AuthenticateLocal", {
      username: "bob",
      password: PASSWORD,
      client_address: "10.0.0.1",
    });
    const s = r.session;
    expect(s?.username).toBe("bob");
    expect(Buffer.from(s?.session_id ?? "", "base64url").length).toBe(32);
    const view = await callUnary(env.client, "GetSession", {}, userMetadata(s?.session_id ?? ""));
    expect(view).toMatchObject({ username: "bob", roles: ["access"], session_id: "" });
    expect(view.expires_unix_ms - before).toBeGreaterThanOrEqual(SESSION_TTL_MS - 1000);
    expect(view.expires_unix_ms - Date.now()).toBeLessThanOrEqual(SESSION_TTL_MS);
  });

  it("GetSession answers the admin capabilities the roles grant, by rules, not by role name", async () => {
    const allowedOf = async (name: string) =>
      (await callUnary(env.client, "GetSession", {}, userMetadata(await login(name)))).allowed;
    expect(await allowedOf("alice")).toEqual(ADMIN_CAPABILITIES.map((c) => c.name));
    expect(await allowedOf("alice")).toEqual(
      expect.arrayContaining([
        "users:list",
        "roles:list",
        "tokens:list",
        "agent_identities:list",
        "audit:list",
      ]),
    );
    expect(await allowedOf("bob")).toEqual([]);
    // eve's role lists nodes, which every user may do (ListNodes filters): no admin capability.
    expect(await allowedOf("eve")).toEqual([]);

    const role = (name: string, spec: Role["spec"]): Role => ({
      apiVersion: API_VERSION,
      kind: "Role",
      metadata: { name },
      spec,
    });
    const u = (name: string, roles: string[]): User => ({
      apiVersion: API_VERSION,
      kind: "User",
      metadata: { name },
      spec: { roles, traits: { logins: [name] } },
    });
    const { setPassword } = await import("../server/auth/passwords.ts");
    await env.source.apply(
      role("auditor", { allow: { rules: [{ resources: ["audit", "users"], verbs: ["list"] }] } }),
    );
    await env.source.apply(role("needs-key", { options: { require_mfa: true } }));
    await env.source.apply(u("audra", ["auditor"]));
    await env.source.apply(u("mona", ["auditor", "needs-key"]));
    await setPassword(env.backend, "audra", PASSWORD);
    await setPassword(env.backend, "mona", PASSWORD);
    expect(await allowedOf("audra")).toEqual(["audit:list", "users:list"]);
    // A password alone gives mona an enrolment-only session, refused every admin RPC: none.
    const mona = await callUnary(env.client, "GetSession", {}, userMetadata(await login("mona")));
    expect(mona).toMatchObject({ scope: "mfa_enrollment", allowed: [] });
  });

  it("stores only a hash of the session ID", async () => {
    const id = await login("bob");
    const items = await env.backend.range("");
    const dump = JSON.stringify(items);
    expect(dump).not.toContain(id);
    expect(items.some((i) => i.key.startsWith("web-sessions/"))).toBe(true);
  });

  it("answers an unknown user and a wrong password identically", async () => {
    const unknown = await statusOf(
      callUnary(env.client, "AuthenticateLocal", {
        username: "nobody",
        password: "wrong password!",
        client_address: "",
      }),
    );
    const wrong = await statusOf(
      callUnary(env.client, "AuthenticateLocal", {
        username: "eve",
        password: "wrong password!",
        client_address: "",
      }),
    );
    expect(unknown.code).toBe(status.UNAUTHENTICATED);
    expect(wrong).toEqual(unknown);
  });

  it("logout revokes the session", async () => {
    const id = await login("bob");
    await callUnary(env.client, "DeleteSession", {}, userMetadata(id));
    const after = await statusOf(callUnary(env.client, "GetSession", {}, userMetadata(id)));
    expect(after.code).toBe(status.UNAUTHENTICATED);
  });

  it("throttles a name after repeated failures from elsewhere, audits it and keeps its sessions", async () => {
    const admin = await login("alice");
    const lockme: User = {
      apiVersion: API_VERSION,
      kind: "User",
      metadata: { name: "mallory" },
      spec: { roles: ["access"], traits: { logins: ["mallory"] } },
    };
    await env.source.apply(lockme);
    const { setPassword } = await import("../server/auth/passwords.ts");
    await setPassword(env.backend, "mallory", PASSWORD);
    // Logged in from this client's own address (auth takes it from the connection).
    const live = await login("mallory");
    // Through a proxy (its certificate makes auth believe the client address it reports), from
    // an address mallory never logged in from.
    const proxy = await env.agentClient("proxy:test");
    const attempt = (password: string) =>
      statusOf(
        callUnary(proxy, "AuthenticateLocal", { username: "mallory", password, client_address: "10.1.1.1" }),
      );
    for (let i = 0; i < 3; i++) expect((await attempt("not it at all")).code).toBe(status.UNAUTHENTICATED);
    const waiting = await attempt(PASSWORD);
    expect(waiting.code).toBe(status.RESOURCE_EXHAUSTED);
    expect(waiting.details).toMatch(/try again in \d+ s/);
    // No session is revoked, and the address mallory used before is not held back.
    expect((await statusOf(callUnary(env.client, "GetSession", {}, userMetadata(live)))).code).toBe(
      status.OK,
    );
    await login("mallory");
    const audit = await callUnary(
      env.client,
      "SearchAuditEvents",
      { type: "login.throttled", user: "mallory", limit: 0, offset: 0 },
      userMetadata(admin),
    );
    expect(audit.total_count).toBe(1);
    expect(JSON.parse(audit.items[0]?.fields_json ?? "{}")).toMatchObject({
      scope: "user",
      client_address: "10.1.1.1",
      failures: 3,
    });
    const users = await callUnary(env.client, "ListUsers", {}, userMetadata(admin));
    expect(users.users.find((u) => u.name === "mallory")?.locked_until_unix_ms).toBeGreaterThan(Date.now());
  });

  it("revokes the sessions of a deleted or disabled user", async () => {
    const u = (name: string, disabled: boolean): User => ({
      apiVersion: API_VERSION,
      kind: "User",
      metadata: { name },
      spec: { roles: ["access"], traits: { logins: [name] }, disabled },
    });
    const { setPassword } = await import("../server/auth/passwords.ts");
    await env.source.apply(u("dora", false));
    await env.source.apply(u("dave", false));
    await setPassword(env.backend, "dora", PASSWORD);
    await setPassword(env.backend, "dave", PASSWORD);
    const dora = await login("dora");
    const dave = await login("dave");
    await env.source.remove("User", "dora");
    await env.source.apply(u("dave", true));
    for (const id of [dora, dave]) {
      expect((await statusOf(callUnary(env.client, "GetSession", {}, userMetadata(id)))).code).toBe(
        status.UNAUTHENTICATED,
      );
    }
    // Revocation also removes the stored sessions (not only the cache check) on every replica.
    await waitUntil(
      async () => (await env.backend.range("user-sessions/dora/")).length === 0,
      "dora revoked",
    );
    await waitUntil(
      async () => (await env.backend.range("user-sessions/dave/")).length === 0,
      "dave revoked",
    );
    // A re-created user of the same name does not inherit the old password.
    await env.source.apply(u("dora", false));
    const again = await statusOf(
      callUnary(env.client, "AuthenticateLocal", {
        username: "dora",
        password: PASSWORD,
        client_address: "",
      }),
    );
    expect(again.code).toBe(status.UNAUTHENTICATED);
  });

  it("audits logins with the outcome", async () => {
    const admin = await login("alice");
    const page = await callUnary(
      env.client,
      "SearchAuditEvents",
      { type: "user.login", user: "nobody", limit: 0, offset: 0 },
      userMetadata(admin),
    );
    expect(page.total_count).toBeGreaterThanOrEqual(1);
    expect(page.items[0]).toMatchObject({ event_type: "user.login", user_name: "nobody", success: false });
  });
});
