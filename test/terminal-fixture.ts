// The browser-terminal world, all real: auth (agent join wired in) from test/agent-fixture.ts, a
// node agent (runAgent, in process) joined with a one-time token, a plain OpenSSH sshd registered
// as an agentless node, a node whose heartbeats stopped an hour ago, and the proxy over HTTPS
// with the terminal, recording and web routes. Tests reach everything through the proxy.
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import type { FastifyPluginAsync } from "fastify";
import pino from "pino";
import {
  generateEcdsaP256,
  issueTlsClientCert,
  issueTlsServerCert,
  privateKeyToPem,
  serviceIdentityUri,
} from "../core/certs/x509.ts";
import { ManualClock, systemClock } from "../core/clock.ts";
import { API_VERSION } from "../core/resources/index.ts";
import { registerAgentlessNode } from "../server/agent/agentless.ts";
import { type RunningAgent, runAgent } from "../server/agent/main.ts";
import type { SessionOpenTimings } from "../server/agent/ssh-server.ts";
import { NodeStore } from "../server/auth/nodes.ts";
import { setPassword } from "../server/auth/passwords.ts";
import type { ProxyConfig } from "../server/proxy/config.ts";
import { proxyDefaults } from "../server/proxy/config.ts";
import { GrpcAuthApi } from "../server/proxy/grpc-auth-api.ts";
import { recordingRoutes } from "../server/proxy/recordings-route.ts";
import { type ProxyServer, startProxyServer } from "../server/proxy/server.ts";
import { GrpcTerminalAuthApi } from "../server/proxy/terminal-auth.ts";
import type { BridgeStats } from "../server/proxy/terminal-bridge.ts";
import {
  type TerminalOpenTimings,
  type TerminalRouteOptions,
  terminalRoutes,
} from "../server/proxy/terminal-route.ts";
import { webRoutes } from "../web/serve.ts";
import { type AgentAuthEnv, startAgentAuthEnv } from "./agent-fixture.ts";
import { PASSWORD } from "./auth-fixture.ts";
import { type RunningSshd, startSshd } from "./harness/sshd.ts";
import { HttpsClient } from "./proxy-https-client.ts";

const run = promisify(execFile);

export const PUBLIC_HOST = "proxy.svc.test";
export { PASSWORD };

/**
 * alice: admin (logins alice, root). dave: ordinary user whose login is root. bob: ordinary user
 * with logins bob, deploy (no root). erin: root only on env=prod nodes (none here).
 */
export const NODES = { agent: "node-agent", sshd: "node-sshd", offline: "node-offline" } as const;

export interface TerminalFixture {
  env: AgentAuthEnv;
  agent: RunningAgent;
  sshd: RunningSshd;
  proxy: ProxyServer;
  client: HttpsClient;
  hostCaPem: string;
  /** https://proxy.svc.test:<port>: the proxy's public origin (browsers map the name to 127.0.0.1) */
  publicOrigin: string;
  /** stats of every bridged terminal session, in order */
  bridges: BridgeStats[];
  /** the proxy's stage timings of every opened terminal, in order */
  opens: TerminalOpenTimings[];
  /** the agent's open timings of every session it started, in order */
  agentOpens: SessionOpenTimings[];
  /** the proxy's gRPC client settings towards auth */
  grpc: FixtureGrpc;
  /** POST /v1/webapi/login -> session id and the cookie header a browser would send */
  login(user: string): Promise<{ sessionId: string; cookie: string }>;
  close(): Promise<void>;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const addr = srv.address();
      const port = typeof addr === "object" && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/**
 * A plain OpenSSH sshd registered as an agentless node: its own host key is certified by auth
 * (RegisterAgent agentless) before sshd starts on the registered port.
 */
export async function startAgentlessSshd(
  env: AgentAuthEnv,
  dir: string,
  hostname: string,
): Promise<RunningSshd> {
  const sshdPort = await freePort();
  const hostKeyPath = join(dir, `${hostname}_host_ed25519_key`);
  await run("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", hostname, "-f", hostKeyPath]);
  const reg = await registerAgentlessNode({
    authAddress: env.address,
    authServerName: env.serverName,
    caPin: env.pin,
    token: await env.addToken(`${hostname}-token`),
    hostname,
    address: `127.0.0.1:${sshdPort}`,
    hostPublicKeyFile: `${hostKeyPath}.pub`,
    outDir: join(dir, `${hostname}-node`),
  });
  return startSshd({
    hostKey: { privatePath: hostKeyPath, publicLine: await readFile(`${hostKeyPath}.pub`, "utf8") },
    hostCertificatePath: reg.hostCertificatePath,
    trustedUserCaKeys: [env.cas.sshUserCaPublicKey],
    // sshd listens on every Port line: ours (registered) and the harness's own.
    extraConfig: [`Port ${sshdPort}`, "MaxStartups 200", ...reg.sshdConfig],
  });
}

/** How the proxy reaches auth over gRPC (what GrpcAuthApi and its siblings take). */
export interface FixtureGrpc {
  address: string;
  caPems: string[];
  certPem: string;
  keyPem: string;
  serverName: string;
}

