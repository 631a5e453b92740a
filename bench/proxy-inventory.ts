// The proxy of bench/proxy.bench.ts's nodes row, built as svcd proxy builds it for that route:
// the inventory copy (WatchInventory) and the session cache (WatchSessions) in front of the gRPC
// AuthApi, and the locks of a trust stream (the copy decides only while it knows them). Same
// HTTPS certificate and config as the fixture's proxy.
import { pino } from "pino";
import { systemClock } from "../core/clock.ts";
import type { ResourceSource } from "../core/sources/source.ts";
import { agentMetadata, createAuthClient } from "../server/auth/client.ts";
import type { ProxyConfig } from "../server/proxy/config.ts";
import { GrpcAuthApi } from "../server/proxy/grpc-auth-api.ts";
import { type InventoryCache, startInventoryCache } from "../server/proxy/inventory-cache.ts";
import { startProxyServer } from "../server/proxy/server.ts";
import { SessionCache } from "../server/proxy/session-cache.ts";
import { proxyCallerId } from "../server/proxy/tunnel/registration.ts";
import { TrustWatcher } from "../server/trust/watcher.ts";

export interface InventoryProxy {
  url: string;
  cache: InventoryCache;
  close(): Promise<void>;
}

export async function startInventoryProxy(o: {
  authAddress: string;
  hostCaPem: string;
  proxyClient: { certPem: string; keyPem: string };
  proxyServer: { certPem: string; keyPem: string };
  config: ProxyConfig;
  resources: Pick<ResourceSource, "list">;
}): Promise<InventoryProxy> {
  const logger = pino({ level: "silent" });
  const grpc = { address: o.authAddress, caPems: [o.hostCaPem], ...o.proxyClient };
  const client = createAuthClient(grpc);
  const connection = { client, metadata: () => agentMetadata(proxyCallerId(o.proxyClient.certPem)) };
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
  const deadline = Date.now() + 30_000;
  while (!(cache.fresh() && trust.connected() && sessions.live)) {
    if (Date.now() > deadline) throw new Error("the inventory copy did not sync");
    await new Promise((r) => setTimeout(r, 50));
  }
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
