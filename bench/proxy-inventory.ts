// The proxy of bench/proxy.bench.ts's nodes and roles rows, built as svcd proxy builds it for
// those routes: the inventory copy (WatchInventory), the lock guard of a trust stream (the copy
// decides only while it knows the locks) and the session cache (WatchSessions) in front of a
// forwarding handle on the gRPC AuthApi (the handle svcd keeps across identity reloads). Same
// HTTPS certificate and config as the fixture's proxy.
import { pino } from "pino";
import { Registry } from "prom-client";
import { systemClock } from "../core/clock.ts";
import { forwarding } from "../server/proxy/api-layers.ts";
import { GrpcAuthApi } from "../server/proxy/grpc-auth-api.ts";
import { type InventoryCache, startInventoryCache } from "../server/proxy/inventory-cache.ts";
import { ProxyLocks } from "../server/proxy/locks.ts";
import { startProxyServer } from "../server/proxy/server.ts";
import { SessionCache } from "../server/proxy/session-cache.ts";
import { TrustWatcher } from "../server/trust/watcher.ts";
import { type BenchProxyOptions, connectToAuth, waitUntil } from "./proxy-to-auth.ts";

export interface InventoryProxy {
  url: string;
  cache: InventoryCache;
  /** session cache hits and misses so far (svc_proxy_session_cache_*_total) */
  sessionsServed(): Promise<{ hits: number; misses: number }>;
  close(): Promise<void>;
}

export async function startInventoryProxy(o: BenchProxyOptions): Promise<InventoryProxy> {
  const logger = pino({ level: "silent" });
  const { grpc, client, connection } = connectToAuth(o);
  // What startProxyTrust builds, on the bench's bare connection.
  const trust = new TrustWatcher({
    client: () => client,
    metadata: connection.metadata,
    clock: systemClock,
    logger,
  });
  const locks = new ProxyLocks({ watcher: trust, clock: systemClock, logger });
  trust.start();
  const cache = startInventoryCache({ connection: () => connection, trust, clock: systemClock, logger });
  const registry = new Registry();
  const sessions = new SessionCache({
    connection: () => connection,
    clock: systemClock,
    logger,
    metrics: registry,
  });
  sessions.start();
  const api = new GrpcAuthApi(grpc);
  const proxy = await startProxyServer({
    config: o.config,
    tls: o.proxyServer,
    authApi: cache.serveAuthApi(locks.guardSessions(sessions.guard(forwarding(() => api)))),
    logger,
    ready: () => true,
    resources: o.resources,
  });
  await waitUntil(
    () => cache.fresh() && trust.connected() && sessions.live,
    "the inventory copy did not sync",
  );
  const total = async (name: string) =>
    ((await registry.getSingleMetric(name)?.get())?.values ?? []).reduce((n, v) => n + v.value, 0);
  return {
    url: proxy.url,
    cache,
    sessionsServed: async () => ({
      hits: await total("svc_proxy_session_cache_hits_total"),
      misses: await total("svc_proxy_session_cache_misses_total"),
    }),
    close: async () => {
      await proxy.close();
      cache.close();
      await sessions.close();
      locks.close();
      await trust.close();
      api.close();
      client.close();
    },
  };
}
