// A node that can reach nothing but the proxy's public port: `svcd agent --proxy --tunnel` runs in
// its own network namespace whose firewall lets out only TCP to the proxy (test/harness/netns.ts),
// against the platform as a user starts it (`svcd start`, listening on the host side of the veth).
// The node joins through the proxy, shows up online, and a browser terminal (headless Chromium)
// and `svc ssh` reach it through its reverse tunnel; its sessions are audited and recorded as for
// a direct node. Needs root (ip netns, iptables).
import type { ChildProcess } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { request } from "node:https";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml, stringify as stringifyYaml } from "yaml";
import { type Daemon, json, type RunResult, root, run, spawnDaemon, waitFor } from "./cli-fixture.ts";
import { ensureConsoleBuilt, signIn } from "./console-kit.ts";
import { launchChromium, type RunningChromium } from "./harness/chromium.ts";
import { createNetns, type Netns, tcpProbe } from "./harness/netns.ts";

const STEP = 240_000;
const PASSWORD = "tunnel-netns-password-1";
const NODE = "tunnelled";

/** A free port on a given local address (the host side of the veth, not loopback). */
async function freePortOn(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, host, () => {
      const a = s.address();
      const port = typeof a === "object" && a ? a.port : 0;
      s.close(() => resolve(port));
    });
  });
}

function httpsGet(
  host: string,
  port: number,
  ca: string,
  path: string,
  sessionId: string,
): Promise<{ status: number; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host, port, path, ca, headers: { authorization: `Bearer ${sessionId}` } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (d: Buffer) => chunks.push(d));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }));
      },
    );
    req.on("error", reject);
    req.end();
  });
}

interface AuditItem {
  event_type: string;
  user_name: string;
  fields: Record<string, unknown>;
}

