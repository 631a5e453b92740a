// The proxy of bench/proxy.bench.ts's nodes row, built as svcd proxy builds it for that route:
// the inventory copy (WatchInventory) and the session cache (WatchSessions) in front of the gRPC
// AuthApi, and the locks of a trust stream (the copy decides only while it knows them). Same
// HTTPS certificate and config as the fixture's proxy.
import { pino } from "pino";
import { systemClock } from "../core/clock.ts";
import { GrpcAuthApi } from "../server/proxy/grpc-auth-api.ts";
import { type InventoryCache, startInventoryCache } from "../server/proxy/inventory-cache.ts";
import { startProxyServer } from "../server/proxy/server.ts";
import { SessionCache } from "../server/proxy/session-cache.ts";
import { TrustWatcher } from "../server/trust/watcher.ts";
import { type BenchProxyOptions, connectToAuth, waitUntil } from "./proxy-to-auth.ts";

export interface InventoryProxy {
  url: string;
  cache: InventoryCache;
  close(): Promise<void>;
}

export async function startInventoryProxy(o: BenchProxyOptions): Promise<InventoryProxy> {
  const logger = pino({ level: "silent" });
  const { grpc, client, connection } = connectToAuth(o);
  const trust = new TrustWatcher({
    client: () => client,
    metadata: connection.metadata,
    clock: systemClock,
    logger,
  });
  trust.start();
  const cache = startInventoryCache({ connection: () => connection, trust, clock: systemClock, logger });
  const sessions = new SessionCache({ connection: () => connection, clock: systemClock, logger });
  sessions.start();
  const api = new GrpcAuthApi(grpc);
  const proxy = await startProxyServer({
    config: o.config,
    tls: o.proxyServer,
    authApi: cache.serveAuthApi(sessions.guard(api)),
    logger,
    ready: () => true,
    resources: o.resources,
  });
  await waitUntil(
    () => cache.fresh() && trust.connected() && sessions.live,
    "the inventory copy did not sync",
  );
  return {
    url: proxy.url,
    cache,
    close: async () => {
      await proxy.close();
      cache.close();
      await sessions.close();
      await trust.close();
      api.close();
      client.close();
    },
  };
}
