// One proxy replica's part in "any replica reaches any tunnelled node" (docs/tunnels.md, "Several
// proxies"): it serves svc-peer for the tunnels it holds, tells each agent whose tunnel comes up
// where that tunnel ends (the agent reports it in its heartbeats, auth lists it on the node), and
// gives the NodeDialer its peer hook: a node whose tunnel ends at another replica is dialled there.
import { randomBytes } from "node:crypto";
import type { ClientHttp2Session } from "node:http2";
import type { Socket } from "node:net";
import { hostname } from "node:os";
import type { Duplex } from "node:stream";
import type { Logger } from "../../logger.ts";
import type { NodeInfo, TunnelLocation } from "../auth-client.ts";
import { peerServerName } from "./identity.ts";
import { announceLocation } from "./location.ts";
import { PeerDialer } from "./peer-dialer.ts";
import { createPeerHandler, type PeerHandler } from "./peer-handler.ts";
import { PEER_ALPN } from "./protocol.ts";

/** What peering needs of the tunnel registry (server/proxy/tunnel/registry.ts). */
export interface LocalTunnels {
  has(nodeId: string): boolean;
  get(nodeId: string): { session: ClientHttp2Session } | undefined;
  open(nodeId: string, timeoutMs?: number): Promise<Duplex>;
  onChange(listener: (nodeId: string, up: boolean) => void): () => void;
}

/** The proxy identity as mounted (server/roles/proxy-identity.ts). */
export interface PeeringIdentity {
  certPem: string;
  keyPem: string;
  clientCertPem: string;
  clientKeyPem: string;
  caPems: readonly string[];
}

export interface PeeringOptions {
  tunnels: LocalTunnels;
  /** read for every new connection, so a renewed identity takes over */
  identity: () => PeeringIdentity;
  /** host:port other replicas reach this one on (peerAddressOf) */
  peerAddr: string;
  /** default: this machine's name (the Pod name in Kubernetes) and a random suffix */
  selfId?: string;
  logger: Logger;
  timeoutMs?: number;
}

/** Something that routes connections by ALPN (the public port's router). */
export interface AlpnRouter {
  handle(alpnProtocol: string, handler: (socket: Socket) => void): void;
}

export class ProxyPeering {
  readonly selfId: string;
  readonly peerAddr: string;
  readonly dialer: PeerDialer;
  readonly #handler: PeerHandler;
  readonly #o: PeeringOptions;
  readonly #stopWatching: () => void;
  #identityKey = "";

  constructor(o: PeeringOptions) {
    this.#o = o;
    this.peerAddr = o.peerAddr;
    this.selfId =
      o.selfId ??
      `${hostname()
        .replace(/[^A-Za-z0-9._-]/g, "-")
        .slice(0, 200)}-${randomBytes(3).toString("hex")}`;
    const id = o.identity();
    this.#identityKey = id.certPem;
    const timeoutMs = o.timeoutMs ?? 10_000;
    this.#handler = createPeerHandler({
      tls: { certPem: id.certPem, keyPem: id.keyPem, caPems: id.caPems },
      // Only this replica's own tunnels: a relayed stream never goes on to a third proxy.
      localDial: (nodeId) => (o.tunnels.has(nodeId) ? o.tunnels.open(nodeId, timeoutMs) : undefined),
      logger: o.logger,
    });
    this.dialer = new PeerDialer({
      selfId: this.selfId,
      logger: o.logger,
      timeoutMs,
      tls: () => {
        const now = this.#refreshIdentity();
        return {
          certPem: now.clientCertPem,
          keyPem: now.clientKeyPem,
          caPems: now.caPems,
          peerServerName: peerServerName(now.certPem),
        };
      },
    });
    this.#stopWatching = o.tunnels.onChange((nodeId, up) => {
      if (up) this.#announce(nodeId);
    });
  }

  get location(): TunnelLocation {
    return { proxyId: this.selfId, peerAddr: this.peerAddr };
  }

  /** Registers the svc-peer handler on the public port's router. */
  register(router: AlpnRouter): void {
    router.handle(PEER_ALPN, (socket) => {
      this.#refreshIdentity();
      this.#handler.handle(socket);
    });
  }

  /** NodeDialer's peer hook: a stream through the replica holding the node's tunnel, if another does. */
  readonly peerDial = async (node: NodeInfo): Promise<Duplex | undefined> => {
    if (!this.dialer.handles(node.tunnel)) return undefined;
    return this.dialer.dial(node.tunnel, node.id);
  };

  close(): void {
    this.#stopWatching();
    this.#handler.close();
    this.dialer.close();
  }

  #refreshIdentity(): PeeringIdentity {
    const id = this.#o.identity();
    if (id.certPem !== this.#identityKey) {
      this.#identityKey = id.certPem;
      this.#handler.setTls({ certPem: id.certPem, keyPem: id.keyPem, caPems: id.caPems });
    }
    return id;
  }

  #announce(nodeId: string): void {
    const session = this.#o.tunnels.get(nodeId)?.session;
    if (!session) return;
    announceLocation(session, this.location).then(
      () => this.#o.logger.debug({ nodeId, location: this.location }, "tunnel location told to the agent"),
      // An agent that does not know the request (older version) stays reachable here, only not
      // through other replicas.
      (err: unknown) =>
        this.#o.logger.info(
          { nodeId, err: err instanceof Error ? err.message : String(err) },
          "tunnel location not delivered",
        ),
    );
  }
}

/**
 * Where other replicas reach this one: proxy.peer_addr; else the Pod IP the chart passes in
 * SVC_PROXY_PEER_HOST with the listen port; else the listen address, with this machine's name for
 * an unspecified host (0.0.0.0 / ::).
 */
export function peerAddressOf(
  proxy: { listen_addr: string; peer_addr?: string | undefined },
  env: NodeJS.ProcessEnv = process.env,
): string {
  if (proxy.peer_addr) return proxy.peer_addr;
  const m = /^(?:\[([^\]]+)\]|([^:]*)):(\d{1,5})$/.exec(proxy.listen_addr);
  const listenHost = m?.[1] ?? m?.[2] ?? "";
  const port = m?.[3] ?? "3080";
  const envHost = env["SVC_PROXY_PEER_HOST"]?.trim();
  const host = envHost || (["", "0.0.0.0", "::", "[::]"].includes(listenHost) ? hostname() : listenHost);
  return hostPortOf(host, Number(port));
}

/** host + port as host:port, bracketing an IPv6 host. */
export function hostPortOf(host: string, port: number): string {
  return host.includes(":") ? `[${host}]:${port}` : `${host}:${port}`;
}
