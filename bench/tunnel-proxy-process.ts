// The proxy as its own process, for the terminal and tunnel benchmarks, so its CPU and memory are
// its own. Both sides of it live here so the config and the IPC messages are written once:
// - startProxyProcess() (the benchmark's side) issues the proxy's certificates from the auth
//   environment's host CA and forks this file: `node --expose-gc bench/tunnel-proxy-process.ts
//   '<json>'`;
// - run as the main module, it assembles the proxy as `svcd start` does: the public port's router
//   hands ALPN svc-tunnel connections to the tunnel server and the terminal route reaches nodes
//   through the NodeDialer (tunnel first, then the node's address); one channel to auth with the
//   session cache, the inventory copy and pushed locks, as server/roles/proxy.ts. It prints "READY <port>" and
//   answers {cmd:"memory"} (after a full GC), {cmd:"cpu"} (process.cpuUsage since start, µs, and
//   the wall clock), {cmd:"tunnels"} (how many are registered) and {cmd:"opens"} (the stage
//   timings of terminals opened since the last ask).
import { type ChildProcess, fork } from "node:child_process";
import pino from "pino";
import {
  generateEcdsaP256,
  issueTlsClientCert,
  issueTlsServerCert,
  privateKeyToPem,
  serviceIdentityUri,
} from "../core/certs/x509.ts";
import { systemClock } from "../core/clock.ts";
import { proxyDefaults } from "../server/proxy/config.ts";
import { GrpcAuthApi } from "../server/proxy/grpc-auth-api.ts";
import { startInventoryCache } from "../server/proxy/inventory-cache.ts";
import { startProxyTrust } from "../server/proxy/locks.ts";
import { startProxyServer } from "../server/proxy/server.ts";
import { SessionCache } from "../server/proxy/session-cache.ts";
import { GrpcTerminalAuthApi } from "../server/proxy/terminal-auth.ts";
import { type TerminalOpenTimings, terminalRoutes } from "../server/proxy/terminal-route.ts";
import { createProxyTunnels } from "../server/proxy/tunnel/index.ts";
import { proxyAuthConnection } from "../server/proxy/tunnel/registration.ts";
import type { AgentAuthEnv } from "../test/agent-fixture.ts";

interface ProxyProcessConfig {
  authAddress: string;
  authServerName: string;
  caPems: string[];
  clientCertPem: string;
  clientKeyPem: string;
  serverCertPem: string;
  serverKeyPem: string;
  publicUrl: string;
}

export interface ProxyMemory {
  rss: number;
  heapUsed: number;
  external: number;
  arrayBuffers: number;
}

export interface ProxyCpu {
  /** user + system CPU time since the process started, µs */
  cpuMicros: number;
  /** performance.now() of the process, ms */
  wallMs: number;
}

export interface ProxyProcess {
  child: ChildProcess;
  /** "127.0.0.1:<port>" of the public port */
  address: string;
  /** the proxy's TLS certificate and key (names `publicHost` and 127.0.0.1), PEM */
  serverCertPem: string;
  serverKeyPem: string;
  memory(): Promise<ProxyMemory>;
  cpu(): Promise<ProxyCpu>;
  tunnels(): Promise<number>;
  /** stage timings of the terminals opened since the last call */
  opens(): Promise<TerminalOpenTimings[]>;
  /** the same, with how many of them reused their session's certificate */
  opensReused(): Promise<{ opens: TerminalOpenTimings[]; reused: number }>;
  stop(): Promise<void>;
}

/** SIGTERM, then SIGKILL after 10 s; resolves once the child has exited. */
export async function stopChild(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  await new Promise<void>((resolve) => {
    const t = setTimeout(() => child.kill("SIGKILL"), 10_000);
    child.once("exit", () => {
      clearTimeout(t);
      resolve();
    });
    child.kill("SIGTERM");
  });
}

