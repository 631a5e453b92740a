// The proxy's public port: every connection's ClientHello is read (not answered), then the
// connection goes whole to a registered ALPN handler, to auth (raw TCP), or to the HTTPS server.
import type { Socket } from "node:net";
import type { Logger } from "pino";
import { Counter, type Registry } from "prom-client";
import {
  CLIENT_HELLO_TIMEOUT_MS,
  ClientHelloError,
  type ClientHelloInfo,
  type HelloRefusal,
  MAX_CLIENT_HELLO_BYTES,
  readClientHello,
} from "./client-hello.ts";
import { type AuthPassthrough, passToAuth } from "./passthrough.ts";
import { type Route, routeOf } from "./route.ts";

export type { AuthPassthrough, ClientHelloInfo, Route };

/**
 * Takes a routed connection: the raw socket with its ClientHello unshifted (paused), still to be
 * handshaken by the handler (`new tls.TLSSocket(socket, { isServer: true, ... })`).
 */
export type ConnectionHandler = (socket: Socket, hello: ClientHelloInfo) => void;

export interface TlsRouterOptions {
  logger: Logger;
  /** Hands a connection to the proxy's own HTTPS server. */
  web: (socket: Socket) => void;
  /** Hands a connection for an app host to the app server; without it app hosts go to `web`. */
  apps?: ((socket: Socket) => void) | undefined;
  /** Where connections for auth go; without it nothing routes to auth. */
  authPassthrough?: AuthPassthrough | undefined;
  /** The proxy's public host (SNI equal to it is the web server's, never auth's). */
  publicHost?: string | undefined;
  /** Default CLIENT_HELLO_TIMEOUT_MS (tests shorten it). */
  helloTimeoutMs?: number | undefined;
  /** Default MAX_CLIENT_HELLO_BYTES. */
  maxHelloBytes?: number | undefined;
  /** Counters of routed and refused connections are registered here when given. */
  metrics?: Registry | undefined;
  /** Default MAX_PENDING_PER_ADDRESS. */
  maxPendingPerAddress?: number | undefined;
}

/**
 * Connections one client address may have whose hello is still unread; a newer one closes the
 * oldest. A real client sends its hello at once, so the oldest unread ones are the silent ones:
 * a client holding connections open without speaking cannot pile up sockets, and cannot keep a
 * client behind the same address (a NAT) out either, since a new connection always gets its turn.
 */
export const MAX_PENDING_PER_ADDRESS = 128;

/** What a plain-HTTP client gets: this port speaks only TLS. */
const HTTPS_REQUIRED_BODY = "This port speaks HTTPS, not HTTP.\r\n";
const HTTPS_REQUIRED =
  "HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n" +
  `Content-Length: ${Buffer.byteLength(HTTPS_REQUIRED_BODY)}\r\n\r\n${HTTPS_REQUIRED_BODY}`;
/** How long a refused plain-HTTP client may keep sending before its connection is dropped. */
const REFUSAL_LINGER_MS = 1_000;

export class TlsRouter {
  readonly #o: TlsRouterOptions;
  readonly #handlers = new Map<string, ConnectionHandler>();
  /** sockets whose hello is still being read */
  readonly #pending = new Set<Socket>();
  /** pending hellos per client address, oldest first */
  readonly #pendingBy = new Map<string, Set<Socket>>();
  /** closed for a newer connection of their address (counted once, as busy) */
  readonly #evicted = new WeakSet<Socket>();
  /** sockets handed to a handler or to auth (and auth-side sockets) */
  readonly #routed = new Set<Socket>();
  /** sockets handed to the HTTPS server */
  readonly #web = new Set<Socket>();
  readonly #routedTotal: Counter<"route"> | undefined;
  readonly #refusedTotal: Counter<"reason"> | undefined;
  #closed = false;

