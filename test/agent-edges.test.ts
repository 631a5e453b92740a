// Two edges of a node agent that dials auth by IP address and listens on every interface, as
// `svcd agent --auth <ip>:3025 --listen 0.0.0.0:3022` does on a real machine:
// - no "ServerName is an IP address" (DEP0123) warning from Node's TLS, while auth's certificate
//   is still checked against the IP (and against an explicit name when one is given);
// - `svc ls` (GET /v1/webapi/nodes, what the console shows) lists the address the node reaches
//   auth from, never 0.0.0.0, also after its heartbeats.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createSecureServer, type Http2SecureServer } from "node:http2";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRootCa, generateEcdsaP256, issueTlsServerCert, privateKeyToPem } from "../core/certs/x509.ts";
import { systemClock as clock } from "../core/clock.ts";
import { callUnary, createAuthClient } from "../server/auth/client.ts";
import { type Daemon, json, type RunResult, run, spawnDaemon, waitFor } from "./cli-fixture.ts";
import { freePort } from "./harness/ports.ts";

const STEP = 120_000;
const IP_SERVERNAME_WARNING = /DEP0123|ServerName to an IP address/;

describe("svcd agent dialing auth by IP, listening on 0.0.0.0", () => {
  let dir: string;
  let dataDir: string;
  let ports: { auth: number; proxy: number; diag: number; node: number };
  let platform: Daemon | undefined;
  let agent: Daemon | undefined;
  let env: NodeJS.ProcessEnv;
  const svc = (args: string[]): Promise<RunResult> => run("svc", args, { env });
  const svcctl = (args: string[]): Promise<RunResult> =>
    run("svcctl", ["--auth", `127.0.0.1:${ports.auth}`, ...args], { env });

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "svc-agent-edges-"));
    dataDir = join(dir, "data");
    ports = {
      auth: await freePort(),
      proxy: await freePort(),
      diag: await freePort(),
      node: await freePort(),
    };
    await writeFile(join(dir, "admin-pw"), "admin-password-for-tests\n");
    env = { SVC_HOME: join(dir, "home"), SVC_DATA_DIR: dataDir };
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
      { SVC_DATA_DIR: dataDir, SVC_ADMIN_PASSWORD_FILE: join(dir, "admin-pw") },
    );
    await waitFor(
      () => platform?.output().includes("svc is running") || platform?.child.exitCode !== null,
      "svcd start",
    );
    expect(platform.child.exitCode, platform.output()).toBeNull();
    const login = await svc([
      "login",
      "--proxy",
      `127.0.0.1:${ports.proxy}`,
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
  });

  it(
    "joins and heartbeats without the IP ServerName warning; svc ls shows the address auth sees",
    async () => {
      const add = await svcctl(["tokens", "add", "--name", "edge", "--ttl", "30m", "--json"]);
      expect(add.code, add.stderr).toBe(0);
      expect(add.stderr).not.toMatch(IP_SERVERNAME_WARNING);
      const t = json<{ token: string; ca_pin: string }>(add);
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
          `0.0.0.0:${ports.node}`,
          "--hostname",
          "edge1",
        ],
        {},
      );
      // The first heartbeat is sent before the agent says it serves SSH.
      await waitFor(() => {
        if (agent?.child.exitCode !== null) throw new Error(`agent exited: ${agent?.output()}`);
        return agent.output().includes("agent serving SSH");
      }, "agent serving SSH");
      const ls = await svc(["ls", "--json"]);
      expect(ls.code, ls.stderr).toBe(0);
      const nodes = json<Array<{ hostname: string; addresses: string[]; status: string }>>(ls);
      expect(nodes).toEqual([
        expect.objectContaining({
          hostname: "edge1",
          addresses: [`127.0.0.1:${ports.node}`],
          status: "online",
        }),
      ]);
      const table = await svc(["ls"]);
      expect(table.stdout).toMatch(new RegExp(`edge1\\s+online\\s+127\\.0\\.0\\.1:${ports.node}`));
      expect(table.stdout).not.toContain("0.0.0.0");
      // A restart (no token: heartbeats only) keeps the real address too.
      await agent.stop();
      agent = spawnDaemon(
        [
          "agent",
          "--auth",
          `127.0.0.1:${ports.auth}`,
          "--data-dir",
          join(dir, "agent"),
          "--listen",
          `0.0.0.0:${ports.node}`,
        ],
        {},
      );
      await waitFor(() => {
        if (agent?.child.exitCode !== null) throw new Error(`agent exited: ${agent?.output()}`);
        return agent.output().includes("agent serving SSH");
      }, "restarted agent serving SSH");
      const again = json<Array<{ addresses: string[] }>>(await svc(["ls", "--json"]));
      expect(again.map((n) => n.addresses)).toEqual([[`127.0.0.1:${ports.node}`]]);
      expect(agent.output()).not.toMatch(IP_SERVERNAME_WARNING);
    },
    STEP,
  );
});

describe("auth client TLS to an IP address", () => {
  let server: Http2SecureServer;
  let port = 0;
  let caPem = "";

  beforeAll(async () => {
    // A TLS server whose certificate names only "localhost" (no IP SAN).
    const caKey = generateEcdsaP256();
    caPem = await createRootCa({ privateKey: caKey.privateKey, commonName: "edge CA", clock });
    const key = generateEcdsaP256();
    const cert = await issueTlsServerCert(
      { certPem: caPem, privateKey: caKey.privateKey },
      { publicKey: key.publicKey, commonName: "only-a-name", dnsNames: ["localhost"], ips: [], clock },
    );
    server = createSecureServer({ cert, key: privateKeyToPem(key.privateKey) });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const addr = server.address();
    port = typeof addr === "object" && addr ? addr.port : 0;
  });

  afterAll(async () => {
    await new Promise<void>((resolve) => server?.close(() => resolve()));
  });

  it("still checks the certificate against the IP (and an explicit name) and emits no warning", async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(`${w.name}: ${w.message}`);
    process.on("warning", onWarning);
    try {
      const byIp = createAuthClient({ address: `127.0.0.1:${port}`, caPems: [caPem] });
      const wrongName = createAuthClient({
        address: `127.0.0.1:${port}`,
        caPems: [caPem],
        serverName: "not-in-the-cert",
      });
      const deadline = { deadline: Date.now() + 5000 };
      const refused = async (c: typeof byIp) =>
        callUnary(c, "GetClusterInfo", {}, undefined, deadline).then(
          () => "connected",
          (err: { cause?: { details?: string } }) => err.cause?.details ?? String(err),
        );
      expect(await refused(byIp)).toMatch(/IP: 127\.0\.0\.1 is not in the cert's list/);
      expect(await refused(wrongName)).toMatch(/not-in-the-cert/);
      byIp.close();
      wrongName.close();
      await new Promise((r) => setImmediate(r));
      expect(warnings.filter((w) => IP_SERVERNAME_WARNING.test(w))).toEqual([]);
    } finally {
      process.off("warning", onWarning);
    }
  });
});
