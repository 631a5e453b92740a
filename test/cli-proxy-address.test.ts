// One public address: svcctl, `svcd agent`, `svcd bot` and `svcd agentless` given only the proxy's
// host:port reach auth through the proxy's public port (TLS routing passes their gRPC through to
// auth). Real processes against a real embedded platform (`svcd start`), as a user runs them:
// the join command `svcctl tokens add` prints is run as printed. The auth port is a random one,
// so nothing here can reach auth by accident at a default address.
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentAuthRoute } from "../server/agent/auth-target.ts";
import { publicAddressOfRun } from "../server/proxy/routes/admin-tokens.ts";
import { type Daemon, json, type RunResult, run, spawnDaemon, waitFor } from "./cli-fixture.ts";
import { freePort } from "./harness/ports.ts";

const execFileP = promisify(execFile);
const STEP = 180_000;

interface NodeRow {
  hostname: string;
  status: string;
  last_heartbeat: string;
}

describe("clients need only --proxy host:port", () => {
  let dir: string;
  let dataDir: string;
  let ports: { auth: number; proxy: number; diag: number; node: number; node2: number };
  let proxy: string;
  let adminEnv: NodeJS.ProcessEnv;
  let platform: Daemon | undefined;
  const daemons: Daemon[] = [];
  let oldProxy: Server | undefined;

  const svcctl = (args: string[]): Promise<RunResult> => run("svcctl", args, { env: adminEnv });
  const daemon = (args: string[]): Daemon => {
    const d = spawnDaemon(args, { SVC_AUTH_ADDR: "" });
    daemons.push(d);
    return d;
  };
  const nodes = async (): Promise<NodeRow[]> => {
    const r = await svcctl(["nodes", "ls", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    return json<NodeRow[]>(r);
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "svc-proxy-address-"));
    dataDir = join(dir, "data");
    ports = {
      auth: await freePort(),
      proxy: await freePort(),
      diag: await freePort(),
      node: await freePort(),
      node2: await freePort(),
    };
    proxy = `127.0.0.1:${ports.proxy}`;
    // No auth address anywhere in the admin's environment: only the profile's proxy.
    adminEnv = { SVC_HOME: join(dir, "admin-home"), SVC_AUTH_ADDR: "" };
    platform = spawnDaemon(
      [
        "start",
        "--auth-listen",
        `127.0.0.1:${ports.auth}`,
        "--proxy-listen",
        proxy,
        "--diag-listen",
        `127.0.0.1:${ports.diag}`,
      ],
      { SVC_DATA_DIR: dataDir, SVC_ADMIN_PASSWORD_FILE: "" },
    );
    const p = platform;
    await waitFor(() => p.output().includes("svc is running") || p.child.exitCode !== null, "svcd start");
    expect(p.child.exitCode, p.output()).toBeNull();
    const token = /--reset-token (\S+)/.exec(p.output())?.[1] ?? "";
    await writeFile(join(dir, "pw"), "admin-password-for-tests\n");
    const login = await run(
      "svc",
      [
        "login",
        "--proxy",
        proxy,
        "--ca",
        join(dataDir, "host-ca.pem"),
        "--reset-token",
        token,
        "--password-file",
        join(dir, "pw"),
      ],
      { env: adminEnv },
    );
    expect(login.code, login.stderr).toBe(0);
  }, 120_000);

  afterAll(async () => {
    await Promise.all(daemons.map((d) => d.stop()));
    await platform?.stop();
    await new Promise<void>((resolve) => (oldProxy ? oldProxy.close(() => resolve()) : resolve()));
    await rm(dir, { recursive: true, force: true });
  });

  it(
    "svcctl reaches auth with only the profile from svc login --proxy, with --proxy, and with --auth as before",
    async () => {
      const profile = JSON.parse(await readFile(join(dir, "admin-home", "profile.json"), "utf8")) as {
        auth?: string;
      };
      expect(profile.auth).toBeUndefined();
      for (const flags of [[], ["--proxy", proxy], ["--auth", `127.0.0.1:${ports.auth}`]]) {
        const r = await svcctl([...flags, "users", "ls", "--json"]);
        expect(r.code, `${flags.join(" ")}: ${r.stderr}`).toBe(0);
        expect(json<Array<{ name: string }>>(r).map((u) => u.name)).toContain("admin");
      }
      const both = await svcctl(["--proxy", proxy, "--auth", `127.0.0.1:${ports.auth}`, "users", "ls"]);
      expect(both.code).toBe(2);
      expect(both.stderr).toMatch(/cannot be used with/);
    },
    STEP,
  );

  it(
    "svcctl tokens add prints svcd agent --proxy <public address>; the command as printed joins, and a restart with no address keeps using the proxy",
    async () => {
      const add = await svcctl(["tokens", "add", "--name", "edge1", "--json"]);
      expect(add.code, add.stderr).toBe(0);
      const t = json<{ token: string; ca_pin: string; agent_command: string }>(add);
      expect(t.agent_command).toBe(
        `svcd agent --proxy ${proxy} --ca-pin ${t.ca_pin} --token ${t.token} --data-dir /var/lib/svc-agent`,
      );
      expect(t.agent_command).not.toContain(String(ports.auth));

      const agentDir = join(dir, "agent");
      const args = t.agent_command.replace("/var/lib/svc-agent", agentDir).split(" ").slice(1);
      const node = ["--listen", `127.0.0.1:${ports.node}`, "--hostname", "edge1"];
      const first = daemon([...args, ...node]);
      await waitFor(async () => {
        if (first.child.exitCode !== null) throw new Error(`agent exited: ${first.output()}`);
        return (await nodes()).some((n) => n.hostname === "edge1" && n.status === "online");
      }, "edge1 online");
      const identity = JSON.parse(await readFile(join(agentDir, "agent-identity.json"), "utf8")) as {
        proxyAddress?: string;
        authAddress?: string;
        authServerName?: string;
      };
      expect(identity).toMatchObject({ proxyAddress: proxy, authServerName: "localhost" });
      expect(identity.authAddress).toBeUndefined();
      await first.stop();

      // Restart: no --proxy, no --auth, no token. Its first heartbeat is newer than the stop.
      const stoppedAt = Date.now();
      const again = daemon(["agent", "--data-dir", agentDir, ...node]);
      await waitFor(async () => {
        if (again.child.exitCode !== null) throw new Error(`agent exited: ${again.output()}`);
        const n = (await nodes()).find((x) => x.hostname === "edge1");
        return n !== undefined && Date.parse(n.last_heartbeat) > stoppedAt;
      }, "a heartbeat from the restarted agent");
      expect(again.output()).not.toMatch(/heartbeat failed/);
      await again.stop();

      // An identity from before (no stored route) still needs an address, and says so.
      const bare = { ...identity };
      delete bare.proxyAddress;
      delete bare.authServerName;
      const oldDir = join(dir, "agent-old");
      await execFileP("mkdir", ["-m", "700", oldDir]);
      await writeFile(join(oldDir, "agent-identity.json"), JSON.stringify(bare), { mode: 0o600 });
      const old = daemon(["agent", "--data-dir", oldDir, ...node]);
      expect(await old.exited).not.toBe(0);
      expect(old.output()).toMatch(/pass --proxy <host:port>/);
    },
    STEP,
  );

  it(
    "svcctl agent-identities add prints svcd bot --proxy; the bot bootstraps and renews through the proxy",
    async () => {
      const add = await svcctl([
        "agent-identities",
        "add",
        "ci",
        "--roles",
        "access",
        "--ttl",
        "1m",
        "--json",
      ]);
      expect(add.code, add.stderr).toBe(0);
      const b = json<{ token: string; ca_pin: string; bot_command: string }>(add);
      expect(b.bot_command).toBe(
        `svcd bot --proxy ${proxy} --ca-pin ${b.ca_pin} --token ${b.token} --out /var/lib/svc-bot/ci`,
      );
      const out = join(dir, "bot");
      const bot = daemon(b.bot_command.replace("/var/lib/svc-bot/ci", out).split(" ").slice(1));
      const generation = async (): Promise<number> => {
        try {
          return (JSON.parse(await readFile(join(out, ".bot-state.json"), "utf8")) as { generation: number })
            .generation;
        } catch {
          return 0;
        }
      };
      await waitFor(
        async () => {
          if (bot.child.exitCode !== null) throw new Error(`bot exited: ${bot.output()}`);
          // The state file is written before the renewal's log line reaches us: wait for both.
          return (await generation()) >= 2 && /bot credentials renewed/.test(bot.output());
        },
        "a renewal through the proxy (at about half of the one-minute lifetime)",
        90_000,
      );
      expect(bot.output()).toMatch(/bot bootstrapped/);
      expect(bot.output()).toMatch(/bot credentials renewed/);
    },
    STEP,
  );

  it(
    "svcd agentless --proxy registers a plain sshd through the proxy",
    async () => {
      const add = await svcctl(["tokens", "add", "--json"]);
      const t = json<{ token: string; ca_pin: string }>(add);
      await execFileP("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", join(dir, "sshd-host")]);
      const r = await run("svcd", [
        "agentless",
        "--proxy",
        proxy,
        "--ca-pin",
        t.ca_pin,
        "--token",
        t.token,
        "--hostname",
        "plain-1",
        "--address",
        `127.0.0.1:${ports.node2}`,
        "--host-key",
        join(dir, "sshd-host.pub"),
        "--out",
        join(dir, "agentless"),
      ]);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toMatch(/^node \S+ registered/);
      expect(await readFile(join(dir, "agentless", "ssh_host_cert.pub"), "utf8")).toMatch(
        /^ssh-ed25519-cert-v01@openssh\.com /,
      );
      expect((await nodes()).map((n) => n.hostname)).toContain("plain-1");
    },
    STEP,
  );

  it(
    "a proxy that does not answer, or answers without TLS routing, is named with a hint to use --auth; a wrong CA pin through the proxy is refused",
    async () => {
      const closed = `127.0.0.1:${await freePort()}`;
      const c1 = await svcctl(["--proxy", closed, "users", "ls"]);
      expect(c1.code).toBe(6);
      expect(c1.stderr).toContain(`the proxy at ${closed} did not answer its ping`);
      expect(c1.stderr).toContain("--auth");
      const a1 = daemon([
        "agent",
        "--proxy",
        closed,
        "--ca-pin",
        `sha256:${"0".repeat(64)}`,
        "--token",
        "x.y",
        "--data-dir",
        join(dir, "a1"),
      ]);
      expect(await a1.exited).not.toBe(0);
      expect(a1.output()).toContain(`the proxy at ${closed} did not answer its ping`);

      // A proxy from before TLS routing: ping answers, without tls_routing.
      await execFileP("openssl", [
        "req",
        "-x509",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:P-256",
        "-nodes",
        "-subj",
        "/CN=old-proxy",
        "-days",
        "1",
        "-keyout",
        join(dir, "old.key"),
        "-out",
        join(dir, "old.crt"),
      ]);
      const server = createServer(
        { key: await readFile(join(dir, "old.key")), cert: await readFile(join(dir, "old.crt")) },
        (_req, res) => {
          res.setHeader("content-type", "application/json");
          res.end(JSON.stringify({ cluster_name: "old", server_version: "0.0.1" }));
        },
      );
      oldProxy = server;
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      const address = server.address();
      const old = `127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
      const c2 = await svcctl(["--proxy", old, "users", "ls"]);
      expect(c2.code).not.toBe(0);
      expect(c2.stderr).toContain(`the proxy at ${old} does not route gRPC to auth`);
      expect(c2.stderr).toContain("--auth");
      const bot = daemon([
        "bot",
        "--proxy",
        old,
        "--ca-pin",
        `sha256:${"0".repeat(64)}`,
        "--token",
        "x.y",
        "--out",
        join(dir, "b2"),
      ]);
      expect(await bot.exited).not.toBe(0);
      expect(bot.output()).toContain(`the proxy at ${old} does not route gRPC to auth`);

      // Through the real proxy, a pin of another CA: the same refusal as a direct join.
      const add = await svcctl(["tokens", "add", "--json"]);
      const t = json<{ token: string }>(add);
      const wrong = daemon([
        "agent",
        "--proxy",
        proxy,
        "--ca-pin",
        `sha256:${"ab".repeat(32)}`,
        "--token",
        t.token,
        "--data-dir",
        join(dir, "a2"),
        "--listen",
        "127.0.0.1:0",
      ]);
      expect(await wrong.exited).not.toBe(0);
      expect(wrong.output()).toMatch(/does not match the CA pin: refusing to join/);

      // --auth and --proxy together are a usage error for the daemons too.
      const both = await run("svcd", [
        "agent",
        "--proxy",
        proxy,
        "--auth",
        `127.0.0.1:${ports.auth}`,
        "--data-dir",
        join(dir, "a3"),
      ]);
      expect(both.code).not.toBe(0);
      expect(both.stderr).toMatch(/cannot be used with/);
    },
    STEP,
  );

  it("--help of every changed command shows --proxy", async () => {
    for (const [prog, args] of [
      ["svcctl", []],
      ["svcd", ["agent"]],
      ["svcd", ["bot"]],
      ["svcd", ["agentless"]],
    ] as const) {
      const r = await run(prog, [...args, "--help"]);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout, `${prog} ${args.join(" ")}`).toMatch(/--proxy <host:port>/);
    }
  });
});

describe("the console's join command names the address the proxy was started on", () => {
  it("public_addr, unless --proxy-listen moved the proxy for this run", () => {
    expect(publicAddressOfRun("svc.example.com:443", undefined, "https://127.0.0.1:3080")).toBe(
      "svc.example.com:443",
    );
    expect(publicAddressOfRun("vm:3080", "127.0.0.1:0", "https://127.0.0.1:41234")).toBe("127.0.0.1:41234");
    expect(publicAddressOfRun("vm:3080", "0.0.0.0:4000", "https://0.0.0.0:4000")).toBe("vm:4000");
  });
});

describe("an agent's route to auth (flags, else what its identity stored)", () => {
  const warnings: string[] = [];
  const log = { warn: (_o: object, msg: string) => void warnings.push(msg) };

  it("a stored proxy whose ping does not answer keeps the auth name learned before", async () => {
    const closed = `127.0.0.1:${await freePort()}`;
    const route = await agentAuthRoute({}, { proxyAddress: closed, authServerName: "auth.internal" }, log);
    expect(route).toEqual({ address: closed, serverName: "auth.internal", proxy: closed });
    expect(warnings).toContain("proxy ping failed; using the auth server name learned before");
    // A proxy given now and never answered: no name to fall back to.
    await expect(agentAuthRoute({ proxyAddress: closed }, undefined, log)).rejects.toThrow(
      `the proxy at ${closed} did not answer its ping`,
    );
  });

  it("--auth wins over a stored proxy; an old identity with neither needs a flag; both flags are refused", async () => {
    expect(await agentAuthRoute({ authAddress: "10.0.0.5:3025" }, { proxyAddress: "p:443" }, log)).toEqual({
      address: "10.0.0.5:3025",
    });
    expect(await agentAuthRoute({}, { authAddress: "a:3025", authServerName: "auth" }, log)).toEqual({
      address: "a:3025",
      serverName: "auth",
    });
    await expect(agentAuthRoute({}, {}, log)).rejects.toThrow(/pass --proxy <host:port>/);
    await expect(agentAuthRoute({ authAddress: "a:1", proxyAddress: "p:2" }, undefined, log)).rejects.toThrow(
      /pass only one/,
    );
  });
});