  constructor(o: TlsRouterOptions) {
    this.#o = o;
    if (o.metrics) {
      this.#routedTotal = new Counter({
        name: "svc_proxy_routed_connections_total",
        help: "Connections on the public port by route: web, auth, or the ALPN id of a handler",
        labelNames: ["route"],
        registers: [o.metrics],
      });
      this.#refusedTotal = new Counter({
        name: "svc_proxy_refused_connections_total",
        help: "Connections on the public port closed before routing, by reason",
        labelNames: ["reason"],
        registers: [o.metrics],
      });
    }
  }

  /** Routes connections offering `alpnProtocol` to `handler` (checked in registration order). */
  handle(alpnProtocol: string, handler: ConnectionHandler): void {
    if (alpnProtocol === "h2" || alpnProtocol === "http/1.1") {
      throw new Error(`ALPN ${alpnProtocol} belongs to the web server and auth`);
    }
    this.#handlers.set(alpnProtocol, handler);
  }

  /** True when a handler takes `alpnProtocol`. */
  has(alpnProtocol: string): boolean {
    return this.#handlers.has(alpnProtocol);
  }

  /** The SNI that routes to auth ("" without passthrough): what ping tells clients to send. */
  get authServerName(): string {
    return this.#o.authPassthrough?.serverName ?? "";
  }

  /** The `connection` listener of the public net.Server. */
  accept(socket: Socket): void {
    if (this.#closed) {
      socket.destroy();
      return;
    }
    // Errors before a stage owns the socket (resets, timeouts) only close it.
    socket.on("error", () => socket.destroy());
    const address = socket.remoteAddress ?? "";
    let mine = this.#pendingBy.get(address);
    if (mine === undefined) {
      mine = new Set();
      this.#pendingBy.set(address, mine);
    }
    const oldest = mine.values().next().value;
    if (oldest !== undefined && mine.size >= (this.#o.maxPendingPerAddress ?? MAX_PENDING_PER_ADDRESS)) {
      mine.delete(oldest);
      this.#pending.delete(oldest);
      this.#evicted.add(oldest);
      this.#refuse(oldest, "busy");
    }
    mine.add(socket);
    this.#pending.add(socket);
    const settled = (): void => {
      this.#pending.delete(socket);
      mine.delete(socket);
      if (mine.size === 0 && this.#pendingBy.get(address) === mine) this.#pendingBy.delete(address);
    };
    readClientHello(socket, { timeoutMs: this.#o.helloTimeoutMs, maxBytes: this.#o.maxHelloBytes })
      .then((hello) => {
        settled();
        if (this.#closed || socket.destroyed) {
          socket.destroy();
          return;
        }
        this.#route(socket, hello);
      })
      .catch((err: unknown) => {
        settled();
        if (this.#evicted.has(socket)) return;
        this.#refuse(socket, err instanceof ClientHelloError ? err.reason : "malformed");
      });
  }

  #route(socket: Socket, hello: ClientHelloInfo): void {
    const route = routeOf(hello, {
      handlers: [...this.#handlers.keys()],
      authServerName: this.#o.authPassthrough?.serverName,
      publicHost: this.#o.publicHost,
      apps: this.#o.apps !== undefined,
    });
    const label = route.kind === "handler" ? route.protocol : route.kind;
    this.#routedTotal?.inc({ route: label });
    if (route.kind === "web") {
      this.#track(this.#web, socket);
      this.#o.web(socket);
      return;
    }
    if (route.kind === "app" && this.#o.apps) {
      // HTTPS like the web server's: the same grace at close, then cut by destroyWeb().
      this.#track(this.#web, socket);
      this.#o.apps(socket);
      return;
    }
    this.#track(this.#routed, socket);
    if (route.kind === "auth" && this.#o.authPassthrough) {
      // The client socket is tracked: its close (or destroy at close()) ends the upstream too.
      passToAuth(socket, this.#o.authPassthrough, { logger: this.#o.logger });
      return;
    }
    const handler = route.kind === "handler" ? this.#handlers.get(route.protocol) : undefined;
    try {
      if (!handler) throw new Error(`no handler for route ${label}`);
      handler(socket, hello);
    } catch (err) {
      this.#o.logger.warn(
        { err: err instanceof Error ? err.message : String(err), route: label },
        "route failed",
      );
      socket.destroy();
    }
  }

  #track(set: Set<Socket>, socket: Socket): void {
    set.add(socket);
    socket.once("close", () => set.delete(socket));
  }

  #refuse(socket: Socket, reason: HelloRefusal): void {
    this.#refusedTotal?.inc({ reason });
    // The peer address is the only detail logged: the bytes may be anything, secrets included.
    this.#o.logger.debug({ reason, peer: socket.remoteAddress }, "connection refused before routing");
    if (reason === "plain_http" && socket.writable) {
      socket.resume(); // drain what it still sends, so the close does not reset the answer away
      socket.end(HTTPS_REQUIRED);
      setTimeout(() => socket.destroy(), REFUSAL_LINGER_MS).unref();
      this.#track(this.#routed, socket);
      return;
    }
    socket.destroy();
  }

  /** Stops routing: pending and routed (non-web) connections are destroyed now. */
  close(): void {
    this.#closed = true;
    for (const s of this.#pending) s.destroy();
    for (const s of this.#routed) s.destroy();
    this.#pending.clear();
    this.#pendingBy.clear();
    this.#routed.clear();
  }

  /** Destroys the connections the HTTPS server still holds (after its grace). */
  destroyWeb(): void {
    for (const s of this.#web) s.destroy();
    this.#web.clear();
  }
}

export { CLIENT_HELLO_TIMEOUT_MS, MAX_CLIENT_HELLO_BYTES };
