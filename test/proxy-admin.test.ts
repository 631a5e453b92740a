// The console's admin routes (users, roles, join tokens, bots) through the real embedded platform
// (`svcd start` in this process: folder source, auth's resource writer, SQLite): what each answers,
// where users come from, the one-time links and agent command really working (a user sets a
// password with the link; `svcd agent` joins with the command), an ordinary user refused every
// admin action, CSRF on cookie sessions, no secret in list answers, bad input refused.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { callUnary, createAuthClient, userMetadata } from "../server/auth/client.ts";
import { type RunningPlatform, startEmbedded } from "../server/embedded/start.ts";
import { csrfTokenFor } from "../server/proxy/credentials.ts";
import { agentCommand } from "../server/proxy/routes/admin-tokens.ts";
import { managedByOf } from "../server/proxy/routes/admin-users.ts";
import { type Daemon, spawnDaemon, waitFor } from "./cli-fixture.ts";
import { freePort } from "./harness/ports.ts";
import { type HttpResponse, HttpsClient } from "./proxy-https-client.ts";

const ADMIN_PASSWORD = "admin-console-password-1";
const ALICE_PASSWORD = "alice-console-password-1";

let dir: string;
let platform: RunningPlatform;
let client: HttpsClient;
let publicOrigin: string;
let admin: string;
let agent: Daemon | undefined;

async function login(username: string, password: string): Promise<string> {
  const res = await client.send({ method: "POST", path: "/v1/webapi/login", body: { username, password } });
  expect(res.status, res.text).toBe(200);
  return (res.json as { session_id: string }).session_id;
}

const as = (session: string, method: string, path: string, body?: unknown): Promise<HttpResponse> =>
  client.send({
    method,
    path,
    headers: { authorization: `Bearer ${session}` },
    ...(body === undefined ? {} : { body }),
  });
const codeOf = (res: HttpResponse) => (res.json as { error?: { code: string } }).error?.code;

interface UserRow {
  name: string;
  managed_by: string;
  editable: boolean;
  roles: string[];
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "svc-proxy-admin-"));
  const passwordFile = join(dir, "admin-password");
  await writeFile(passwordFile, ADMIN_PASSWORD);
  platform = await startEmbedded(
    {
      dataDir: join(dir, "data"),
      authListen: "127.0.0.1:0",
      proxyListen: "127.0.0.1:0",
      diagListen: "127.0.0.1:0",
    },
    { env: { SVC_ADMIN_PASSWORD_FILE: passwordFile }, logger: pino({ level: "silent" }) },
  );
  const publicAddr = platform.data.config.proxy.public_addr;
  publicOrigin = `https://${publicAddr}`;
  client = new HttpsClient(
    platform.proxyUrl,
    platform.hostCaPem,
    publicAddr.slice(0, publicAddr.lastIndexOf(":")),
  );
  admin = await login("admin", ADMIN_PASSWORD);
}, 60_000);