export async function startTerminalFixture(
  o: {
    terminal?: Partial<TerminalRouteOptions>;
    proxyPort?: number;
    /** the proxy's login rate limit (default: lifted far above what a test sends) */
    rateLimit?: ProxyConfig["rateLimit"];
    /** more proxy routes (the console's test kit adds the CLI and admin routes) */
    routes?: (grpc: FixtureGrpc) => FastifyPluginAsync[];
  } = {},
): Promise<TerminalFixture> {
  const cleanups: Array<() => Promise<void> | void> = [];
  const close = async (): Promise<void> => {
    for (const c of cleanups.reverse()) {
      try {
        await c();
      } catch {
        // keep closing the rest
      }
    }
  };
  const logger = pino({ level: process.env["SVC_TEST_LOG_LEVEL"] ?? "silent" });
  try {
    // A long heartbeat interval keeps live nodes "online" for the whole run on a slow machine.
    const env = await startAgentAuthEnv({ heartbeatIntervalSeconds: 3600 });
    cleanups.push(() => env.close());
    const dir = await mkdtemp(join(tmpdir(), "svc-terminal-"));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));

    await env.source.apply({
      apiVersion: API_VERSION,
      kind: "User",
      metadata: { name: "dave" },
      spec: { roles: ["access"], traits: { logins: ["root"] } },
    } as never);
    await setPassword(env.backend, "dave", PASSWORD);
    // erin may be root only on env=prod nodes: her certificate still lists root (it carries every
    // login of every role), so only the per-node decision keeps her out of the test nodes.
    await env.source.apply({
      apiVersion: API_VERSION,
      kind: "Role",
      metadata: { name: "prod-root" },
      spec: { allow: { logins: ["root"], node_labels: { env: "prod" } } },
    } as never);
    await env.source.apply({
      apiVersion: API_VERSION,
      kind: "User",
      metadata: { name: "erin" },
      spec: { roles: ["access", "prod-root"], traits: { logins: ["erin"] } },
    } as never);
    await setPassword(env.backend, "erin", PASSWORD);

    const agentOpens: SessionOpenTimings[] = [];
    const agent = await runAgent({
      authAddress: env.address,
      authServerName: env.serverName,
      caPin: env.pin,
      token: await env.addToken("agent-token"),
      dataDir: join(dir, "agent"),
      listen: "127.0.0.1:0",
      hostname: NODES.agent,
      labels: { env: "test" },
      logger,
      heartbeatIntervalSeconds: 3600,
      ssh: { onSessionOpened: (t) => agentOpens.push(t) },
    });
    cleanups.push(() => agent.close());

    const sshd = await startAgentlessSshd(env, dir, NODES.sshd);
    cleanups.push(() => sshd.stop());

    // A node that last reported an hour ago (the same store auth reads, written at that time).
    const past = new ManualClock(new Date(Date.now() - 3600_000 * 4));
    await new NodeStore({ backend: env.backend, clock: past }).heartbeat("offline-node-id", {
      hostname: NODES.offline,
      addresses: ["127.0.0.1:9"],
      labels: {},
      version: "0.1.0",
    });

    const clock = systemClock;
    const serverKey = generateEcdsaP256();
    const serverCertPem = await issueTlsServerCert(env.cas.hostCa, {
      publicKey: serverKey.publicKey,
      commonName: PUBLIC_HOST,
      dnsNames: [PUBLIC_HOST],
      ips: ["127.0.0.1"],
      clock,
    });
    const clientKey = generateEcdsaP256();
    const clientCertPem = await issueTlsClientCert(env.cas.hostCa, {
      publicKey: clientKey.publicKey,
      commonName: "proxy",
      uri: serviceIdentityUri("proxy", "proxy"),
      clock,
    });
    const grpc: FixtureGrpc = {
      address: env.address,
      caPems: [env.cas.hostCa.certPem],
      certPem: clientCertPem,
      keyPem: privateKeyToPem(clientKey.privateKey),
      serverName: env.serverName,
    };
    const authApi = new GrpcAuthApi(grpc);
    cleanups.push(() => authApi.close());
    const terminalAuth = new GrpcTerminalAuthApi(grpc);
    cleanups.push(() => terminalAuth.close());

    const proxyPort = o.proxyPort ?? (await freePort());
    const publicOrigin = `https://${PUBLIC_HOST}:${proxyPort}`;
    const config: ProxyConfig = {
      ...proxyDefaults,
      listenHost: "127.0.0.1",
      listenPort: proxyPort,
      publicUrl: publicOrigin,
      clusterName: "test",
      serverVersion: "0.1.0",
      clientVersionPolicy: { minimum: "0.1.0", recommended: "0.1.0" },
      oidcIssuerUrl: publicOrigin,
      rateLimit: o.rateLimit ?? { perAddress: 1000, perUsername: 1000, windowMs: 60_000 },
    };
    const bridges: BridgeStats[] = [];
    const opens: TerminalOpenTimings[] = [];
    const proxy = await startProxyServer({
      config,
      tls: { certPem: serverCertPem, keyPem: privateKeyToPem(serverKey.privateKey) },
      authApi,
      logger,
      ready: () => true,
      resources: env.source,
      routes: [
        terminalRoutes({
          terminalAuth,
          clock,
          onBridge: (s) => bridges.push(s),
          onOpened: (t) => opens.push(t),
          ...o.terminal,
        }),
        recordingRoutes({ terminalAuth }),
        webRoutes(),
        ...(o.routes?.(grpc) ?? []),
      ],
    });
    cleanups.push(() => proxy.close());
    const client = new HttpsClient(proxy.url, env.cas.hostCa.certPem, PUBLIC_HOST);

    return {
      env,
      agent,
      sshd,
      proxy,
      client,
      hostCaPem: env.cas.hostCa.certPem,
      publicOrigin,
      bridges,
      opens,
      agentOpens,
      grpc,
      async login(user) {
        const res = await client.send({
          method: "POST",
          path: "/v1/webapi/login",
          body: { username: user, password: PASSWORD },
        });
        const body = res.json as { session_id?: string } | undefined;
        if (res.status !== 200 || !body?.session_id)
          throw new Error(`login of ${user}: ${res.status} ${res.text}`);
        const cookie = res.setCookies.map((l) => l.split(";")[0]).join("; ");
        return { sessionId: body.session_id, cookie };
      },
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}
