// The proxy of bench/proxy.bench.ts's cached session row, built as svcd proxy builds it for that
// route: the session cache (WatchSessions) in front of the gRPC AuthApi. Same HTTPS certificate
// and config as the fixture's proxy, which asks auth on every request.
import { pino } from "pino";
import { Registry } from "prom-client";
import { systemClock } from "../core/clock.ts";
import type { ResourceSource } from "../core/sources/source.ts";
import { agentMetadata, createAuthClient } from "../server/auth/client.ts";
import type { ProxyConfig } from "../server/proxy/config.ts";
import { GrpcAuthApi } from "../server/proxy/grpc-auth-api.ts";
import { startProxyServer } from "../server/proxy/server.ts";
import { SessionCache } from "../server/proxy/session-cache.ts";
import { proxyCallerId } from "../server/proxy/tunnel/registration.ts";

export interface SessionCacheProxy {
  url: string;
  cache: SessionCache;
  /** cache hits and misses so far (svc_proxy_session_cache_*_total) */
  served(): Promise<{ hits: number; misses: number }>;
  close(): Promise<void>;
}

export async function startSessionCacheProxy(o: {
  authAddress: string;
  hostCaPem: string;
  proxyClient: { certPem: string; keyPem: string };
  proxyServer: { certPem: string; keyPem: string };
  config: ProxyConfig;
  resources: Pick<ResourceSource, "list">;
}): Promise<SessionCacheProxy> {
  const logger = pino({ level: "silent" });
  const grpc = { address: o.authAddress, caPems: [o.hostCaPem], ...o.proxyClient };
  const client = createAuthClient(grpc);
  const callerId = proxyCallerId(o.proxyClient.certPem);
  const registry = new Registry();
  const cache = new SessionCache({
    connection: () => ({ client, metadata: () => agentMetadata(callerId) }),
    clock: systemClock,
    logger,
    metrics: registry,
  });
  cache.start();
  const api = new GrpcAuthApi(grpc);
  const proxy = await startProxyServer({
    config: o.config,
    tls: o.proxyServer,
    authApi: cache.guard(api),
    logger,
    ready: () => true,
    resources: o.resources,
  });
  const deadline = Date.now() + 30_000;
  while (!cache.live) {
    if (Date.now() > deadline) throw new Error("the session stream did not go live");
    await new Promise((r) => setTimeout(r, 50));
  }
  const total = async (name: string) =>
    ((await registry.getSingleMetric(name)?.get())?.values ?? []).reduce((n, v) => n + v.value, 0);
  return {
    url: proxy.url,
    cache,
    served: async () => ({
      hits: await total("svc_proxy_session_cache_hits_total"),
      misses: await total("svc_proxy_session_cache_misses_total"),
    }),
    close: async () => {
      await proxy.close();
      await cache.close();
      api.close();
      client.close();
    },
  };
}
