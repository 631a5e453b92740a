// The proxy with reverse tunnels, as its own process, for the tunnel benchmark:
// `node --expose-gc bench/tunnel-proxy-process.ts '<json>'` (forked with IPC). The public port's
// router hands ALPN svc-tunnel connections to the tunnel server, and the terminal route reaches
// nodes through the NodeDialer (tunnel first, then the node's address), as in `svcd start`.
// Prints "READY <port>"; answers {cmd:"memory"} (after a full GC), {cmd:"cpu"} (process.cpuUsage
// since start, µs, and the wall clock) and {cmd:"tunnels"} (how many are registered).
import pino from "pino";
import { systemClock } from "../core/clock.ts";
import { proxyDefaults } from "../server/proxy/config.ts";
import { GrpcAuthApi } from "../server/proxy/grpc-auth-api.ts";
import { startProxyServer } from "../server/proxy/server.ts";
import { GrpcTerminalAuthApi } from "../server/proxy/terminal-auth.ts";
import { terminalRoutes } from "../server/proxy/terminal-route.ts";
import { createProxyTunnels } from "../server/proxy/tunnel/index.ts";

export interface TunnelProxyProcessConfig {
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

const cfg = JSON.parse(process.argv[2] ?? "{}") as TunnelProxyProcessConfig;
const logger = pino({ level: "warn" }, pino.destination(2));
const grpc = {
  address: cfg.authAddress,
  caPems: cfg.caPems,
  certPem: cfg.clientCertPem,
  keyPem: cfg.clientKeyPem,
  serverName: cfg.authServerName,
};
const authApi = new GrpcAuthApi(grpc);
const terminalAuth = new GrpcTerminalAuthApi(grpc);
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
    limits: { ...proxyDefaults.limits, terminalsPerUser: 100_000, terminalsPerProxy: 100_000 },
  },
  tls: { certPem: cfg.serverCertPem, keyPem: cfg.serverKeyPem },
  authApi,
  // Agents with --proxy reach auth through the public port, as in a real deployment.
  authPassthrough: { address: cfg.authAddress, serverName: cfg.authServerName },
  logger,
  ready: () => true,
  resources: { list: () => [] },
  routes: [terminalRoutes({ terminalAuth, clock: systemClock, dialer: tunnels.dialer })],
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
  }
});
process.once("SIGTERM", () => {
  tunnels.close();
  void proxy.close().then(() => {
    authApi.close();
    terminalAuth.close();
    process.exit(0);
  });
});
process.stdout.write(`READY ${proxy.port}\n`);