describe("a tunnelled node in a namespace that reaches only the proxy", () => {
  let ns: Netns;
  let dir: string;
  let dataDir: string;
  let ports: { auth: number; proxy: number; diag: number };
  let proxyAddr: string;
  let platform: Daemon | undefined;
  let agent: { child: ChildProcess; output: () => string } | undefined;
  let chrome: RunningChromium | undefined;
  let adminEnv: NodeJS.ProcessEnv;
  let caPem: string;

  const svc = (args: string[], input?: string): Promise<RunResult> =>
    run("svc", args, { env: adminEnv, ...(input !== undefined ? { input } : {}) });
  const svcctl = (args: string[]): Promise<RunResult> =>
    run("svcctl", ["--auth", `${ns.hostIp}:${ports.auth}`, ...args], { env: adminEnv });

  async function startPlatform(args: string[], env: NodeJS.ProcessEnv = {}): Promise<Daemon> {
    const d = spawnDaemon(args, { SVC_DATA_DIR: dataDir, ...env });
    await waitFor(() => d.output().includes("svc is running") || d.child.exitCode !== null, "svcd start");
    expect(d.child.exitCode, d.output()).toBeNull();
    return d;
  }

  beforeAll(async () => {
    ensureConsoleBuilt();
    ns = await createNetns();
    dir = await mkdtemp(join(tmpdir(), "svc-tunnel-netns-"));
    dataDir = join(dir, "data");
    ports = {
      auth: await freePortOn(ns.hostIp),
      proxy: await freePortOn(ns.hostIp),
      diag: await freePortOn("127.0.0.1"),
    };
    proxyAddr = `${ns.hostIp}:${ports.proxy}`;
    adminEnv = { SVC_HOME: join(dir, "admin-home"), SVC_DATA_DIR: dataDir };

    // First start writes the data folder; then the config names the public address the node
    // dials (the host side of the veth), as an admin would edit svc.yaml, and the platform restarts.
    const pwFile = join(dir, "admin-password");
    await writeFile(pwFile, `${PASSWORD}\n`, { mode: 0o600 });
    const first = await startPlatform(["start"], { SVC_ADMIN_PASSWORD_FILE: pwFile });
    await first.stop();
    const cfgPath = join(dataDir, "svc.yaml");
    const cfg = parseYaml(await readFile(cfgPath, "utf8")) as {
      auth: Record<string, unknown>;
      proxy: Record<string, unknown>;
    };
    cfg.auth.listen_addr = `${ns.hostIp}:${ports.auth}`;
    cfg.auth.diagnostics_addr = `127.0.0.1:${ports.diag}`;
    cfg.proxy.listen_addr = proxyAddr;
    cfg.proxy.public_addr = proxyAddr;
    cfg.proxy.oidc_issuer_url = `https://${proxyAddr}`;
    delete cfg.proxy.diagnostics_addr;
    await writeFile(cfgPath, stringifyYaml(cfg), { mode: 0o600 });
    platform = await startPlatform(["start"]);
    caPem = await readFile(join(dataDir, "host-ca.pem"), "utf8");

    // The node's only way out: the proxy's public port.
    await ns.allow([{ host: ns.hostIp, port: ports.proxy }]);

    const login = await svc([
      "login",
      "--proxy",
      proxyAddr,
      "--ca",
      join(dataDir, "host-ca.pem"),
      "--user",
      "admin",
      "--password-file",
      pwFile,
    ]);
    expect(login.code, login.stderr).toBe(0);
  }, STEP);

  afterAll(async () => {
    await chrome?.close().catch(() => undefined);
    if (agent && agent.child.exitCode === null) {
      const exited = new Promise((r) => agent?.child.once("exit", r));
      agent.child.kill("SIGTERM");
      const t = setTimeout(() => agent?.child.kill("SIGKILL"), 10_000);
      await exited;
      clearTimeout(t);
    }
    await platform?.stop();
    await ns?.destroy();
    if (dir) await rm(dir, { recursive: true, force: true });
  }, 60_000);

  it(
    "the namespace reaches the proxy's port and nothing else: auth's gRPC port is refused",
    async () => {
      expect(await tcpProbe(ns, ns.hostIp, ports.proxy)).toBe("connected");
      expect(await tcpProbe(ns, ns.hostIp, ports.auth)).not.toBe("connected");
      // Also refused: any other host address (loopback inside is the namespace's own).
      expect(await tcpProbe(ns, "127.0.0.1", ports.proxy)).not.toBe("connected");
      // And auth is really listening there: from the host the same port connects.
      await new Promise<void>((resolve, reject) => {
        const s = createServer();
        s.once("error", (e: NodeJS.ErrnoException) => (e.code === "EADDRINUSE" ? resolve() : reject(e)));
        s.listen(ports.auth, ns.hostIp, () => s.close(() => reject(new Error("auth is not listening"))));
      });
    },
    STEP,
  );

  it(
    "svcd agent --proxy --tunnel joins from inside the namespace and shows up online",
    async () => {
      const add = await svcctl(["tokens", "add", "--name", "netns", "--ttl", "30m", "--json"]);
      expect(add.code, add.stderr).toBe(0);
      const t = json<{ token: string; ca_pin: string; agent_command: string }>(add);
      const child = ns.spawn(process.execPath, [
        "--disable-warning=ExperimentalWarning",
        join(root, "server", "main.ts"),
        "agent",
        "--proxy",
        proxyAddr,
        "--tunnel",
        "--ca-pin",
        t.ca_pin,
        "--token",
        t.token,
        "--data-dir",
        join(dir, "agent"),
        "--hostname",
        NODE,
      ]);
      let out = "";
      child.stdout?.on("data", (d: Buffer) => {
        out += d.toString();
      });
      child.stderr?.on("data", (d: Buffer) => {
        out += d.toString();
      });
      agent = { child, output: () => out };
      await waitFor(
        async () => {
          if (child.exitCode !== null) throw new Error(`agent exited: ${out}`);
          const ls = await svc(["ls", "--json"]);
          return (
            ls.code === 0 &&
            json<Array<{ hostname: string; status: string }>>(ls).some(
              (n) => n.hostname === NODE && n.status === "online",
            )
          );
        },
        `${NODE} online`,
        120_000,
      );
      // Online means heartbeating to auth (through the proxy); the tunnel is the other half.
      await waitFor(() => out.includes("tunnel to the proxy is up"), "the agent's tunnel", 60_000).catch(
        (err: Error) => {
          throw new Error(`${err.message}\nagent: ${out}`);
        },
      );
      // Nothing to dial: the node advertises no address.
      const listed = json<Array<{ hostname: string; addresses: string[] }>>(await svc(["ls", "--json"]));
      expect(listed.find((n) => n.hostname === NODE)?.addresses).toEqual([]);
    },
    STEP,
  );

  it(
    "a browser terminal runs a command on the tunnelled node",
    async () => {
      chrome = await launchChromium({ ignoreHTTPSErrors: true, viewport: { width: 1280, height: 800 } });
      const page = await chrome.context.newPage();
      await signIn(page, "admin", PASSWORD, {
        origin: `https://${proxyAddr}`,
        next: `/web/nodes?search=${NODE}`,
      });
      const row = page.locator("#nodes-table tbody tr").first();
      await row.locator(".connect-button").waitFor({ timeout: 30_000 });
      await row.locator(".connect-button").click();
      await page.waitForURL((u) => u.pathname === "/web/terminal");
      await page.waitForSelector('#status[data-state="connected"]', { timeout: 60_000 });
      await page.locator("#terminal").click();
      await page.keyboard.type("echo browser-$((40+2))");
      await page.keyboard.press("Enter");
      await page.waitForFunction(
        () => {
          const t = (
            window as unknown as {
              svcTerminal?: {
                term: {
                  buffer: {
                    active: {
                      length: number;
                      getLine(i: number): { translateToString(trim: boolean): string } | undefined;
                    };
                  };
                };
              };
            }
          ).svcTerminal?.term;
          if (!t) return false;
          for (let i = 0; i < t.buffer.active.length; i++) {
            if (t.buffer.active.getLine(i)?.translateToString(true) === "browser-42") return true;
          }
          return false;
        },
        undefined,
        { timeout: 30_000 },
      );
      await page.keyboard.type("exit");
      await page.keyboard.press("Enter");
      await page.close();
    },
    STEP,
  );

  it(
    "svc ssh runs a command on the tunnelled node, with a command and as a shell",
    async () => {
      // The node's network is the namespace's: the address it sees is the veth's.
      const cmd = await svc([
        "ssh",
        `root@${NODE}`,
        "echo ssh-$((40+2)); ip -4 -o addr show | grep -c 10.213.",
      ]);
      expect(cmd.code, `${cmd.stderr}\nagent: ${agent?.output()}`).toBe(0);
      expect(cmd.stdout.trim().split("\n")).toEqual(["ssh-42", "1"]);

      const shell = await svc(["ssh", `root@${NODE}`], "echo shell-$((40+2))\nexit 5\n");
      expect(shell.code, shell.stderr).toBe(5);
      expect(shell.stdout).toContain("shell-42");

      // Auth's per-node decision holds through the tunnel: a login the roles do not grant.
      const refused = await svc(["ssh", `nobody@${NODE}`, "true"]);
      expect(refused.code).toBe(4);
      expect(refused.stderr).toMatch(/not allowed by your roles/);
    },
    STEP,
  );

  it(
    "the tunnelled sessions are audited and recorded as for a direct node",
    async () => {
      const nodes = json<Array<{ id: string; hostname: string }>>(await svc(["ls", "--json"]));
      const nodeId = nodes.find((n) => n.hostname === NODE)?.id ?? "";
      expect(nodeId).not.toBe("");
      let starts: AuditItem[] = [];
      await waitFor(async () => {
        const r = await svcctl(["audit", "search", "--type", "session.start", "--json"]);
        starts = json<{ items: AuditItem[] }>(r).items.filter((i) => i.fields.node_id === nodeId);
        return starts.length >= 3;
      }, "three session.start events of the tunnelled node");
      expect(starts.every((s) => s.user_name === "admin")).toBe(true);
      const withCommand = starts.find((s) => String(s.fields.command ?? "").includes("ssh-$((40+2))"));
      expect(withCommand).toBeDefined();

      // The shell's recording (the session with a TTY and no command) holds what it printed.
      const profile = JSON.parse(await readFile(join(dir, "admin-home", "profile.json"), "utf8")) as {
        session_id: string;
      };
      const shells = starts.filter((s) => s.fields.command === undefined);
      expect(shells.length).toBeGreaterThanOrEqual(2);
      const texts: string[] = [];
      await waitFor(async () => {
        texts.length = 0;
        for (const s of shells) {
          const r = await httpsGet(
            ns.hostIp,
            ports.proxy,
            caPem,
            `/v1/webapi/sessions/${String(s.fields.session_id)}/recording`,
            profile.session_id,
          );
          if (r.status === 200) texts.push(r.body.toString("latin1"));
        }
        return texts.some((t) => t.includes("shell-42")) && texts.some((t) => t.includes("browser-42"));
      }, "the recordings of the browser and svc ssh shells");
    },
    STEP,
  );

  it(
    "svcctl nodes rm: the tunnelled node is gone for svc ssh and svc ls, as a direct node",
    async () => {
      const nodes = json<Array<{ id: string; hostname: string }>>(await svcctl(["nodes", "ls", "--json"]));
      const nodeId = nodes.find((n) => n.hostname === NODE)?.id ?? "";
      const rm = await svcctl(["nodes", "rm", nodeId]);
      expect(rm.code, rm.stderr).toBe(0);
      const gone = await svc(["ssh", `root@${NODE}`, "true"]);
      expect(gone.code, gone.stderr).toBe(5);
      const listed = json<Array<{ hostname: string }>>(await svc(["ls", "--json"]));
      expect(listed.map((n) => n.hostname)).not.toContain(NODE);
    },
    STEP,
  );
});
