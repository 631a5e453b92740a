// Assigning roles cannot escalate: `users/create` or `agent_identities/create` admit the call, but
// the roles handed out must be ones the caller holds, unless a rule grants `roles: assign` (deny
// wins). Through the real auth server, with real roles; nothing is written when refused.
import { status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { API_VERSION, presets } from "../core/resources/index.ts";
import { callUnary, userMetadata } from "../server/auth/client.ts";
import { setPassword } from "../server/auth/passwords.ts";
import { statusOf } from "./auth-fixture.ts";
import { type MachineEnv, PASSWORD, startMachineEnv } from "./bot-fixture.ts";

const role = (name: string, spec: Record<string, unknown>) => ({
  apiVersion: API_VERSION,
  kind: "Role",
  metadata: { name },
  spec,
});
const user = (name: string, roles: string[]) => ({
  apiVersion: API_VERSION,
  kind: "User",
  metadata: { name },
  spec: { roles, traits: { logins: [name] } },
});

let env: MachineEnv;
const sessions = new Map<string, string>();

async function as(name: string) {
  let s = sessions.get(name);
  if (!s) {
    const r = await callUnary(env.client, "AuthenticateLocal", { username: name, password: PASSWORD });
    s = r.session?.session_id ?? "";
    sessions.set(name, s);
  }
  return userMetadata(s);
}

const createUser = async (caller: string, name: string, roles: string[], logins: string[] = []) =>
  statusOf(callUnary(env.client, "CreateUser", { name, roles, logins }, await as(caller)));
const resetPassword = async (caller: string, name: string) =>
  statusOf(callUnary(env.client, "CreatePasswordReset", { name }, await as(caller)));
const createBot = async (caller: string, name: string, roles: string[]) =>
  statusOf(
    callUnary(
      env.client,
      "CreateAgentIdentity",
      { name, roles, cert_ttl: "", allow_workload_svids: false, token_ttl_seconds: 0 },
      await as(caller),
    ),
  );

beforeAll(async () => {
  const managers = { rules: [{ resources: ["users", "agent_identities"], verbs: ["create"] }] };
  env = await startMachineEnv({
    resources: [
      ...presets(),
      role("user-manager", { allow: managers }),
      role("assigner", { allow: { rules: [{ resources: ["roles"], verbs: ["assign"] }] } }),
      role("no-assign", { deny: { rules: [{ resources: ["roles"], verbs: ["assign"] }] } }),
      role("ops", { allow: { logins: ["root"], node_labels: { "*": "*" } } }),
      role("no-prod", { deny: { node_labels: { env: "prod" } } }),
      role("short", { options: { max_session_ttl: "1h", permit_port_forwarding: false } }),
      role("helpdesk", { allow: { rules: [{ resources: ["users"], verbs: ["update"] }] } }),
      user("alice", ["admin"]),
      user("bob", ["access"]),
      user("mgr", ["user-manager", "access"]),
      user("hr", ["user-manager", "assigner"]),
      user("locked-hr", ["user-manager", "assigner", "no-assign", "access"]),
      user("lead", ["user-manager", "access", "no-prod"]),
      user("contractor-mgr", ["user-manager", "access", "short"]),
      user("desk", ["helpdesk", "access"]),
      user("hr-desk", ["helpdesk", "assigner"]),
    ],
  });
  for (const name of ["alice", "mgr", "hr", "locked-hr", "lead", "contractor-mgr", "desk", "hr-desk"])
    await setPassword(env.backend, name, PASSWORD);
}, 120_000);

afterAll(async () => {
  await env?.close();
});

describe("role assignment", () => {
  it("users/create alone cannot make an admin user or an admin bot; nothing is written", async () => {
    const u = await createUser("mgr", "mallory", ["admin"]);
    expect(u.code).toBe(status.PERMISSION_DENIED);
    expect(u.details).toMatch(/do not hold: admin/);
    expect(env.source.get("User", "mallory")).toBeUndefined();
    const b = await createBot("mgr", "evil-bot", ["access", "ops"]);
    expect(b.code).toBe(status.PERMISSION_DENIED);
    expect(b.details).toMatch(/do not hold: ops/);
    expect(env.source.get("AgentIdentity", "evil-bot")).toBeUndefined();
  });

  it("roles the caller holds can be given", async () => {
    expect((await createUser("mgr", "newbie", ["access"])).code).toBe(status.OK);
    expect(env.source.get("User", "newbie")?.spec.roles).toEqual(["access"]);
    expect((await createBot("mgr", "ci-bot", ["access"])).code).toBe(status.OK);
  });

  it("roles: assign allows any role; a deny of it wins", async () => {
    expect((await createUser("hr", "ops-person", ["ops"])).code).toBe(status.OK);
    const denied = await createUser("locked-hr", "ops-2", ["ops"]);
    expect(denied.code).toBe(status.PERMISSION_DENIED);
    // Still may give what it holds, its denying role included.
    expect((await createUser("locked-hr", "plain", ["access", "no-assign"])).code).toBe(status.OK);
  });

  it("a login the caller does not have cannot ride in on a role it holds", async () => {
    // access expands {{internal.logins}}: logins [root] would make it root on every node.
    const r = await createUser("mgr", "rooty", ["access"], ["root"]);
    expect(r.code).toBe(status.PERMISSION_DENIED);
    expect(r.details).toMatch(/logins you do not have: root/);
    expect(env.source.get("User", "rooty")).toBeUndefined();
    expect((await createUser("mgr", "mgr-twin", ["access"], ["mgr"])).code).toBe(status.OK);
    // With roles: assign, any logins.
    expect((await createUser("alice", "rooty", ["access"], ["root"])).code).toBe(status.OK);
  });

  it("a role of the caller that denies something, or restricts options, must come along", async () => {
    const noDeny = await createUser("lead", "prod-reacher", ["access"]);
    expect(noDeny.code).toBe(status.PERMISSION_DENIED);
    expect(noDeny.details).toMatch(/must come along: no-prod/);
    expect(env.source.get("User", "prod-reacher")).toBeUndefined();
    const bot = await createBot("lead", "prod-bot", ["access"]);
    expect(bot.code).toBe(status.PERMISSION_DENIED);
    expect(env.source.get("AgentIdentity", "prod-bot")).toBeUndefined();
    expect((await createUser("lead", "teammate", ["access", "no-prod"])).code).toBe(status.OK);

    const looser = await createUser("contractor-mgr", "long-lived", ["access"]);
    expect(looser.code).toBe(status.PERMISSION_DENIED);
    expect(looser.details).toMatch(/options looser than yours: max_session_ttl, permit_port_forwarding/);
    expect((await createUser("contractor-mgr", "contractor", ["access", "short"])).code).toBe(status.OK);
  });

  it("users/update cannot take over an account with more than the caller has through a password reset", async () => {
    // The reset token opens the account: an admin's would make the helpdesk admin.
    const admin = await resetPassword("desk", "alice");
    expect(admin.code).toBe(status.PERMISSION_DENIED);
    expect(admin.details).toMatch(/do not hold: admin/);
    // bob's own logins are not the helpdesk's either.
    const bob = await resetPassword("desk", "bob");
    expect(bob.code).toBe(status.PERMISSION_DENIED);
    expect(bob.details).toMatch(/logins you do not have: bob/);
    // An account holding no more than the caller (created above without logins) can be reset.
    expect((await resetPassword("desk", "newbie")).code).toBe(status.OK);
    // roles: assign resets anyone.
    expect((await resetPassword("hr-desk", "bob")).code).toBe(status.OK);
  });

  it("the admin preset assigns anything (its * rules include assign)", async () => {
    expect((await createUser("alice", "second-admin", ["admin"])).code).toBe(status.OK);
    expect((await createBot("alice", "deploy-bot", ["ops"])).code).toBe(status.OK);
  });
});
