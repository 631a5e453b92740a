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

const createUser = async (caller: string, name: string, roles: string[]) =>
  statusOf(callUnary(env.client, "CreateUser", { name, roles, logins: [] }, await as(caller)));
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
      user("alice", ["admin"]),
      user("mgr", ["user-manager", "access"]),
      user("hr", ["user-manager", "assigner"]),
      user("locked-hr", ["user-manager", "assigner", "no-assign", "access"]),
    ],
  });
  for (const name of ["alice", "mgr", "hr", "locked-hr"]) await setPassword(env.backend, name, PASSWORD);
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
    // Still may give what it holds.
    expect((await createUser("locked-hr", "plain", ["access"])).code).toBe(status.OK);
  });

  it("the admin preset assigns anything (its * rules include assign)", async () => {
    expect((await createUser("alice", "second-admin", ["admin"])).code).toBe(status.OK);
    expect((await createBot("alice", "deploy-bot", ["ops"])).code).toBe(status.OK);
  });
});
