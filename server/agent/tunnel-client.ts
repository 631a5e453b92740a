// The agent's end of the reverse tunnel (docs/tunnels.md): keeps one TLS connection to the proxy's
// public port open (ALPN svc-tunnel, the agent's join certificate as client certificate, the proxy
// verified against the cluster's host CA), serves HTTP/2 on it, and hands every CONNECT stream the
// proxy opens to `onStream` (the SSH server). Lost or refused: reconnects with backoff, for ever,
// until close().

import { createServer, type Http2Server, constants as h2, type ServerHttp2Session } from "node:http2";
import { isIP } from "node:net";
import type { Duplex } from "node:stream";
import { type TLSSocket, connect as tlsConnect } from "node:tls";
import type { Logger } from "pino";
import { BadParameterError } from "../../core/errors.ts";
import type { TunnelLocation } from "../proxy/auth-client.ts";
import { isLocationRequest, readLocation } from "../proxy/peering/location.ts";
import {
  type BackoffOptions,
  backoffDelay,
  DEFAULT_BACKOFF,
  DEFAULT_HEARTBEAT,
  type HeartbeatOptions,
  keepAlive,
  TUNNEL_ALPN,
} from "../tunnel/protocol.ts";

export interface TunnelClientOptions {
  /** the proxy's public address, "host:port" */
  proxyAddress: string;
  /** TLS name expected on the proxy's certificate; default the address host */
  serverName?: string;
  /** the cluster's host CA: the only trust anchor for the proxy */
  caPems: readonly string[];
  /** the agent's X.509 client certificate and key (from the join) */
  certPem: string;
  keyPem: string;
  /**
   * The trust and client certificate for the next connection, when they change while running
   * (a renewal, credentials.ts); overrides caPems, certPem and keyPem. A live tunnel keeps its own.
   */
  credentials?: () => { caPems: readonly string[]; certPem: string; keyPem: string };
  /** a new byte stream from the proxy to this node's SSH server; `remote` is the proxy's address */
  onStream: (stream: Duplex, remote: { address: string; port: number }) => void;
  logger: Logger;
  heartbeat?: HeartbeatOptions;
  backoff?: BackoffOptions;
  /** TLS handshake budget; default 15 s */
  connectTimeoutMs?: number;
  /** the proxy said where this tunnel ends (report it in the next heartbeat) */
  onLocation?: (location: TunnelLocation) => void;
}

export interface TunnelStatus {
  connected: boolean;
  /** connections established so far (1 after the first, 2 after one reconnect, ...) */
  connects: number;
}

function splitHostPort(address: string): { host: string; port: number } {
  const m = /^\[([^\]]+)\]:(\d{1,5})$/.exec(address) ?? /^([^:]+):(\d{1,5})$/.exec(address);
  if (!m?.[1] || !(Number(m[2]) >= 1 && Number(m[2]) <= 65535))
    throw new Error(`tunnel address ${JSON.stringify(address)} must be host:port`);
  return { host: m[1], port: Number(m[2]) };
}

export class TunnelClient {
  readonly #o: TunnelClientOptions;
  readonly #target: { host: string; port: number };
  readonly #h2: Http2Server;
  #socket: TLSSocket | undefined;
  #session: ServerHttp2Session | undefined;
  #timer: NodeJS.Timeout | undefined;
  #attempt = 0;
  #stopped = false;
  #connects = 0;
  #location: TunnelLocation | undefined;
  #up = false;
  readonly #waiters = new Set<() => void>();