afterAll(async () => {
  await agent?.stop();
  await platform?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("users", () => {
  it("lists the first admin as managed in the manifests folder, read-only", async () => {
    const res = await as(admin, "GET", "/v1/webapi/admin/users");
    expect(res.status, res.text).toBe(200);
    const rows = (res.json as { items: UserRow[] }).items;
    expect(rows).toContainEqual(
      expect.objectContaining({ name: "admin", managed_by: "folder", editable: false, roles: ["admin"] }),
    );
  });

  it("creates a user with a one-time reset link the user sets a password with, then deletes it", async () => {
    const created = await as(admin, "POST", "/v1/webapi/admin/users", {
      name: "alice",
      roles: ["access"],
      logins: ["alice"],
    });
    expect(created.status, created.text).toBe(201);
    const body = created.json as {
      user: UserRow;
      reset: { reset_url: string; login_command: string; expires_at: string; username: string };
    };
    expect(body.user).toMatchObject({ name: "alice", managed_by: "api", editable: true, roles: ["access"] });
    const url = new URL(body.reset.reset_url);
    expect(url.origin).toBe(publicOrigin);
    expect(url.pathname).toBe("/web/reset");
    const token = url.searchParams.get("token") ?? "";
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(body.reset.login_command).toBe(`svc login --proxy ${url.host} --reset-token ${token}`);
    expect(Date.parse(body.reset.expires_at)).toBeGreaterThan(Date.now());

    // The list says where alice is managed, and carries no token.
    const listed = await as(admin, "GET", "/v1/webapi/admin/users");
    expect((listed.json as { items: UserRow[] }).items).toContainEqual(
      expect.objectContaining({ name: "alice", managed_by: "api", editable: true }),
    );
    expect(listed.text).not.toContain(token);

    // The link works once, as the reset page would use it.
    const set = await client.send({
      method: "POST",
      path: "/v1/webapi/password/reset",
      body: { token, password: ALICE_PASSWORD },
    });
    expect(set.status, set.text).toBe(200);
    const alice = await login("alice", ALICE_PASSWORD);

    // A new link revokes alice's sessions at once.
    const reset = await as(admin, "POST", "/v1/webapi/admin/users/alice/reset");
    expect(reset.status, reset.text).toBe(200);
    expect(reset.json).toMatchObject({ username: "alice", revoked_sessions: 1 });
    expect((await as(alice, "GET", "/v1/webapi/session")).status).toBe(401);

    const deleted = await as(admin, "DELETE", "/v1/webapi/admin/users/alice");
    expect(deleted.status, deleted.text).toBe(200);
    expect(deleted.json).toEqual({ deleted: "alice" });
    const again = await as(admin, "DELETE", "/v1/webapi/admin/users/alice");
    expect(again.status).toBe(404);
    const after = await as(admin, "GET", "/v1/webapi/admin/users");
    expect((after.json as { items: UserRow[] }).items.map((u) => u.name)).not.toContain("alice");
  });

  it("refuses to delete or reset a user managed in the manifests folder (412)", async () => {
    for (const [method, path] of [
      ["DELETE", "/v1/webapi/admin/users/admin"],
      ["POST", "/v1/webapi/admin/users/admin/reset"],
    ] as const) {
      const res = await as(admin, method, path);
      expect(res.status, `${method} ${path}: ${res.text}`).toBe(412);
      expect(res.text).toContain("managed in the manifests folder");
    }
  });

  it("refuses an unknown role and an existing name, from auth", async () => {
    const unknown = await as(admin, "POST", "/v1/webapi/admin/users", { name: "bob", roles: ["nope"] });
    expect(unknown.status).toBe(400);
    expect(unknown.text).toContain("unknown role");
    const existing = await as(admin, "POST", "/v1/webapi/admin/users", { name: "admin", roles: ["access"] });
    expect(existing.status).toBe(409);
  });
});

describe("roles", () => {
  it("lists the roles read-only with where they come from and their rules", async () => {
    const res = await as(admin, "GET", "/v1/webapi/admin/roles");
    expect(res.status, res.text).toBe(200);
    const rows = (
      res.json as { items: Array<{ name: string; managed_by: string; spec: { allow?: unknown } }> }
    ).items;
    const access = rows.find((r) => r.name === "access");
    expect(access?.managed_by).toBe("folder");
    expect(access?.spec.allow).toBeDefined();
    expect(rows.map((r) => r.name)).toContain("admin");
  });
});

describe("join tokens", () => {
  it("creates a token whose agent command joins a real node, lists it without its secret, deletes it", async () => {
    const res = await as(admin, "POST", "/v1/webapi/admin/tokens", {
      name: "rack1",
      ttl_seconds: 1800,
      node_labels: { env: "dev" },
    });
    expect(res.status, res.text).toBe(201);
    const t = res.json as {
      token: { name: string; expires_at: string; node_labels: Record<string, string>; roles: string[] };
      secret: string;
      ca_pin: string;
      agent_command: string;
    };
    expect(t.token).toMatchObject({ name: "rack1", node_labels: { env: "dev" }, roles: ["node"] });
    expect(Date.parse(t.token.expires_at) - Date.now()).toBeGreaterThan(1700_000);
    expect(t.secret).toMatch(/^rack1\.[A-Za-z0-9_-]{43}$/);
    expect(t.ca_pin).toMatch(/^sha256:[0-9a-f]{64}$/);
    // The proxy's public address (this run's bound one), not auth's: nodes join through the proxy.
    expect(t.agent_command).toBe(
      `svcd agent --proxy ${new URL(platform.proxyUrl).host} --ca-pin ${t.ca_pin} --token ${t.secret} --data-dir /var/lib/svc-agent`,
    );

    const listed = await as(admin, "GET", "/v1/webapi/admin/tokens");
    expect(listed.status).toBe(200);
    expect((listed.json as { items: Array<{ name: string }> }).items).toContainEqual(
      expect.objectContaining({
        name: "rack1",
        join_method: "token",
        bot_name: "",
        used: false,
        used_by: "",
      }),
    );
    expect(listed.text).not.toContain(t.secret.split(".")[1]);

    // The command as a person pastes it, with this test's folder and port for the node.
    const port = await freePort();
    const args = t.agent_command.split(" ").slice(1);
    args[args.indexOf("--data-dir") + 1] = join(dir, "agent");
    agent = spawnDaemon(
      [
        ...args,
        "--listen",
        `127.0.0.1:${port}`,
        "--advertise-address",
        `127.0.0.1:${port}`,
        "--hostname",
        "rack1-node",
      ],
      {},
    );
    await waitFor(async () => {
      if (agent?.child.exitCode !== null) throw new Error(`agent exited: ${agent?.output()}`);
      const nodes = await as(admin, "GET", "/v1/webapi/nodes");
      return (
        nodes.json as { items: Array<{ hostname: string; status: string; labels: Record<string, string> }> }
      ).items.some((n) => n.hostname === "rack1-node" && n.status === "online" && n.labels["env"] === "dev");
    }, "the joined node online");

    // The list says which node spent it.
    const spent = await as(admin, "GET", "/v1/webapi/admin/tokens");
    expect(
      (spent.json as { items: Array<{ name: string }> }).items.find((x) => x.name === "rack1"),
    ).toMatchObject({
      used: true,
      used_by: "rack1-node",
    });

    const other = await as(admin, "POST", "/v1/webapi/admin/tokens", {});
    expect(other.status, other.text).toBe(201);
    const name = (other.json as { token: { name: string } }).token.name;
    expect(name).toMatch(/^node-[0-9a-f]{16}$/);
    const del = await as(admin, "DELETE", `/v1/webapi/admin/tokens/${name}`);
    expect(del.status, del.text).toBe(200);
    expect((await as(admin, "DELETE", `/v1/webapi/admin/tokens/${name}`)).status).toBe(404);
  }, 90_000);
});

describe("bots", () => {
  it("lists agent identities with their lock state and no bootstrap secret", async () => {
    const grpc = createAuthClient({
      address: platform.authAddress,
      caPems: [platform.hostCaPem],
      serverName: "localhost",
    });
    try {
      const made = await callUnary(
        grpc,
        "CreateAgentIdentity",
        { name: "ci-bot", roles: ["access"], cert_ttl: "30m" },
        userMetadata(admin),
      );
      const res = await as(admin, "GET", "/v1/webapi/admin/bots");
      expect(res.status, res.text).toBe(200);
      expect((res.json as { items: unknown[] }).items).toContainEqual(
        expect.objectContaining({
          name: "ci-bot",
          roles: ["access"],
          cert_ttl: "30m",
          generation: 0,
          locked: false,
        }),
      );
      expect(res.text).not.toContain((made.token ?? "").split(".")[1]);
      // Its bootstrap token is a join token naming the bot, listed without its secret too.
      const tokens = await as(admin, "GET", "/v1/webapi/admin/tokens");
      expect(tokens.text).toContain('"bot_name":"ci-bot"');
      expect(tokens.text).not.toContain((made.token ?? "").split(".")[1]);
    } finally {
      grpc.close();
    }
  });
});

describe("an ordinary user", () => {
  let user: string;
  beforeAll(async () => {
    const created = await as(admin, "POST", "/v1/webapi/admin/users", { name: "olivia", roles: ["access"] });
    expect(created.status, created.text).toBe(201);
    const token = new URL(
      (created.json as { reset: { reset_url: string } }).reset.reset_url,
    ).searchParams.get("token");
    const set = await client.send({
      method: "POST",
      path: "/v1/webapi/password/reset",
      body: { token, password: ALICE_PASSWORD },
    });
    expect(set.status, set.text).toBe(200);
    user = await login("olivia", ALICE_PASSWORD);
  });

  const actions: Array<[string, string, unknown?]> = [
    ["GET", "/v1/webapi/admin/users"],
    ["POST", "/v1/webapi/admin/users", { name: "mallory", roles: ["admin"] }],
    ["DELETE", "/v1/webapi/admin/users/olivia"],
    ["DELETE", "/v1/webapi/admin/users/admin"],
    ["POST", "/v1/webapi/admin/users/olivia/reset"],
    ["POST", "/v1/webapi/admin/users/admin/reset"],
    ["GET", "/v1/webapi/admin/roles"],
    ["GET", "/v1/webapi/admin/tokens"],
    ["POST", "/v1/webapi/admin/tokens", { name: "sneaky" }],
    ["DELETE", "/v1/webapi/admin/tokens/rack1"],
    ["GET", "/v1/webapi/admin/bots"],
  ];
  for (const [method, path, body] of actions) {
    it(`is refused ${method} ${path} (403, nothing changed)`, async () => {
      const res = await as(user, method, path, body);
      expect(res.status, res.text).toBe(403);
      expect(codeOf(res)).toBe("access_denied");
    });
  }

  it("changed nothing with those calls", async () => {
    const users = await as(admin, "GET", "/v1/webapi/admin/users");
    const names = (users.json as { items: UserRow[] }).items.map((u) => u.name);
    expect(names).toContain("olivia");
    expect(names).not.toContain("mallory");
    const tokens = await as(admin, "GET", "/v1/webapi/admin/tokens");
    expect(tokens.text).not.toContain("sneaky");
  });

  it("anonymous callers get 401", async () => {
    const res = await client.send({ path: "/v1/webapi/admin/users" });
    expect(res.status).toBe(401);
  });
});

describe("cookie sessions need CSRF proof on every change", () => {
  it("refuses a POST without the token or from another origin, takes it with both", async () => {
    const cookie = `__Host-svc_session=${admin}`;
    const body = { name: "csrf-check" };
    const path = "/v1/webapi/admin/tokens";
    const missing = await client.send({
      method: "POST",
      path,
      body,
      headers: { cookie, origin: publicOrigin },
    });
    expect(missing.status).toBe(403);
    const foreign = await client.send({
      method: "POST",
      path,
      body,
      headers: { cookie, origin: "https://evil.example", "x-csrf-token": csrfTokenFor(admin) },
    });
    expect(foreign.status).toBe(403);
    const ok = await client.send({
      method: "POST",
      path,
      body,
      headers: { cookie, origin: publicOrigin, "x-csrf-token": csrfTokenFor(admin) },
    });
    expect(ok.status, ok.text).toBe(201);
    const del = await client.send({
      method: "DELETE",
      path: `${path}/csrf-check`,
      headers: { cookie, origin: publicOrigin },
    });
    expect(del.status).toBe(403);
  });
});

describe("bad input is a 400 before auth is asked", () => {
  const cases: Array<[string, string, unknown?]> = [
    ["POST", "/v1/webapi/admin/users", { name: "Bad Name", roles: ["access"] }],
    ["POST", "/v1/webapi/admin/users", { name: "bob" }],
    ["POST", "/v1/webapi/admin/users", { name: "bob", roles: [] }],
    ["POST", "/v1/webapi/admin/users", { name: "bob", roles: ["access"], logins: ["Root!"] }],
    ["POST", "/v1/webapi/admin/users", { name: "bob", roles: ["access"], password: "x" }],
    ["POST", "/v1/webapi/admin/users/-bad-/reset"],
    ["DELETE", "/v1/webapi/admin/users/UPPER"],
    ["POST", "/v1/webapi/admin/tokens", { name: "UPPER" }],
    ["POST", "/v1/webapi/admin/tokens", { ttl_seconds: 5 }],
    ["POST", "/v1/webapi/admin/tokens", { ttl_seconds: 31 * 24 * 3600 }],
    ["POST", "/v1/webapi/admin/tokens", { ttl_seconds: "3600" }],
    ["POST", "/v1/webapi/admin/tokens", { node_labels: { env: 1 } }],
    ["DELETE", "/v1/webapi/admin/tokens/a_b"],
  ];
  for (const [method, path, body] of cases) {
    it(`${method} ${path} ${JSON.stringify(body ?? null)} -> 400`, async () => {
      const res = await as(admin, method, path, body);
      expect(res.status, res.text).toBe(400);
      expect(codeOf(res)).toBe("bad_parameter");
    });
  }
});

describe("in Kubernetes mode", () => {
  it("a user or role without the svcctl label is managed in Kubernetes; with it, through the API", () => {
    const user = (labels?: Record<string, string>) => ({
      apiVersion: "svc.dev/v1" as const,
      kind: "User" as const,
      metadata: { name: "x", ...(labels ? { labels } : {}) },
      spec: { roles: ["access"] },
    });
    expect(managedByOf(user(), "kubernetes")).toBe("kubernetes");
    expect(managedByOf(user({ "app.kubernetes.io/managed-by": "Helm" }), "kubernetes")).toBe("kubernetes");
    expect(managedByOf(user({ "app.kubernetes.io/managed-by": "svcctl" }), "kubernetes")).toBe("api");
  });

  it("the agent command names auth's certificate when nodes reach it by another name", () => {
    const target = {
      authAddress: "auth.example.com:3025",
      hostCaPem: platform.hostCaPem,
      serverName: "svc-auth.svc-system.svc",
    };
    const { command, pin } = agentCommand(target, "t.s");
    expect(command).toBe(
      `svcd agent --auth auth.example.com:3025 --auth-server-name svc-auth.svc-system.svc --ca-pin ${pin} --token t.s --data-dir /var/lib/svc-agent`,
    );
    expect(agentCommand({ ...target, serverName: "auth.example.com" }, "t.s").command).not.toContain(
      "--auth-server-name",
    );
  });
});
