// Role node rules hold at the node, on every path in: a real embedded platform (`svcd start`), two
// agent nodes (`svcd agent`, env=lab and env=prod) and two plain OpenSSH sshd nodes registered with
// `svcd agentless` (env=lab and env=prod), users whose roles allow and deny by login and by node
// label, and a bot. Every (identity, node, login) is tried through `svc ssh`, through plain `ssh`
// with the files `svc certs` writes (no client-side check at all: the node alone decides), through
// the browser terminal's WebSocket, and with the bot's own certificate. Before the node-side
// decision existed, a certificate listing `root` for env=lab opened root on every node.
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { request as httpsRequest } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Daemon, json, type RunResult, run, spawnDaemon, waitFor } from "./cli-fixture.ts";
import { freePort } from "./harness/ports.ts";
import { certSsh, type SshResult } from "./harness/ssh-login.ts";
import { type RunningSshd, startSshd } from "./harness/sshd.ts";
import { openTerminal } from "./terminal-client.ts";

const execFileP = promisify(execFile);
const STEP = 300_000;

type NodeName = "lab-1" | "prod-1" | "lab-db" | "prod-db";
type Login = "root" | "nobody";
const NODE_NAMES: readonly NodeName[] = ["lab-1", "prod-1", "lab-db", "prod-db"];
const LOGINS: readonly Login[] = ["root", "nobody"];

const ROLES = `
apiVersion: svc.dev/v1
kind: Role
metadata: { name: lab-root }
spec:
  allow: { logins: [root], node_labels: { env: lab } }
---
apiVersion: svc.dev/v1
kind: Role
metadata: { name: prod-nobody }
spec:
  allow: { logins: [nobody], node_labels: { env: prod } }
---
apiVersion: svc.dev/v1
kind: Role
metadata: { name: any-root }
spec:
  allow: { logins: [root], node_labels: { "*": "*" } }
---
apiVersion: svc.dev/v1
kind: Role
metadata: { name: any-login }
spec:
  allow: { logins: [root, nobody], node_labels: { "*": "*" } }
---
apiVersion: svc.dev/v1
kind: Role
metadata: { name: no-prod }
spec:
  deny: { node_labels: { env: prod } }
---
apiVersion: svc.dev/v1
kind: Role
metadata: { name: no-root }
spec:
  deny: { logins: [root] }
`;

/** Who may do what: the one table every path is checked against. */
const USERS: Record<string, { roles: string[]; allowed: ReadonlySet<string> }> = {
  // root on lab nodes, nobody on prod nodes.
  carol: {
    roles: ["lab-root", "prod-nobody"],
    allowed: new Set(["lab-1/root", "lab-db/root", "prod-1/nobody", "prod-db/nobody"]),
  },
  // root anywhere, but every env=prod node is denied.
  dan: { roles: ["any-root", "no-prod"], allowed: new Set(["lab-1/root", "lab-db/root"]) },
  // any login anywhere, but the login root is denied.
  erin: {
    roles: ["any-login", "no-root"],
    allowed: new Set(["lab-1/nobody", "prod-1/nobody", "lab-db/nobody", "prod-db/nobody"]),
  },
};
const BOT_ALLOWED = new Set(["lab-1/root", "lab-db/root"]);

