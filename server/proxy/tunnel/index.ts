// A proxy's reverse-tunnel parts in one place, for the roles that run a proxy (svcd start, svcd
// proxy) and the tests: the registry, the NodeDialer every node connection goes through, and the
// TLS end of the tunnel, registered on the public port's router under ALPN svc-tunnel.
import type { Socket } from "node:net";
import type { Logger } from "pino";
import { type HeartbeatOptions, TUNNEL_ALPN } from "../../tunnel/protocol.ts";
import { NodeDialer, type PeerDial } from "./dialer.ts";
import { TunnelRegistry } from "./registry.ts";
import { TunnelServer, type TunnelServerOptions } from "./server.ts";

export { NodeDialer, type PeerDial } from "./dialer.ts";
export { TunnelRegistry } from "./registry.ts";
export { TunnelServer } from "./server.ts";

export interface ProxyTunnels {
  registry: TunnelRegistry;
  dialer: NodeDialer;
  server: TunnelServer;
  /** Routes svc-tunnel connections of the public port here. */
  attach(router: { handle(alpn: string, handler: (socket: Socket) => void): void }): void;
  /** Closes every tunnel and every connection still being admitted. */
  close(): void;
}

export function createProxyTunnels(o: {
  tls: TunnelServerOptions["tls"];
  isRegisteredNode?: TunnelServerOptions["isRegisteredNode"];
  logger: Logger;
  heartbeat?: HeartbeatOptions;
  /** a node whose tunnel ends at another replica (proxy peering) */
  peer?: () => PeerDial | undefined;
  dialTimeoutMs?: number;
}): ProxyTunnels {
  const registry = new TunnelRegistry();
  const server = new TunnelServer({
    registry,
    tls: o.tls,
    ...(o.isRegisteredNode ? { isRegisteredNode: o.isRegisteredNode } : {}),
    logger: o.logger,
    ...(o.heartbeat ? { heartbeat: o.heartbeat } : {}),
  });
  const peer = o.peer;
  const dialer = new NodeDialer({
    registry,
    ...(peer ? { peer: async (node) => (await peer()?.(node)) ?? undefined } : {}),
    ...(o.dialTimeoutMs ? { timeoutMs: o.dialTimeoutMs } : {}),
  });
  return {
    registry,
    dialer,
    server,
    attach: (router) => router.handle(TUNNEL_ALPN, (socket) => server.handle(socket)),
    close: () => {
      server.close();
      registry.closeAll();
    },
  };
}
