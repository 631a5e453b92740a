// `svcd agent --tunnel` and `svc ssh` as users run them, all real processes: the embedded platform
// (`svcd start`), a node agent that joins through the proxy's one public port and listens on no
// port, and `svc ssh node <command>`, whose SSH runs end to end over the proxy's node stream
// (/v1/webapi/ssh/dial) and the node's reverse tunnel.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Daemon, json, type RunResult, run, spawnDaemon, waitFor } from "./cli-fixture.ts";
import { freePort } from "./harness/ports.ts";

const STEP = 240_000;
const NODE = "tunnel-node";

describe("svc ssh to a node behind a reverse tunnel", () => {
  let dir: string;
  let proxy: string;
  let platform: Daemon | undefined;
  let agent: Daemon | undefined;
  let env: NodeJS.ProcessEnv;
  let authPort: number;
  let startPlatform: () => Promise<Daemon>;

  const svc = (args: string[]): Promise<RunResult> => run("svc", args, { env });
  const svcctl = (args: string[]): Promise<RunResult> =>
    run("svcctl", ["--auth", `127.0.0.1:${authPort}`, ...args], { env });

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "svc-tunnel-cli-"));
    const dataDir = join(dir, "data");
    authPort = await freePort();
    proxy = `127.0.0.1:${await freePort()}`;
    // Its own diagnostics port: the default (3026) would collide with other suites' platforms.
    const diag = `127.0.0.1:${await freePort()}`;
    await writeFile(join(dir, "admin-pw"), "admin-password-for-tests\n", { mode: 0o600 });
    env = { SVC_HOME: join(dir, "admin-home"), SVC_DATA_DIR: dataDir };
    startPlatform = async () => {
      const d = spawnDaemon(
        ["start", "--auth-listen", `127.0.0.1:${authPort}`, "--proxy-listen", proxy, "--diag-listen", diag],
        {
          SVC_DATA_DIR: dataDir,
          SVC_ADMIN_PASSWORD_FILE: join(dir, "admin-pw"),
        },
      );
      await waitFor(() => d.output().includes("svc is running") || d.child.exitCode !== null, "svcd start");
      expect(d.child.exitCode, d.output()).toBeNull();
      return d;
    };
    platform = await startPlatform();
    const login = await svc([
      "login",
      "--proxy",
      proxy,
      "--ca",
      join(dataDir, "host-ca.pem"),
      "--user",
      "admin",
      "--password-file",
      join(dir, "admin-pw"),
    ]);
    expect(login.code, login.stderr).toBe(0);
  }, STEP);

  afterAll(async () => {
    await agent?.stop();
    await platform?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  }, 60_000);

  it(
    "svcd agent --proxy --tunnel joins through the proxy and serves SSH on no port",
    async () => {
      const add = await svcctl(["tokens", "add", "--name", "tunnel", "--ttl", "30m", "--json"]);
      expect(add.code, add.stderr).toBe(0);
      const t = json<{ token: string; ca_pin: string }>(add);
      agent = spawnDaemon(
        [
          "agent",
          "--proxy",
          proxy,
          "--tunnel",
          "--ca-pin",
          t.ca_pin,
          "--token",
          t.token,
          "--data-dir",
          join(dir, "agent"),
          "--hostname",
          NODE,
        ],
        {},
      );
      await waitFor(async () => {
        if (agent?.child.exitCode !== null) throw new Error(`agent exited: ${agent?.output()}`);
        return agent.output().includes("tunnel to the proxy is up");
      }, "the tunnel");
      expect(agent.output()).toMatch(/serving SSH through a reverse tunnel to the proxy\n/);
      const ls = await svc(["ls", "--json"]);
      expect(ls.code, ls.stderr).toBe(0);
      const node = json<Array<{ hostname: string; status: string; addresses: string[] }>>(ls).find(
        (n) => n.hostname === NODE,
      );
      expect(node).toMatchObject({ status: "online", addresses: [] });
    },
    STEP,
  );

  it(
    "svc ssh node <command> runs through the proxy and the tunnel; exit codes and refusals carry over",
    async () => {
      const hi = await svc(["ssh", `root@${NODE}`, "echo", "hi"]);
      expect(hi.code, hi.stderr).toBe(0);
      expect(hi.stdout).toBe("hi\n");
      const three = await svc(["ssh", `root@${NODE}`, "exit 3"]);
      expect(three.code).toBe(3);
      // The node still decides: a login the roles do not grant is refused (exit 4).
      const nobody = await svc(["ssh", `nobody@${NODE}`, "true"]);
      expect(nobody.code).toBe(4);
      // --direct dials the node's address, and this node has none.
      const direct = await svc(["ssh", "--direct", `root@${NODE}`, "true"]);
      expect(direct.code).not.toBe(0);
      expect(direct.stderr).toMatch(/advertises no address/);
    },
    STEP,
  );

  it(
    "the agent reconnects after the platform restarts, and svc ssh reaches it again",
    async () => {
      const ups = (): number => agent?.output().split("tunnel to the proxy is up").length ?? 0;
      const before = ups();
      await platform?.stop();
      platform = await startPlatform();
      // The agent's backoff (1 s doubling, jitter) brings it back within a few attempts.
      await waitFor(() => ups() > before, "the tunnel after the restart", 120_000);
      const again = await svc(["ssh", `root@${NODE}`, "echo", "again"]);
      expect(again.code, again.stderr).toBe(0);
      expect(again.stdout).toBe("again\n");
    },
    STEP,
  );

  it(
    "a stopped tunnel node is unreachable at once, with a clear error",
    async () => {
      await agent?.stop();
      const r = await svc(["ssh", `root@${NODE}`, "true"]);
      expect(r.code).not.toBe(0);
      // Offline (heartbeats stop with the agent) or unreachable (no tunnel): both say so plainly.
      // Right after the restart above the node's record may still name the previous proxy
      // process as the tunnel's holder (its id is per process) until the agent's next heartbeat:
      // then the proxy asks that "peer", which holds no tunnel either.
      expect(r.stderr).toMatch(
        /is unreachable: (it has no tunnel and advertises no address|through a peer proxy: .*holds no tunnel)|is offline/,
      );
    },
    STEP,
  );
});