  constructor(o: TunnelClientOptions) {
    this.#o = o;
    this.#target = splitHostPort(o.proxyAddress);
    // Never listens: each tunnel's TLS socket is given to it as a connection.
    this.#h2 = createServer();
    this.#h2.on("session", (session: ServerHttp2Session) => this.#onSession(session));
    this.#h2.on("stream", (stream, headers) => {
      if (isLocationRequest(headers)) {
        // Where this tunnel ends, for other proxy replicas (docs/tunnels.md, several proxies).
        const session = this.#session;
        readLocation(stream).then(
          (loc) => {
            if (this.#session !== session || session === undefined) return;
            this.#location = loc;
            this.#o.onLocation?.(loc);
          },
          (err: unknown) =>
            this.#o.logger.warn(
              { err: err instanceof Error ? err.message : String(err) },
              "bad tunnel location from the proxy",
            ),
        );
        return;
      }
      if (headers[":method"] !== "CONNECT") {
        stream.respond({ ":status": 405 }, { endStream: true });
        return;
      }
      stream.respond({ ":status": 200 });
      const socket = this.#socket;
      this.#o.onStream(stream, {
        address: socket?.remoteAddress ?? "",
        port: socket?.remotePort ?? 0,
      });
    });
  }

  start(): void {
    this.#connect();
  }

  /** Where the live tunnel ends, as its proxy said; undefined while no tunnel is up. */
  location(): TunnelLocation | undefined {
    return this.status().connected ? this.#location : undefined;
  }

  status(): TunnelStatus {
    return {
      connected: this.#up && this.#session !== undefined && !this.#session.closed,
      connects: this.#connects,
    };
  }

  /** Resolves once a tunnel is up (at once when it already is). */
  async connected(): Promise<void> {
    if (this.status().connected) return;
    await new Promise<void>((resolve) => this.#waiters.add(resolve));
  }

  async close(): Promise<void> {
    this.#stopped = true;
    if (this.#timer) clearTimeout(this.#timer);
    const session = this.#session;
    this.#session = undefined;
    if (session && !session.closed) {
      await new Promise<void>((resolve) => {
        session.once("close", () => resolve());
        session.close();
        // Streams still open (SSH connections) would hold close() for ever.
        setTimeout(() => session.destroy(), 2_000).unref();
      });
    }
    this.#socket?.destroy();
  }

  #connect(): void {
    if (this.#stopped) return;
    const o = this.#o;
    const creds = o.credentials?.() ?? o;
    const socket = tlsConnect({
      host: this.#target.host,
      port: this.#target.port,
      // SNI carries names only; an IP address is checked against the certificate's IP SANs.
      ...(o.serverName || !isIP(this.#target.host) ? { servername: o.serverName ?? this.#target.host } : {}),
      ca: [...creds.caPems],
      cert: creds.certPem,
      key: creds.keyPem,
      ALPNProtocols: [TUNNEL_ALPN],
      minVersion: "TLSv1.3",
      timeout: o.connectTimeoutMs ?? 15_000,
    });
    this.#socket = socket;
    let up = false;
    socket.once("timeout", () => {
      if (!up) socket.destroy(new Error("TLS handshake timed out"));
    });
    socket.once("secureConnect", () => {
      if (socket.alpnProtocol !== TUNNEL_ALPN) {
        socket.destroy(new Error("the proxy does not speak the tunnel protocol (ALPN)"));
        return;
      }
      up = true;
      socket.setTimeout(0);
      socket.setNoDelay(true);
      this.#h2.emit("connection", socket);
    });
    socket.on("error", (err) => {
      o.logger.warn({ err: err.message, proxy: o.proxyAddress }, "tunnel connection failed");
    });
    socket.once("close", () => {
      if (this.#socket === socket) this.#socket = undefined;
      this.#session = undefined;
      this.#up = false;
      this.#location = undefined;
      this.#schedule();
    });
  }

  #onSession(session: ServerHttp2Session): void {
    const o = this.#o;
    this.#session = session;
    // The proxy speaks h2 only once it admitted us: its SETTINGS mean the tunnel is up. A refusal
    // closes the connection before that, so it neither counts nor resets the backoff.
    session.once("remoteSettings", () => {
      if (this.#session !== session) return;
      this.#up = true;
      this.#connects++;
      this.#attempt = 0;
      o.logger.info({ proxy: o.proxyAddress }, "tunnel to the proxy is up");
      for (const w of this.#waiters) w();
      this.#waiters.clear();
    });
    keepAlive(session, o.heartbeat ?? DEFAULT_HEARTBEAT, () =>
      o.logger.warn({ proxy: o.proxyAddress }, "the proxy stopped answering: reconnecting"),
    );
    session.on("error", (err) => o.logger.debug({ err: err.message }, "tunnel session error"));
    // A GOAWAY (proxy replaced this tunnel or is stopping): drop the socket so we dial again.
    session.once("goaway", (code: number) => {
      if (code !== h2.NGHTTP2_NO_ERROR) o.logger.info({ code }, "the proxy closed the tunnel");
    });
    session.once("close", () => this.#socket?.destroy());
  }

  #schedule(): void {
    if (this.#stopped || this.#timer) return;
    const wait = backoffDelay(this.#attempt++, this.#o.backoff ?? DEFAULT_BACKOFF);
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#connect();
    }, wait);
    this.#timer.unref();
  }
}

/** `svcd agent --tunnel` (runAgent's `tunnel`). */
export interface AgentTunnelOptions {
  proxyAddress?: string;
  /** TLS name on the proxy's identity certificate; default the address host */
  serverName?: string;
  heartbeat?: HeartbeatOptions;
  backoff?: BackoffOptions;
}

/** The agent's tunnel from its options and join identity; the proxy auth is reached through by default. */
export function agentTunnel(o: {
  options: AgentTunnelOptions;
  /** the proxy the agent reaches auth through, if any */
  proxyAddress?: string;
  /** the identity in force (read at every connection: a renewal swaps it) */
  identity: () => { hostCaPems: readonly string[]; tlsCertificatePem: string; tlsKeyPem: string };
  onStream: TunnelClientOptions["onStream"];
  onLocation: NonNullable<TunnelClientOptions["onLocation"]>;
  logger: Logger;
}): TunnelClient {
  const proxyAddress = o.options.proxyAddress ?? o.proxyAddress;
  if (!proxyAddress)
    throw new BadParameterError(
      "a tunnel needs the proxy's address: --proxy host:port or --tunnel host:port",
    );
  const id = o.identity();
  return new TunnelClient({
    proxyAddress,
    ...(o.options.serverName ? { serverName: o.options.serverName } : {}),
    caPems: id.hostCaPems,
    certPem: id.tlsCertificatePem,
    keyPem: id.tlsKeyPem,
    credentials: () => {
      const now = o.identity();
      return { caPems: now.hostCaPems, certPem: now.tlsCertificatePem, keyPem: now.tlsKeyPem };
    },
    onStream: o.onStream,
    onLocation: o.onLocation,
    logger: o.logger,
    ...(o.options.heartbeat ? { heartbeat: o.options.heartbeat } : {}),
    ...(o.options.backoff ? { backoff: o.options.backoff } : {}),
  });
}

/** The heartbeat's tunnel field: where the live tunnel ends, absent without one. */
export function heartbeatTunnelField(t: TunnelClient | undefined): {
  tunnel?: { proxy_id: string; peer_addr: string };
} {
  const loc = t?.location();
  return loc ? { tunnel: { proxy_id: loc.proxyId, peer_addr: loc.peerAddr } } : {};
}