describe("role node rules are enforced by the node on every path", () => {
  let dir = "";
  let dataDir = "";
  let caFile = "";
  let ports: { auth: number; proxy: number; diag: number };
  let platform: Daemon | undefined;
  const daemons: Daemon[] = [];
  const sshds: RunningSshd[] = [];
  /** node name -> SSH port on 127.0.0.1 */
  const nodePorts = new Map<NodeName, number>();
  let adminEnv: NodeJS.ProcessEnv;
  const userEnv = (user: string): NodeJS.ProcessEnv => ({ SVC_HOME: join(dir, `${user}-home`) });
  const svc = (args: string[], env: NodeJS.ProcessEnv): Promise<RunResult> => run("svc", args, { env });
  const svcctl = (args: string[]): Promise<RunResult> =>
    run("svcctl", ["--auth", `127.0.0.1:${ports.auth}`, ...args], { env: adminEnv });

  /**
   * `svcd agentless` as docs/agent.md has an operator type it: a node token for env=`env` from
   * `svcctl tokens add`, a fresh sshd host key, the registration. Answers the run and the files.
   */
  async function registerAgentless(o: {
    token: string;
    hostname: string;
    env: string;
    port: number;
  }): Promise<{ reg: RunResult; hostKey: string; out: string }> {
    const add = await svcctl(["tokens", "add", "--name", o.token, "--labels", `env=${o.env}`, "--json"]);
    expect(add.code, add.stderr).toBe(0);
    const t = json<{ token: string; ca_pin: string }>(add);
    const hostKey = join(dir, `${o.token}_host_ed25519_key`);
    await execFileP("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", o.hostname, "-f", hostKey]);
    const out = join(dir, `${o.token}-svc`);
    const reg = await run("svcd", [
      "agentless",
      "--auth",
      `127.0.0.1:${ports.auth}`,
      "--ca-pin",
      t.ca_pin,
      "--token",
      t.token,
      "--hostname",
      o.hostname,
      "--address",
      `127.0.0.1:${o.port}`,
      "--host-key",
      `${hostKey}.pub`,
      "--out",
      out,
    ]);
    return { reg, hostKey, out };
  }

  /** GET a proxy route with a session, over the proxy's own HTTPS and CA. */
  async function fetchJson(path: string, sessionId: string): Promise<unknown> {
    const ca = await readFile(caFile, "utf8");
    return new Promise((resolve, reject) => {
      const req = httpsRequest(
        {
          host: "127.0.0.1",
          port: ports.proxy,
          path,
          ca,
          servername: "localhost",
          headers: { authorization: `Bearer ${sessionId}` },
        },
        (res) => {
          let body = "";
          res.on("data", (d: Buffer) => {
            body += d.toString();
          });
          res.on("end", () => {
            try {
              resolve(JSON.parse(body));
            } catch (err) {
              reject(err);
            }
          });
        },
      );
      req.on("error", reject);
      req.end();
    });
  }

  /** Plain OpenSSH, nothing of ours on the client side: key, certificate, @cert-authority known_hosts. */
  async function plainSsh(
    files: { key: string; cert: string; knownHosts: string },
    node: NodeName,
    login: Login,
  ): Promise<SshResult> {
    const port = nodePorts.get(node);
    if (port === undefined) throw new Error(`no port for ${node}`);
    const { key, cert: certificate, knownHosts } = files;
    return certSsh(
      { key, certificate, knownHosts, port, hostAlias: node, user: login },
      "echo in-as-$(id -un)",
    );
  }

  /**
   * Logged in or refused at authentication. `nobody` has no usable shell here, so a login as
   * nobody that got in ends with sshd's or the shell's own error, never "Permission denied".
   */
  function expectOutcome(
    r: { code: number; stdout: string; stderr: string },
    allowed: boolean,
    login: Login,
    what: string,
  ): void {
    if (!allowed) {
      expect(r.code, `${what}: ${r.stdout}${r.stderr}`).toBe(255);
      expect(r.stderr, what).toMatch(/Permission denied/);
      expect(r.stdout, what).not.toContain("in-as-");
    } else if (login === "root") {
      expect(r.stdout, `${what}: ${r.stderr}`).toContain("in-as-root");
    } else {
      expect(r.stderr, what).not.toMatch(/Permission denied/);
      expect(r.code, `${what}: ${r.stderr}`).not.toBe(255);
    }
  }

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "svc-node-rules-"));
    dataDir = join(dir, "data");
    caFile = join(dataDir, "host-ca.pem");
    ports = { auth: await freePort(), proxy: await freePort(), diag: await freePort() };
    adminEnv = { SVC_HOME: join(dir, "admin-home"), SVC_DATA_DIR: dataDir };
    platform = spawnDaemon(
      [
        "start",
        "--auth-listen",
        `127.0.0.1:${ports.auth}`,
        "--proxy-listen",
        `127.0.0.1:${ports.proxy}`,
        "--diag-listen",
        `127.0.0.1:${ports.diag}`,
      ],
      { SVC_DATA_DIR: dataDir, SVC_ADMIN_PASSWORD_FILE: "" },
    );
    await waitFor(
      () => platform?.output().includes("svc is running") === true || platform?.child.exitCode !== null,
      "svcd start",
    );
    const token = /--reset-token (\S+)/.exec(platform.output())?.[1] ?? "";
    await writeFile(join(dir, "pw"), "node-rules-password\n");
    const admin = await svc(
      [
        "login",
        "--proxy",
        `127.0.0.1:${ports.proxy}`,
        "--ca",
        caFile,
        "--reset-token",
        token,
        "--password-file",
        join(dir, "pw"),
      ],
      adminEnv,
    );
    expect(admin.code, admin.stderr).toBe(0);

    await writeFile(join(dataDir, "manifests", "node-rules.yaml"), ROLES);
    await waitFor(async () => {
      const roles = await svcctl(["roles", "ls", "--json"]);
      const names = roles.code === 0 ? json<Array<{ name: string }>>(roles).map((r) => r.name) : [];
      return ["lab-root", "prod-nobody", "any-root", "any-login", "no-prod", "no-root"].every((n) =>
        names.includes(n),
      );
    }, "roles loaded from the manifests folder");

    for (const [user, u] of Object.entries(USERS)) {
      const add = await svcctl(["users", "add", user, "--roles", u.roles.join(","), "--json"]);
      expect(add.code, add.stderr).toBe(0);
      const login = await svc(
        [
          "login",
          "--proxy",
          `127.0.0.1:${ports.proxy}`,
          "--ca",
          caFile,
          "--reset-token",
          json<{ reset_token: string }>(add).reset_token,
          "--password-file",
          join(dir, "pw"),
        ],
        userEnv(user),
      );
      expect(login.code, login.stderr).toBe(0);
    }

    // Two agent nodes.
    for (const [name, env] of [
      ["lab-1", "lab"],
      ["prod-1", "prod"],
    ] as const) {
      const add = await svcctl(["tokens", "add", "--name", name, "--labels", `env=${env}`, "--json"]);
      expect(add.code, add.stderr).toBe(0);
      const t = json<{ token: string; ca_pin: string }>(add);
      const port = await freePort();
      nodePorts.set(name, port);
      const agent = spawnDaemon(
        [
          "agent",
          "--auth",
          `127.0.0.1:${ports.auth}`,
          "--ca-pin",
          t.ca_pin,
          "--token",
          t.token,
          "--data-dir",
          join(dir, name),
          "--listen",
          `127.0.0.1:${port}`,
          "--advertise-address",
          `127.0.0.1:${port}`,
          "--hostname",
          name,
        ],
        {},
      );
      daemons.push(agent);
      await waitFor(
        () => agent.output().includes("serving SSH") || agent.child.exitCode !== null,
        `agent ${name}`,
      );
      expect(agent.child.exitCode, agent.output()).toBeNull();
    }

    // Two plain OpenSSH nodes, registered the way docs/agent.md tells an operator to.
    for (const [name, env] of [
      ["lab-db", "lab"],
      ["prod-db", "prod"],
    ] as const) {
      const port = await freePort();
      nodePorts.set(name, port);
      const { reg, hostKey, out } = await registerAgentless({ token: name, hostname: name, env, port });
      expect(reg.code, reg.stderr).toBe(0);
      expect(reg.stdout).toMatch(/AuthorizedPrincipalsCommand \/bin\/echo %u@[0-9a-f-]{36}/);
      const lines = (await readFile(join(out, "sshd_config.svc"), "utf8")).split("\n").filter(Boolean);
      sshds.push(
        await startSshd({
          hostKey: { privatePath: hostKey, publicLine: await readFile(`${hostKey}.pub`, "utf8") },
          extraConfig: [`Port ${port}`, ...lines],
        }),
      );
    }
    await waitFor(async () => {
      const ls = await svc(["ls", "--json"], adminEnv);
      if (ls.code !== 0) return false;
      const seen = json<Array<{ hostname: string }>>(ls).map((n) => n.hostname);
      return NODE_NAMES.every((n) => seen.includes(n));
    }, "all four nodes listed");
  }, STEP);

  afterAll(async () => {
    for (const s of sshds) await s.stop();
    for (const d of daemons) await d.stop();
    await platform?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it(
    "plain ssh with `svc certs` files: only the node's own decision stands between the certificate and a shell",
    async () => {
      for (const [user, u] of Object.entries(USERS)) {
        const out = join(dir, `${user}-keys`);
        const certs = await svc(["certs", "--out", out, "--json"], userEnv(user));
        expect(certs.code, certs.stderr).toBe(0);
        const f = json<{
          private_key: string;
          certificate: string;
          known_hosts: string;
          principals: string[];
        }>(certs);
        for (const node of NODE_NAMES) {
          for (const login of LOGINS) {
            const r = await plainSsh(
              { key: f.private_key, cert: f.certificate, knownHosts: f.known_hosts },
              node,
              login,
            );
            expectOutcome(r, u.allowed.has(`${node}/${login}`), login, `${user} ${login}@${node} (ssh)`);
          }
        }
      }
    },
    STEP,
  );

  it(
    "svc ssh: allowed logins run, the rest are refused (exit 4) or the node is unknown to the user (5)",
    async () => {
      for (const [user, u] of Object.entries(USERS)) {
        for (const node of NODE_NAMES) {
          for (const login of LOGINS) {
            const r = await svc(["ssh", `${login}@${node}`, "echo in-as-$(id -un)"], userEnv(user));
            const what = `${user} ${login}@${node} (svc ssh): ${r.stdout}${r.stderr}`;
            if (!u.allowed.has(`${node}/${login}`)) {
              expect([4, 5], what).toContain(r.code);
              expect(r.stdout, what).not.toContain("in-as-");
            } else if (login === "root") {
              expect(r.code, what).toBe(0);
              expect(r.stdout.trim(), what).toBe("in-as-root");
            } else {
              expect([4, 5], what).not.toContain(r.code);
            }
          }
        }
      }
    },
    STEP,
  );

  it(
    "the browser terminal opens only what the roles allow on that node",
    async () => {
      const caPem = await readFile(caFile, "utf8");
      for (const [user, u] of Object.entries(USERS)) {
        const profile = JSON.parse(await readFile(join(dir, `${user}-home`, "profile.json"), "utf8"));
        for (const node of NODE_NAMES) {
          for (const login of LOGINS) {
            const what = `${user} ${login}@${node} (terminal)`;
            const r = await openTerminal({
              baseUrl: `https://127.0.0.1:${ports.proxy}`,
              caPem,
              servername: "localhost",
              query: { node, login },
              headers: { authorization: `Bearer ${profile.session_id}` },
            });
            if (!u.allowed.has(`${node}/${login}`)) {
              if (r.kind === "open") {
                const c = await r.conn.waitControl("error", 30_000);
                r.conn.ws.close();
                expect(c, what).toMatchObject({ type: "error" });
                expect(
                  r.conn.controls.some((x) => x.type === "ready"),
                  what,
                ).toBe(false);
              } else {
                expect([403, 404], `${what}: ${r.body}`).toContain(r.status);
              }
              continue;
            }
            expect(r.kind, what).toBe("open");
            if (r.kind !== "open") continue;
            const ready = await r.conn.waitControl("ready", 30_000);
            expect(ready, what).toMatchObject({ type: "ready", login });
            if (login === "root") {
              r.conn.type("echo in-as-$(id -un)\n");
              await r.conn.waitFor("in-as-root", 30_000);
            }
            r.conn.ws.close();
            await r.conn.closed;
          }
        }
      }
    },
    STEP,
  );

  it(
    "svc certs --node: a certificate with only that node's logins; hidden or login-less nodes are refused",
    async () => {
      const out = join(dir, "carol-prod-db");
      const certs = await svc(["certs", "--node", "prod-db", "--out", out, "--json"], userEnv("carol"));
      expect(certs.code, certs.stderr).toBe(0);
      const f = json<{ private_key: string; certificate: string; known_hosts: string; principals: string[] }>(
        certs,
      );
      expect(f.principals).toHaveLength(2);
      expect(f.principals[0]).toBe("nobody");
      expect(f.principals[1]).toMatch(/^nobody@[0-9a-f-]{36}$/);
      const files = { key: f.private_key, cert: f.certificate, knownHosts: f.known_hosts };
      expectOutcome(await plainSsh(files, "prod-db", "nobody"), true, "nobody", "scoped nobody@prod-db");
      // Scoped to prod-db: no use on lab-db even for a login carol has there.
      expectOutcome(await plainSsh(files, "lab-db", "root"), false, "root", "scoped root@lab-db");
      // dan cannot see env=prod nodes: unknown (5); erin's root is denied, so only nobody is left.
      const hidden = await svc(["certs", "--node", "prod-1", "--out", join(dir, "dan-x")], userEnv("dan"));
      expect(hidden.code, hidden.stderr).toBe(5);
      const erin = await svc(
        ["certs", "--node", "lab-1", "--out", join(dir, "erin-x"), "--json"],
        userEnv("erin"),
      );
      expect(erin.code, erin.stderr).toBe(0);
      expect(json<{ principals: string[] }>(erin).principals).toEqual(["nobody"]);
    },
    STEP,
  );

  it(
    "a bot is limited by its roles' node labels like a user, and is never credited as the user of its name",
    async () => {
      // The bot is called carol, like the user: its sessions must stay its own.
      const add = await svcctl(["agent-identities", "add", "carol", "--roles", "lab-root", "--json"]);
      expect(add.code, add.stderr).toBe(0);
      const t = json<{ token: string; ca_pin: string }>(add);
      const out = join(dir, "bot-out");
      const bot = spawnDaemon(
        ["bot", "--auth", `127.0.0.1:${ports.auth}`, "--ca-pin", t.ca_pin, "--token", t.token, "--out", out],
        {},
      );
      daemons.push(bot);
      await waitFor(async () => {
        if (bot.child.exitCode !== null) throw new Error(`bot exited: ${bot.output()}`);
        return (await readFile(join(out, "ssh_key-cert.pub"), "utf8").catch(() => "")) !== "";
      }, "bot credentials");
      const files = {
        key: join(out, "ssh_key"),
        cert: join(out, "ssh_key-cert.pub"),
        knownHosts: join(out, "known_hosts"),
      };
      for (const node of NODE_NAMES) {
        const r = await plainSsh(files, node, "root");
        expectOutcome(r, BOT_ALLOWED.has(`${node}/root`), "root", `bot carol root@${node}`);
      }
      // lab-1 (an agent) audited and recorded the bot's session as bot:carol.
      await waitFor(async () => {
        const a = await svcctl(["audit", "search", "--type", "session.end", "--user", "bot:carol", "--json"]);
        return a.code === 0 && json<{ items: unknown[] }>(a).items.length > 0;
      }, "session.end of bot:carol");
      const asUser = await svcctl([
        "audit",
        "search",
        "--type",
        "session.start",
        "--user",
        "carol",
        "--json",
      ]);
      // The human carol's events are her own sessions only, none made with the bot's certificate.
      expect(asUser.code, asUser.stderr).toBe(0);
      expect(asUser.stdout).toContain("user=carol");
      expect(asUser.stdout).not.toContain("bot:carol");
      const recordings = async (user: string) => {
        const profile = JSON.parse(await readFile(join(dir, `${user}-home`, "profile.json"), "utf8"));
        const res = await fetchJson(`/v1/webapi/sessions?limit=500`, profile.session_id);
        return (res as { items: Array<{ user: string }> }).items.map((i) => i.user);
      };
      await waitFor(async () => (await recordings("admin")).includes("bot:carol"), "bot recording listed");
      // The human carol sees her own recordings only, and the bot's is not hers.
      expect(await recordings("carol")).not.toContain("bot:carol");
    },
    STEP,
  );

  it(
    "a hostname names one node: a second join under it is refused, whatever the case",
    async () => {
      const { reg } = await registerAgentless({
        token: "dup-lab",
        hostname: "LAB-1",
        env: "lab",
        port: nodePorts.get("lab-1") ?? 0,
      });
      expect(reg.code, reg.stdout).not.toBe(0);
      expect(reg.stderr).toMatch(/hostname "LAB-1" is already registered to another node/);
    },
    STEP,
  );

  it(
    "svcctl nodes rm: the removed node admits nobody, and a new node under its name cannot borrow the old one's certificate",
    async () => {
      const caPem = await readFile(caFile, "utf8");
      const rm = await svcctl(["nodes", "rm", "prod-1", "--json"]);
      expect(rm.code, rm.stderr).toBe(0);
      expect(json<{ hostname: string }>(rm).hostname).toBe("prod-1");
      const ls = await svc(["ls", "--json"], adminEnv);
      expect(json<Array<{ hostname: string }>>(ls).map((n) => n.hostname)).not.toContain("prod-1");
      // carol may use nobody on env=prod, with a certificate from before; the removed agent can no
      // longer ask auth, so it refuses her.
      const files = {
        key: join(dir, "carol-keys", "carol"),
        cert: join(dir, "carol-keys", "carol-cert.pub"),
        knownHosts: join(dir, "carol-keys", "known_hosts"),
      };
      expectOutcome(await plainSsh(files, "prod-1", "nobody"), false, "nobody", "removed prod-1");

      // The name is free: a new node takes it, advertising the old node's address. Clients now
      // reach the old node's server, whose host certificate still names "prod-1" but not the new
      // node's ID: the proxy and svc ssh refuse it.
      const { reg } = await registerAgentless({
        token: "new-prod-1",
        hostname: "prod-1",
        env: "prod",
        port: nodePorts.get("prod-1") ?? 0,
      });
      expect(reg.code, reg.stderr).toBe(0);
      const viaCli = await svc(["ssh", "nobody@prod-1", "true"], userEnv("carol"));
      expect(viaCli.code, viaCli.stderr).not.toBe(0);
      expect(viaCli.stderr).toMatch(/refused: .*principal/);
      const profile = JSON.parse(await readFile(join(dir, "carol-home", "profile.json"), "utf8"));
      const r = await openTerminal({
        baseUrl: `https://127.0.0.1:${ports.proxy}`,
        caPem,
        servername: "localhost",
        query: { node: "prod-1", login: "nobody" },
        headers: { authorization: `Bearer ${profile.session_id}` },
      });
      expect(r.kind).toBe("open");
      if (r.kind === "open") {
        const c = await r.conn.waitControl("error", 60_000);
        expect(r.conn.controls.some((x) => x.type === "ready")).toBe(false);
        // Refused for the host certificate (it names the old node's ID), not by a login decision.
        expect(c).toMatchObject({ type: "error", message: "host key or host certificate is not trusted" });
        r.conn.ws.close();
      }
    },
    STEP,
  );

  it(
    "a role taken away stops a certificate issued before, at the next login on an agent node",
    async () => {
      const out = join(dir, "carol-keys-2");
      const certs = await svc(["certs", "--out", out, "--json"], userEnv("carol"));
      expect(certs.code, certs.stderr).toBe(0);
      const f = json<{ private_key: string; certificate: string; known_hosts: string }>(certs);
      const files = { key: f.private_key, cert: f.certificate, knownHosts: f.known_hosts };
      expectOutcome(await plainSsh(files, "lab-1", "root"), true, "root", "before");
      const users = join(dataDir, "manifests", "managed", "user-carol.yaml");
      const before = await readFile(users, "utf8");
      await writeFile(users, before.replace(/- lab-root\n/, ""));
      await waitFor(async () => {
        const ls = await svcctl(["users", "ls", "--json"]);
        const carol = json<Array<{ name: string; roles: string[] }>>(ls).find((x) => x.name === "carol");
        return carol !== undefined && !carol.roles.includes("lab-root");
      }, "carol's role removed");
      expectOutcome(await plainSsh(files, "lab-1", "root"), false, "root", "after");
    },
    STEP,
  );
});
