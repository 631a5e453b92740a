// The two CLIs as users run them, against a real embedded platform (`svcd start`), a real node
// (`svcd agent` joined with the token `svcctl tokens add` printed) and real OpenSSH for the files
// `svc certs` writes. Each step builds on the previous one, like an admin's first hour.
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { request } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml, stringify as stringifyYaml } from "yaml";
import { type Daemon, json, type RunResult, run, spawnDaemon, waitFor } from "./cli-fixture.ts";
import { launchChromium } from "./harness/chromium.ts";
import { freePort } from "./harness/ports.ts";
import { certSshArgs, svcCertFiles } from "./harness/ssh-login.ts";
import { SoftAuthenticator } from "./proxy-soft-authenticator.ts";

const execFileP = promisify(execFile);
const STEP = 240_000;

function httpsGet(port: number, ca: string, path: string): Promise<{ status: number; body: string }> {
  return httpsSend(port, ca, "GET", path);
}

function httpsSend(
  port: number,
  ca: string,
  method: string,
  path: string,
  o: { sessionId?: string; body?: unknown } = {},
): Promise<{ status: number; body: string }> {
  const headers: Record<string, string> = {};
  if (o.body !== undefined) headers["content-type"] = "application/json";
  if (o.sessionId) headers.authorization = `Bearer ${o.sessionId}`;
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, path, ca, method, headers }, (res) => {
      let body = "";
      res.on("data", (d: Buffer) => {
        body += d.toString();
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on("error", reject);
    req.end(o.body === undefined ? undefined : JSON.stringify(o.body));
  });
}

