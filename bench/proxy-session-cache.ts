// The proxy of bench/proxy.bench.ts's cached session row, built as svcd proxy builds it for that
// route: the session cache (WatchSessions) in front of the gRPC AuthApi. Same HTTPS certificate
// and config as the fixture's proxy, which asks auth on every request.
import { pino } from "pino";
import { Registry } from "prom-client";
import { systemClock } from "../core/clock.ts";
import { GrpcAuthApi } from "../server/proxy/grpc-auth-api.ts";
import { startProxyServer } from "../server/proxy/server.ts";
import { SessionCache } from "../server/proxy/session-cache.ts";
import { type BenchProxyOptions, connectToAuth, waitUntil } from "./proxy-to-auth.ts";

export interface SessionCacheProxy {
  url: string;
  cache: SessionCache;
  /** cache hits and misses so far (svc_proxy_session_cache_*_total) */
  served(): Promise<{ hits: number; misses: number }>;
  close(): Promise<void>;
}

export async function startSessionCacheProxy(o: BenchProxyOptions): Promise<SessionCacheProxy> {
  const logger = pino({ level: "silent" });
  const { grpc, client, connection } = connectToAuth(o);
  const registry = new Registry();
  const cache = new SessionCache({
    connection: () => connection,
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
  await waitUntil(() => cache.live, "the session stream did not go live");
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
