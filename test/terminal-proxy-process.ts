// The proxy (terminal, recording and web routes) as its own process, for the terminal benchmark:
// `node --expose-gc test/terminal-proxy-process.ts '<json>'` (forked with IPC). It prints
// "READY <port>" once listening and answers {cmd:"memory"} with its memory after a full GC, so
// per-session memory is measured without the benchmark's own allocations.
import pino from "pino";
import { systemClock } from "../core/clock.ts";
import { proxyDefaults } from "../server/proxy/config.ts";
import { GrpcAuthApi } from "../server/proxy/grpc-auth-api.ts";
import { recordingRoutes } from "../server/proxy/recordings-route.ts";
import { startProxyServer } from "../server/proxy/server.ts";
import { GrpcTerminalAuthApi } from "../server/proxy/terminal-auth.ts";
import { terminalRoutes } from "../server/proxy/terminal-route.ts";
import { webRoutes } from "../web/serve.ts";

export interface ProxyProcessConfig {
  authAddress: string;
  authServerName: string;
  caPems: string[];
  clientCertPem: string;
  clientKeyPem: string;
  serverCertPem: string;
  serverKeyPem: string;
  publicUrl: string;
}

const cfg = JSON.parse(process.argv[2] ?? "{}") as ProxyProcessConfig;
const grpc = {
  address: cfg.authAddress,
  caPems: cfg.caPems,
  certPem: cfg.clientCertPem,
  keyPem: cfg.clientKeyPem,
  serverName: cfg.authServerName,
};
const authApi = new GrpcAuthApi(grpc);
const terminalAuth = new GrpcTerminalAuthApi(grpc);
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
    // The benchmark measures capacity: one user opens every terminal.
    limits: { ...proxyDefaults.limits, terminalsPerUser: 100_000, terminalsPerProxy: 100_000 },
  },
  tls: { certPem: cfg.serverCertPem, keyPem: cfg.serverKeyPem },
  authApi,
  logger: pino({ level: "warn" }, pino.destination(2)),
  ready: () => true,
  resources: { list: () => [] },
  routes: [
    terminalRoutes({ terminalAuth, clock: systemClock }),
    recordingRoutes({ terminalAuth }),
    webRoutes(),
  ],
});

const gc = (globalThis as { gc?: () => void }).gc;
process.on("message", (msg: { cmd?: string }) => {
  if (msg?.cmd !== "memory") return;
  gc?.();
  gc?.();
  const m = process.memoryUsage();
  process.send?.({ rss: m.rss, heapUsed: m.heapUsed, external: m.external, arrayBuffers: m.arrayBuffers });
});
process.once("SIGTERM", () => {
  void proxy.close().then(() => {
    authApi.close();
    terminalAuth.close();
    process.exit(0);
  });
});
process.stdout.write(`READY ${proxy.port}\n`);