describe("svc and svcctl against a real embedded platform", () => {
  let dir: string;
  let dataDir: string;
  let ports: { auth: number; proxy: number; diag: number; node: number };
  let platform: Daemon | undefined;
  let agent: Daemon | undefined;
  let caFile: string;
  let proxy: string;
  let adminEnv: NodeJS.ProcessEnv;
  let aliceEnv: NodeJS.ProcessEnv;
  let startArgs: string[];

  const svc = (args: string[], env: NodeJS.ProcessEnv, input?: string): Promise<RunResult> =>
    run("svc", args, { env, ...(input !== undefined ? { input } : {}) });
  const svcctl = (args: string[], env: NodeJS.ProcessEnv = adminEnv): Promise<RunResult> =>
    run("svcctl", ["--auth", `127.0.0.1:${ports.auth}`, ...args], { env });

  async function startPlatform(): Promise<Daemon> {
    const d = spawnDaemon(startArgs, { SVC_DATA_DIR: dataDir, SVC_ADMIN_PASSWORD_FILE: "" });
    await waitFor(() => d.output().includes("svc is running") || d.child.exitCode !== null, "svcd start");
    expect(d.child.exitCode, d.output()).toBeNull();
    return d;
  }

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "svc-cli-e2e-"));
    dataDir = join(dir, "data");
    ports = {
      auth: await freePort(),
      proxy: await freePort(),
      diag: await freePort(),
      node: await freePort(),
    };
    proxy = `127.0.0.1:${ports.proxy}`;
    caFile = join(dataDir, "host-ca.pem");
    adminEnv = { SVC_HOME: join(dir, "admin-home"), SVC_DATA_DIR: dataDir };
    aliceEnv = { SVC_HOME: join(dir, "alice-home") };
    startArgs = [
      "start",
      "--auth-listen",
      `127.0.0.1:${ports.auth}`,
      "--proxy-listen",
      proxy,
      "--diag-listen",
      `127.0.0.1:${ports.diag}`,
    ];
    platform = await startPlatform();
  });

  afterAll(async () => {
    await agent?.stop();
    await platform?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it(
    "first start prints a one-time reset token, not a password; svc login --reset-token uses it once",
    async () => {
      const out = platform?.output() ?? "";
      const token = /--reset-token (\S+)/.exec(out)?.[1];
      expect(token, out).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(out).toContain(`/web/reset?token=${token}`);
      expect(out).not.toMatch(/one-time secret/);

      // Too short: refused before the token is spent (usage error).
      await writeFile(join(dir, "short"), "short\n");
      const short = await svc(
        [
          "login",
          "--proxy",
          proxy,
          "--ca",
          caFile,
          "--reset-token",
          token ?? "",
          "--password-file",
          join(dir, "short"),
        ],
        adminEnv,
      );
      expect(short.code, short.stderr).toBe(2);
      expect(short.stderr).toMatch(/at least 12/);

      await writeFile(join(dir, "admin-pw"), "admin-password-for-tests\n");
      const login = await svc(
        [
          "login",
          "--proxy",
          proxy,
          "--ca",
          caFile,
          "--reset-token",
          token ?? "",
          "--password-file",
          join(dir, "admin-pw"),
          "--json",
        ],
        adminEnv,
      );
      expect(login.code, login.stderr).toBe(0);
      expect(json(login)).toMatchObject({ user: "admin", proxy });
      const profile = join(dir, "admin-home", "profile.json");
      expect((await stat(profile)).mode & 0o077).toBe(0);
      expect(JSON.parse(await readFile(profile, "utf8"))).toMatchObject({ user: "admin", proxy });

      // Single use.
      const again = await svc(
        ["login", "--reset-token", token ?? "", "--password-file", join(dir, "admin-pw")],
        adminEnv,
      );
      expect(again.code).toBe(3);
      expect(again.stderr).toMatch(/reset token is not valid/);

      // The password chosen works for a plain login.
      const plain = await svc(
        ["login", "--user", "admin", "--password-file", join(dir, "admin-pw")],
        adminEnv,
      );
      expect(plain.code, plain.stderr).toBe(0);
    },
    STEP,
  );

  it(
    "svc ping reports cluster and policy; status shows the session",
    async () => {
      const ping = await svc(["ping", "--json"], adminEnv);
      expect(ping.code, ping.stderr).toBe(0);
      expect(json(ping)).toMatchObject({
        verdict: "ok",
        client_version: expect.any(String),
        server_version: expect.any(String),
      });
      expect(ping.stderr).not.toMatch(/warning/);
      const status = await svc(["status", "--json"], adminEnv);
      expect(status.code, status.stderr).toBe(0);
      expect(json(status)).toMatchObject({ username: "admin", roles: ["admin"] });
    },
    STEP,
  );

  it(
    "svcctl users add prints a reset link; the new user sets a password; non-admins are refused (4)",
    async () => {
      const add = await svcctl([
        "users",
        "add",
        "alice",
        "--roles",
        "access",
        "--logins",
        "alice,root",
        "--json",
      ]);
      expect(add.code, add.stderr).toBe(0);
      const created = json<{ reset_token: string; reset_url: string; login_command: string }>(add);
      expect(created.reset_url).toBe(`https://${proxy}/web/reset?token=${created.reset_token}`);
      expect(created.login_command).toContain(`--reset-token ${created.reset_token}`);

      const dup = await svcctl(["users", "add", "alice", "--roles", "access"]);
      expect(dup.code).toBe(1);
      expect(dup.stderr).toMatch(/already exists/);
      const badRole = await svcctl(["users", "add", "bob", "--roles", "no-such-role"]);
      expect(badRole.code).toBe(2);

      await writeFile(join(dir, "alice-pw"), "alice-password-for-tests\n");
      const login = await svc(
        [
          "login",
          "--proxy",
          proxy,
          "--ca",
          caFile,
          "--reset-token",
          created.reset_token,
          "--password-file",
          join(dir, "alice-pw"),
        ],
        aliceEnv,
      );
      expect(login.code, login.stderr).toBe(0);
      expect(login.stdout).toMatch(/as alice/);

      const users = await svcctl(["users", "ls", "--json"]);
      expect(json<Array<{ name: string; roles: string[]; logins: string[] }>>(users)).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ name: "alice", roles: ["access"], logins: ["alice", "root"] }),
        ]),
      );
      // alice's own session has no users/list: auth says no (exit 4), not svcctl.
      const denied = await svcctl(["users", "ls"], aliceEnv);
      expect(denied.code, denied.stderr).toBe(4);
      const roles = await svcctl(["roles", "ls", "--json"]);
      expect(json<Array<{ name: string }>>(roles).map((r) => r.name)).toEqual(
        expect.arrayContaining(["admin", "access"]),
      );
    },
    STEP,
  );

  it(
    "svcctl users reset revokes the user's sessions and issues a new token",
    async () => {
      const reset = await svcctl(["users", "reset", "alice", "--json"]);
      expect(reset.code, reset.stderr).toBe(0);
      const r = json<{ reset_token: string; revoked_sessions: number }>(reset);
      expect(r.revoked_sessions).toBeGreaterThanOrEqual(1);
      const status = await svc(["status"], aliceEnv);
      expect(status.code).toBe(3);
      await writeFile(join(dir, "alice-pw2"), "alice-second-password\n");
      const login = await svc(
        ["login", "--reset-token", r.reset_token, "--password-file", join(dir, "alice-pw2")],
        aliceEnv,
      );
      expect(login.code, login.stderr).toBe(0);
      const old = await svc(["login", "--user", "alice", "--password-file", join(dir, "alice-pw")], aliceEnv);
      expect(old.code).toBe(3);
    },
    STEP,
  );

  it(
    "the reset link works in a browser: /web/reset sets the password, the token is gone from the address bar",
    async () => {
      const add = await svcctl(["users", "add", "carol", "--roles", "access", "--json"]);
      expect(add.code, add.stderr).toBe(0);
      const { reset_url } = json<{ reset_url: string }>(add);
      const browser = await launchChromium({ ignoreHTTPSErrors: true });
      try {
        const page = await browser.context.newPage();
        await page.goto(reset_url);
        expect(page.url()).not.toContain("token=");
        await page.fill("#password", "carol-password-from-browser");
        await page.fill("#again", "carol-password-from-browser");
        await page.click("#submit");
        await page.waitForSelector("#done:not([hidden])", { timeout: 30_000 });
        expect(await page.textContent("#user")).toBe("carol");
      } finally {
        await browser.close();
      }
      const carolEnv = { SVC_HOME: join(dir, "carol-home") };
      await writeFile(join(dir, "carol-pw"), "carol-password-from-browser\n");
      const login = await svc(
        [
          "login",
          "--proxy",
          proxy,
          "--ca",
          caFile,
          "--user",
          "carol",
          "--password-file",
          join(dir, "carol-pw"),
        ],
        carolEnv,
      );
      expect(login.code, login.stderr).toBe(0);
      expect((await svcctl(["users", "rm", "carol"])).code).toBe(0);
    },
    STEP,
  );

  it(
    "svc login for a user with a WebAuthn device says the CLI cannot answer it (3) and where to go",
    async () => {
      const add = await svcctl(["users", "add", "dave", "--roles", "access", "--json"]);
      expect(add.code, add.stderr).toBe(0);
      const daveEnv = { SVC_HOME: join(dir, "dave-home") };
      await writeFile(join(dir, "dave-pw"), "dave-password-for-tests\n");
      const first = await svc(
        [
          "login",
          "--proxy",
          proxy,
          "--ca",
          caFile,
          "--reset-token",
          json<{ reset_token: string }>(add).reset_token,
          "--password-file",
          join(dir, "dave-pw"),
        ],
        daveEnv,
      );
      expect(first.code, first.stderr).toBe(0);
      const sessionId = String(
        JSON.parse(await readFile(join(dir, "dave-home", "profile.json"), "utf8")).session_id,
      );
      // Enrol a software authenticator for the public origin (the browser's part, done by hand).
      const ca = await readFile(caFile, "utf8");
      const begin = await httpsSend(ports.proxy, ca, "POST", "/v1/webapi/mfa/webauthn/register/begin", {
        sessionId,
        body: {},
      });
      expect(begin.status, begin.body).toBe(200);
      const { challenge_id, webauthn } = JSON.parse(begin.body);
      const key = new SoftAuthenticator("https://localhost:3080");
      const finish = await httpsSend(ports.proxy, ca, "POST", "/v1/webapi/mfa/webauthn/register/finish", {
        sessionId,
        body: { challenge_id, device_name: "soft", credential: key.register(webauthn) },
      });
      expect(finish.status, finish.body).toBe(201);

      const login = await svc(["login", "--user", "dave", "--password-file", join(dir, "dave-pw")], daveEnv);
      expect(login.code).toBe(3);
      expect(login.stderr).toMatch(/WebAuthn.*no platform authenticator.*\/web\/login/);
      expect((await svcctl(["users", "rm", "dave"])).code).toBe(0);
    },
    STEP,
  );

  it(
    "svcctl tokens add prints a working svcd agent command; the node shows up in svc ls and svcctl nodes ls",
    async () => {
      const add = await svcctl([
        "tokens",
        "add",
        "--name",
        "rack1",
        "--ttl",
        "30m",
        "--labels",
        "env=dev,rack=1",
        "--json",
      ]);
      expect(add.code, add.stderr).toBe(0);
      const t = json<{ token: string; ca_pin: string; agent_command: string }>(add);
      expect(t.token).toMatch(/^rack1\.[A-Za-z0-9_-]{43}$/);
      expect(t.agent_command).toContain(`--ca-pin ${t.ca_pin}`);
      expect(t.agent_command).toContain(`--token ${t.token}`);

      const listed = await svcctl(["tokens", "ls", "--json"]);
      const tokens = json<Array<{ name: string; node_labels: Record<string, string> }>>(listed);
      expect(tokens).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ name: "rack1", node_labels: { env: "dev", rack: "1" } }),
        ]),
      );
      expect(listed.stdout).not.toContain(t.token);

      // Run the node with the printed command's flags (its own folder and a test port).
      agent = spawnDaemon(
        [
          "agent",
          "--auth",
          `127.0.0.1:${ports.auth}`,
          "--ca-pin",
          t.ca_pin,
          "--token",
          t.token,
          "--data-dir",
          join(dir, "agent"),
          "--listen",
          `127.0.0.1:${ports.node}`,
          "--advertise-address",
          `127.0.0.1:${ports.node}`,
          "--hostname",
          "node1",
        ],
        {},
      );
      await waitFor(async () => {
        if (agent?.child.exitCode !== null) throw new Error(`agent exited: ${agent?.output()}`);
        const ls = await svc(["ls", "--json"], adminEnv);
        return (
          ls.code === 0 &&
          json<Array<{ hostname: string; status: string }>>(ls).some(
            (n) => n.hostname === "node1" && n.status === "online",
          )
        );
      }, "node1 online");

      const ls = await svc(["ls"], aliceEnv);
      expect(ls.code, ls.stderr).toBe(0);
      expect(ls.stdout).toMatch(/node1\s+online\s+127\.0\.0\.1:\d+\s+env=dev,rack=1/);
      const nodes = await svcctl(["nodes", "ls", "--json"]);
      expect(json<Array<{ hostname: string; labels: Record<string, string> }>>(nodes)).toEqual([
        expect.objectContaining({ hostname: "node1", labels: { env: "dev", rack: "1" } }),
      ]);

      const rm = await svcctl(["tokens", "rm", "rack1"]);
      expect(rm.code, rm.stderr).toBe(0);
      expect((await svcctl(["tokens", "rm", "rack1"])).code).toBe(5);
    },
    STEP,
  );

  it(
    "svc certs writes files that plain OpenSSH logs in with, trusting the node through the host CA",
    async () => {
      const out = join(dir, "keys");
      const certs = await svc(["certs", "--out", out, "--ttl", "10m", "--json"], aliceEnv);
      expect(certs.code, certs.stderr).toBe(0);
      const f = json<{ private_key: string; certificate: string; known_hosts: string; principals: string[] }>(
        certs,
      );
      expect(f.principals).toEqual(expect.arrayContaining(["alice", "root"]));
      expect((await stat(f.private_key)).mode & 0o077).toBe(0);
      const sshAs = (alias: string) =>
        execFileP(
          "ssh",
          [
            ...certSshArgs({ ...svcCertFiles(f), port: ports.node, hostAlias: alias }),
            "echo openssh-$((40+2))",
          ],
          { timeout: 60_000 },
        );
      const { stdout } = await sshAs("node1");
      expect(stdout.trim()).toBe("openssh-42");
      // Checked by node ID instead (the id svc ls --json shows; docs/agent.md), like svc ssh does.
      const listed = json<Array<{ id: string; hostname: string }>>(await svc(["ls", "--json"], aliceEnv));
      const nodeId = listed.find((n) => n.hostname === "node1")?.id ?? "";
      expect(nodeId).toMatch(/^[0-9a-f-]{36}$/);
      expect((await sshAs(nodeId)).stdout.trim()).toBe("openssh-42");
      // An address is never a principal: checked by the address, the node is not trusted.
      await expect(sshAs("127.0.0.1")).rejects.toThrow();

      // The exported CAs are the ones in use: the host CA line is what svc certs wrote, and the
      // user CA is the certificate's signer.
      const hostCa = await svcctl(["export", "--type", "host-ca", "--data-dir", dataDir]);
      expect(hostCa.code, hostCa.stderr).toBe(0);
      expect(hostCa.stdout).toBe(await readFile(f.known_hosts, "utf8"));
      const userCa = await svcctl(["export", "--type", "user-ca"]);
      expect(userCa.code, userCa.stderr).toBe(0);
      await writeFile(join(dir, "user-ca.pub"), userCa.stdout);
      const fp = (await execFileP("ssh-keygen", ["-lf", join(dir, "user-ca.pub")])).stdout.split(" ")[1];
      const cert = (await execFileP("ssh-keygen", ["-L", "-f", f.certificate])).stdout;
      expect(cert).toContain(`Signing CA: ED25519 ${fp}`);
    },
    STEP,
  );

  it(
    "svc ssh: a shell through the proxy WebSocket, a command directly; exit codes and refusals",
    async () => {
      const shell = await svc(["ssh", "root@node1"], aliceEnv, "echo via-proxy-$((40+2))\nexit 7\n");
      expect(shell.code, shell.stderr).toBe(7);
      expect(shell.stdout).toContain("via-proxy-42");

      const cmd = await svc(["ssh", "root@node1", "echo direct-$((40+2)); exit 3"], aliceEnv);
      expect(cmd.code, cmd.stderr).toBe(3);
      expect(cmd.stdout.trim()).toBe("direct-42");

      const login = await svc(["ssh", "nobody@node1", "true"], aliceEnv);
      expect(login.code).toBe(4);
      expect(login.stderr).toMatch(/not allowed by your roles/);
      const viaProxy = await svc(["ssh", "nobody@node1"], aliceEnv, "exit\n");
      expect(viaProxy.code).toBe(4);
      const unknown = await svc(["ssh", "root@no-such-node", "true"], aliceEnv);
      expect(unknown.code).toBe(5);
    },
    STEP,
  );

  it(
    "svcctl export --type app-jwt is offline and equals /workload-identity/app-jwt-jwks.json",
    async () => {
      const ca = await readFile(caFile, "utf8");
      const served = await httpsGet(ports.proxy, ca, "/workload-identity/app-jwt-jwks.json");
      expect(served.status).toBe(200);
      // Offline: no profile, no auth address, only the data folder.
      const exported = await run("svcctl", ["export", "--type", "app-jwt", "--data-dir", dataDir], {
        env: { SVC_HOME: join(dir, "nobody-home") },
      });
      expect(exported.code, exported.stderr).toBe(0);
      expect(JSON.parse(exported.stdout)).toEqual(JSON.parse(served.body));
      expect(JSON.parse(exported.stdout).keys.length).toBeGreaterThan(0);
      expect(exported.stdout).not.toMatch(/"d"\s*:/);
    },
    STEP,
  );

  it(
    "svcctl agent-identities add|ls|rm; IAM join for bots is refused",
    async () => {
      const iam = await svcctl(["agent-identities", "add", "ci", "--roles", "access", "--join", "iam"]);
      expect(iam.code).toBe(2);
      expect(iam.stderr).toMatch(/not supported/);
      const add = await svcctl([
        "agent-identities",
        "add",
        "ci",
        "--roles",
        "access",
        "--ttl",
        "30m",
        "--json",
      ]);
      expect(add.code, add.stderr).toBe(0);
      const bot = json<{ token: string; bot_command: string }>(add);
      expect(bot.bot_command).toContain(`--token ${bot.token}`);
      const ls = await svcctl(["agent-identities", "ls", "--json"]);
      expect(json<Array<{ name: string; roles: string[]; generation: number }>>(ls)).toEqual([
        expect.objectContaining({ name: "ci", roles: ["access"], generation: 0 }),
      ]);
      expect((await svcctl(["agent-identities", "rm", "ci"])).code).toBe(0);
      expect(json<unknown[]>(await svcctl(["agent-identities", "ls", "--json"]))).toEqual([]);
    },
    STEP,
  );

  it(
    "svcctl audit search filters and pages; svc logout ends the session",
    async () => {
      const logins = await svcctl([
        "audit",
        "search",
        "--type",
        "user.login",
        "--user",
        "alice",
        "--since",
        "1h",
        "--json",
      ]);
      expect(logins.code, logins.stderr).toBe(0);
      const page = json<{ items: Array<{ event_type: string; user_name: string }>; total_count: number }>(
        logins,
      );
      expect(page.total_count).toBeGreaterThanOrEqual(2);
      expect(page.items.every((e) => e.event_type === "user.login" && e.user_name === "alice")).toBe(true);
      const one = json<{ items: unknown[]; total_count: number }>(
        await svcctl(["audit", "search", "--limit", "1", "--offset", "1", "--json"]),
      );
      expect(one.items).toHaveLength(1);
      expect(one.total_count).toBeGreaterThan(1);
      const created = json<{ items: Array<{ fields: { emitted_by?: string } }> }>(
        await svcctl(["audit", "search", "--type", "user.create", "--json"]),
      );
      expect(created.items[0]?.fields.emitted_by).toBe("user:admin");
      expect((await svcctl(["audit", "search", "--limit", "x"])).code).toBe(2);

      const out = await svc(["logout"], aliceEnv);
      expect(out.code, out.stderr).toBe(0);
      expect((await svc(["status"], aliceEnv)).code).toBe(3);
      expect((await svcctl(["users", "rm", "alice"])).code).toBe(0);
      expect((await svcctl(["users", "rm", "alice"])).code).toBe(5);
    },
    STEP,
  );

  it(
    "svcctl nodes rm <id>: the node is gone and audited, its restarted agent is refused by auth, a second rm is not found (5)",
    async () => {
      const listed = json<Array<{ id: string; hostname: string }>>(await svcctl(["nodes", "ls", "--json"]));
      const id = listed.find((n) => n.hostname === "node1")?.id ?? "";
      expect(id).toMatch(/^[0-9a-f-]{36}$/);
      const rm = await svcctl(["nodes", "rm", id]);
      expect(rm.code, rm.stderr).toBe(0);
      expect(rm.stdout).toBe(`Node node1 (${id}) removed; its certificates no longer reach auth.\n`);
      expect(json<unknown[]>(await svcctl(["nodes", "ls", "--json"]))).toEqual([]);
      expect((await svcctl(["nodes", "rm", id])).code).toBe(5);
      const audit = json<{ items: Array<{ user_name: string; fields: Record<string, unknown> }> }>(
        await svcctl(["audit", "search", "--type", "node.delete", "--json"]),
      );
      expect(audit.items[0]).toMatchObject({
        user_name: "admin",
        fields: { node_id: id, hostname: "node1", emitted_by: "user:admin" },
      });

      // The node restarted with the identity it joined with: auth refuses it (no heartbeat, so
      // never listed again; no login decision, so no login) and the agent says what to do.
      await agent?.stop();
      const restarted = spawnDaemon(
        [
          "agent",
          "--auth",
          `127.0.0.1:${ports.auth}`,
          "--ca-file",
          caFile,
          "--data-dir",
          join(dir, "agent"),
          "--listen",
          `127.0.0.1:${ports.node}`,
          "--advertise-address",
          `127.0.0.1:${ports.node}`,
        ],
        {},
      );
      agent = restarted;
      await waitFor(
        () => restarted.output().includes("this node has been removed from the cluster"),
        "the removed agent's refusal",
      );
      expect(restarted.output()).toContain("agent-identity.json and join again with a new token");
      expect(json<unknown[]>(await svcctl(["nodes", "ls", "--json"]))).toEqual([]);
    },
    STEP,
  );

  it(
    "the version policy: below recommended warns, below minimum refuses (7)",
    async () => {
      const cfgPath = join(dataDir, "svc.yaml");
      const original = await readFile(cfgPath, "utf8");
      const withPolicy = async (min: string, recommended: string): Promise<void> => {
        const cfg = parseYaml(original) as { client_tools: Record<string, string> };
        cfg.client_tools = { min_version: min, recommended_version: recommended };
        await writeFile(cfgPath, stringifyYaml(cfg));
        await platform?.stop();
        platform = await startPlatform();
      };
      await withPolicy("0.0.1", "99.0.0");
      const warned = await svc(["ping"], adminEnv);
      expect(warned.code, warned.stderr).toBe(0);
      expect(warned.stderr).toMatch(/warning: .*older than the version cluster .* recommends \(99\.0\.0\)/);
      await withPolicy("99.0.0", "99.0.0");
      const refused = await svc(["ping"], adminEnv);
      expect(refused.code).toBe(7);
      expect(refused.stderr).toMatch(/older than the minimum version 99\.0\.0/);
      const login = await svc(["login", "--password-file", join(dir, "admin-pw")], adminEnv);
      expect(login.code).toBe(7);
    },
    STEP,
  );

  it(
    "the reset endpoint is rate limited per client address like login (429)",
    async () => {
      const ca = await readFile(caFile, "utf8");
      const statuses: number[] = [];
      for (let i = 0; i < 25; i++) {
        const r = await httpsSend(ports.proxy, ca, "POST", "/v1/webapi/password/reset", {
          body: { token: "A".repeat(43), password: "some-long-password" },
        });
        statuses.push(r.status);
      }
      expect(statuses[0]).toBe(401);
      expect(statuses).toContain(429);
    },
    STEP,
  );
});