function waitLine(child: ChildProcess, re: RegExp, what: string): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    let buf = "";
    const timer = setTimeout(() => reject(new Error(`${what} did not start: ${buf.slice(-1000)}`)), 120_000);
    const on = (d: Buffer): void => {
      buf += d.toString();
      const m = re.exec(buf);
      if (m) {
        clearTimeout(timer);
        resolve(m);
      }
    };
    child.stdout?.on("data", on);
    child.stderr?.on("data", on);
    child.once("exit", (code) => reject(new Error(`${what} exited (${code}): ${buf.slice(-1000)}`)));
  });
}

/** Forks the proxy against `env`'s auth; it presents a host-CA certificate for `publicHost`. */
export async function startProxyProcess(env: AgentAuthEnv, publicHost: string): Promise<ProxyProcess> {
  const clock = systemClock;
  const serverKey = generateEcdsaP256();
  const clientKey = generateEcdsaP256();
  const cfg: ProxyProcessConfig = {
    authAddress: env.address,
    authServerName: env.serverName,
    caPems: [env.cas.hostCa.certPem],
    clientCertPem: await issueTlsClientCert(env.cas.hostCa, {
      publicKey: clientKey.publicKey,
      commonName: "proxy",
      uri: serviceIdentityUri("proxy", "bench"),
      clock,
    }),
    clientKeyPem: privateKeyToPem(clientKey.privateKey),
    serverCertPem: await issueTlsServerCert(env.cas.hostCa, {
      publicKey: serverKey.publicKey,
      commonName: publicHost,
      dnsNames: [publicHost],
      ips: ["127.0.0.1"],
      clock,
    }),
    serverKeyPem: privateKeyToPem(serverKey.privateKey),
    publicUrl: `https://${publicHost}`,
  };
  // SVC_BENCH_CPU_PROF=<folder>: a CPU profile of the proxy, written when it exits.
  const profDir = process.env["SVC_BENCH_CPU_PROF"];
  const child = fork(import.meta.filename, [JSON.stringify(cfg)], {
    execArgv: [
      "--expose-gc",
      ...(profDir ? ["--cpu-prof", `--cpu-prof-dir=${profDir}`, "--cpu-prof-name=proxy.cpuprofile"] : []),
    ],
    stdio: ["ignore", "pipe", "pipe", "ipc"],
  });
  // One request at a time: each answer is the next message.
  const ask = <T>(cmd: string): Promise<T> =>
    new Promise((resolve) => {
      child.once("message", (m) => resolve(m as T));
      child.send({ cmd });
    });
  try {
    const port = Number((await waitLine(child, /READY (\d+)/, "proxy"))[1]);
    return {
      child,
      address: `127.0.0.1:${port}`,
      serverCertPem: cfg.serverCertPem,
      serverKeyPem: cfg.serverKeyPem,
      memory: () => ask<ProxyMemory>("memory"),
      cpu: () => ask<ProxyCpu>("cpu"),
      tunnels: async () => (await ask<{ tunnels: number }>("tunnels")).tunnels,
      opens: async () => (await ask<{ opens: TerminalOpenTimings[] }>("opens")).opens,
      opensReused: () => ask<{ opens: TerminalOpenTimings[]; reused: number }>("opens"),
      stop: () => stopChild(child),
    };
  } catch (err) {
    await stopChild(child);
    throw err;
  }
}

