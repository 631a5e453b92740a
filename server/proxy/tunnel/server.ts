// The proxy's end of the reverse tunnel (docs/tunnels.md). The TLS router hands over connections
// that offered ALPN svc-tunnel with the ClientHello still unread; we terminate TLS here with the
// proxy's identity certificate, demand a client certificate from the cluster's host CA naming an
// agent (URI svc://agent/<id>), ask whether that node is still registered, then run HTTP/2 as the
// client over the connection and register it. Anything refused is closed with a log line and no
// detail for the peer.
import { type ClientHttp2Session, connect as h2Connect } from "node:http2";
import type { Socket } from "node:net";
import { createServer as createTlsServer, type TLSSocket, type Server as TlsServer } from "node:tls";
import type { Logger } from "pino";
import { DEFAULT_HEARTBEAT, type HeartbeatOptions, keepAlive, TUNNEL_ALPN } from "../../tunnel/protocol.ts";
import type { TunnelRegistry } from "./registry.ts";

export interface TunnelServerOptions {
  registry: TunnelRegistry;
  /** the proxy's identity (issued by the host CA) and the host CA: read per connection (renewals) */
  tls: () => { certPem: string; keyPem: string; caPems: readonly string[] };
  /**
   * Whether this agent id is a registered node now (a removed node's certificate stays valid
   * until it expires). Without it every agent certificate from the host CA is admitted; dialing
   * still only ever targets node ids auth resolved.
   */
  isRegisteredNode?: (agentId: string) => Promise<boolean>;
  logger: Logger;
  heartbeat?: HeartbeatOptions;
  /** TLS handshake + admission budget; default 15 s */
  handshakeTimeoutMs?: number;
}

const AGENT_URI = /(?:^|,\s*)URI:svc:\/\/agent\/([^,\s]+)/;

/** The agent id in a certificate's subjectAltName string, if it names an agent. */
export function agentIdOf(subjectAltName: string | undefined): string | undefined {
  const m = AGENT_URI.exec(subjectAltName ?? "");
  if (!m?.[1]) return undefined;
  try {
    return decodeURIComponent(m[1]);
  } catch {
    return undefined;
  }
}

type TunnelTls = ReturnType<TunnelServerOptions["tls"]>;

const contextKey = (t: TunnelTls): string => `${t.certPem}\n${t.keyPem}\n${t.caPems.join("\n")}`;
const contextOptions = (t: TunnelTls) => ({
  cert: t.certPem,
  key: t.keyPem,
  ca: [...t.caPems],
  minVersion: "TLSv1.3" as const,
});

export class TunnelServer {
  readonly #o: TunnelServerOptions;
  // A TLS server that never listens: the router hands it connections. Its secureConnection is
  // where node's TLS checks the client certificate (a bare TLSSocket would not).
  readonly #tls: TlsServer;
  #contextKey: string;
  readonly #pending = new Set<Socket>();

  constructor(o: TunnelServerOptions) {
    this.#o = o;
    const t = o.tls();
    this.#contextKey = contextKey(t);
    this.#tls = createTlsServer({
      ...contextOptions(t),
      requestCert: true,
      rejectUnauthorized: true,
      ALPNProtocols: [TUNNEL_ALPN],
      handshakeTimeout: o.handshakeTimeoutMs ?? 15_000,
    });
    this.#tls.on("secureConnection", (tls: TLSSocket) => this.#onSecure(tls));
    // A tls.Server leaves a socket whose handshake failed or timed out open: closing it is ours
    // (else a client that sends its hello and then nothing holds the connection forever).
    this.#tls.on("tlsClientError", (err, tls) => {
      o.logger.info(
        { remoteAddress: tls.remoteAddress, err: err.message },
        "tunnel refused: TLS handshake failed",
      );
      tls.destroy();
    });
  }

  /** Takes a raw connection whose ClientHello offered svc-tunnel (nothing consumed yet). */
  handle(raw: Socket): void {
    const t = this.#o.tls();
    const key = contextKey(t);
    if (key !== this.#contextKey) {
      // The proxy identity was renewed: new handshakes use it.
      this.#tls.setSecureContext(contextOptions(t));
      this.#contextKey = key;
    }
    raw.setNoDelay(true);
    this.#pending.add(raw);
    raw.once("close", () => this.#pending.delete(raw));
    this.#tls.emit("connection", raw);
  }

  #onSecure(tls: TLSSocket): void {
    const log = this.#o.logger;
    const remoteAddress = tls.remoteAddress ?? "";
    tls.on("error", (err) => log.debug({ remoteAddress, err: err.message }, "tunnel connection error"));
    void this.#admit(tls, remoteAddress).then(
      (nodeId) => {
        if (nodeId !== undefined) this.#open(tls, nodeId, remoteAddress);
      },
      (err: unknown) => {
        log.warn({ remoteAddress, err: err instanceof Error ? err.message : String(err) }, "tunnel refused");
        tls.destroy();
      },
    );
  }

  /** The registered node this connection speaks for, or undefined (connection closed). */
  async #admit(tls: TLSSocket, remoteAddress: string): Promise<string | undefined> {
    const log = this.#o.logger;
    const refuse = (reason: string, extra: Record<string, unknown> = {}): undefined => {
      log.warn({ remoteAddress, reason, ...extra }, "tunnel refused");
      tls.destroy();
      return undefined;
    };
    // rejectUnauthorized already ended handshakes without a valid host-CA certificate; these are
    // the belt and braces for what TLS alone does not say.
    if (!tls.authorized) return refuse("client certificate not trusted");
    if (tls.alpnProtocol !== TUNNEL_ALPN) return refuse("ALPN svc-tunnel not negotiated");
    const agentId = agentIdOf(tls.getPeerX509Certificate()?.subjectAltName);
    if (agentId === undefined) return refuse("the client certificate names no agent");
    if (this.#o.isRegisteredNode && !(await this.#o.isRegisteredNode(agentId)))
      return refuse("not a registered node", { agentId });
    if (tls.destroyed) return undefined;
    return agentId;
  }

  #open(tls: TLSSocket, nodeId: string, remoteAddress: string): void {
    const log = this.#o.logger;
    const session: ClientHttp2Session = h2Connect(`http://${nodeId}.tunnel`, {
      createConnection: () => tls,
      // Only the proxy opens streams on a tunnel: nothing may be pushed at it.
      settings: { enablePush: false },
    });
    session.on("error", (err) => log.debug({ nodeId, err: err.message }, "tunnel session error"));
    session.once("close", () => {
      tls.destroy();
      log.info({ nodeId, remoteAddress }, "tunnel closed");
    });
    tls.once("close", () => session.destroy());
    keepAlive(session, this.#o.heartbeat ?? DEFAULT_HEARTBEAT, () =>
      log.warn({ nodeId, remoteAddress }, "tunnel dropped: the agent stopped answering heartbeats"),
    );
    this.#o.registry.add({ nodeId, session, remoteAddress, since: new Date() });
    log.info({ nodeId, remoteAddress }, "tunnel open");
  }

  /** Ends connections not yet admitted (the registry closes established tunnels). */
  close(): void {
    for (const s of this.#pending) s.destroy();
    this.#pending.clear();
  }
}
