// What the bench's cached proxies (proxy-session-cache.ts, proxy-inventory.ts) share: the auth
// child's address and certificates, the proxy's one channel to auth with its "proxy:<name>"
// caller, and waiting until the pushed streams are in use.
import type { ResourceSource } from "../core/sources/source.ts";
import { type AuthServiceClient, agentMetadata, createAuthClient } from "../server/auth/client.ts";
import type { ProxyConfig } from "../server/proxy/config.ts";
import { proxyCallerId } from "../server/proxy/tunnel/registration.ts";

/** The auth child's line (bench/proxy-auth-child.ts) and the fixture's proxy config. */
export interface BenchProxyOptions {
  authAddress: string;
  hostCaPem: string;
  proxyClient: { certPem: string; keyPem: string };
  proxyServer: { certPem: string; keyPem: string };
  config: ProxyConfig;
  resources: Pick<ResourceSource, "list">;
}

export function connectToAuth(o: BenchProxyOptions) {
  const grpc = { address: o.authAddress, caPems: [o.hostCaPem], ...o.proxyClient };
  const client: AuthServiceClient = createAuthClient(grpc);
  const callerId = proxyCallerId(o.proxyClient.certPem);
  const connection = { client, metadata: () => agentMetadata(callerId) };
  return { grpc, client, connection };
}

/** Polls until `ready` (30 s at most): the streams the bench measures must be in use. */
export async function waitUntil(ready: () => boolean, failure: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!ready()) {
    if (Date.now() > deadline) throw new Error(failure);
    await new Promise((r) => setTimeout(r, 50));
  }
}