async function main(cfg: ProxyProcessConfig): Promise<void> {
  const logger = pino({ level: "warn" }, pino.destination(2));
  const grpc = {
    address: cfg.authAddress,
    caPems: cfg.caPems,
    certPem: cfg.clientCertPem,
    keyPem: cfg.clientKeyPem,
    serverName: cfg.authServerName,
  };
  // As server/roles/proxy.ts assembles them: one channel to auth, locks pushed (WatchTrust), web
  // sessions from the session cache (WatchSessions) and the node list and the terminal's per-node
  // decision from the inventory copy (WatchInventory), auth asked while a copy cannot answer.
  const connection = proxyAuthConnection(grpc);
  const authApi = new GrpcAuthApi(connection);
  const opens: TerminalOpenTimings[] = [];
  let reused = 0;
  const terminalAuth = new GrpcTerminalAuthApi(connection);
  const trust = startProxyTrust({ connection: () => connection, clock: systemClock, logger });
  const sessions = new SessionCache({ connection: () => connection, clock: systemClock, logger });
  sessions.start();
  const inventory = startInventoryCache({
    connection: () => connection,
    trust: trust.watcher,
    clock: systemClock,
    logger,
  });
  // As `svcd proxy` assembles them. No registered-node check: auth's backend is in the benchmark's
  // process (svcd start checks its node records; the check is one lookup per tunnel at connect).
  const tunnels = createProxyTunnels({
    tls: () => ({ certPem: cfg.serverCertPem, keyPem: cfg.serverKeyPem, caPems: cfg.caPems }),
    logger,
  });
  const proxy = await startProxyServer({
    config: {
      ...proxyDefaults,
      listenHost: "127.0.0.1",
      listenPort: 0,
      publicUrl: cfg.publicUrl,
      clusterName: "bench",
      serverVersion: "0.1.0",
      clientVersionPolicy: { minimum: "0.1.0", recommended: "0.1.0" },
      oidcIssuerUrl: cfg.publicUrl,
      // The benchmarks measure capacity: one user opens every terminal.
      limits: { ...proxyDefaults.limits, terminalsPerUser: 100_000, terminalsPerProxy: 100_000 },
    },
    tls: { certPem: cfg.serverCertPem, keyPem: cfg.serverKeyPem },
    authApi: inventory.serveAuthApi(trust.locks.guardSessions(sessions.guard(authApi))),
    // Agents with --proxy reach auth through the public port, as in a real deployment.
    authPassthrough: { address: cfg.authAddress, serverName: cfg.authServerName },
    logger,
    ready: () => true,
    resources: { list: () => [] },
    routes: [
      terminalRoutes({
        terminalAuth: inventory.serveTerminalAuth(terminalAuth),
        clock: systemClock,
        dialer: tunnels.dialer,
        locks: trust.locks,
        // As server/roles/proxy.ts: a web session reuses its terminal certificate per node.
        ...(process.env["SVC_BENCH_TERMINAL_CERT_REUSE"] === "0" ? {} : { sessions }),
        onOpened: (t, o) => {
          opens.push(t);
          if (o.certReused) reused++;
        },
      }),
    ],
  });
  tunnels.attach(proxy.router);

  const gc = (globalThis as { gc?: () => void }).gc;
  process.on("message", (msg: { cmd?: string }) => {
    if (msg?.cmd === "memory") {
      gc?.();
      gc?.();
      const m = process.memoryUsage();
      const out: ProxyMemory = {
        rss: m.rss,
        heapUsed: m.heapUsed,
        external: m.external,
        arrayBuffers: m.arrayBuffers,
      };
      process.send?.(out);
    } else if (msg?.cmd === "cpu") {
      const c = process.cpuUsage();
      const out: ProxyCpu = { cpuMicros: c.user + c.system, wallMs: performance.now() };
      process.send?.(out);
    } else if (msg?.cmd === "tunnels") {
      process.send?.({ tunnels: tunnels.registry.size });
    } else if (msg?.cmd === "opens") {
      process.send?.({ opens: opens.splice(0), reused });
      reused = 0;
    }
  });
  process.once("SIGTERM", () => {
    tunnels.close();
    void proxy.close().then(async () => {
      inventory.close();
      sessions.close();
      trust.close();
      connection.close();
      process.exit(0);
    });
  });
  process.stdout.write(`READY ${proxy.port}\n`);
}

if (import.meta.main) await main(JSON.parse(process.argv[2] ?? "{}") as ProxyProcessConfig);
