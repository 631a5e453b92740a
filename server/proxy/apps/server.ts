// The app hosts' HTTPS server (docs/apps.md): connections whose SNI names an app host come here
// from the public port's router. Every request is checked in memory first (Host = SNI, the app
// session cookie, the parent web session not revoked, the user not locked), then forwarded; the
// proxy's own paths under /x-svc/ (login and logout) never reach the app.
import type { IncomingMessage, ServerResponse } from "node:http";
import { createServer, type Server } from "node:https";
import type { Socket } from "node:net";
import type { Duplex } from "node:stream";
import type { TLSSocket } from "node:tls";
import type { Logger } from "pino";
import { Counter, Gauge, type Registry } from "prom-client";
import type { Clock } from "../../../core/clock.ts";
import { NotFoundError, UnavailableError } from "../../../core/errors.ts";
import { isAppHostOf } from "../../../core/resources/app.ts";
import type { ProxyTls } from "../config.ts";
import { clientErrorResponse } from "../http-errors.ts";
import { type Answer, answerOf, hostWithoutPort, json, normalizeTarget, writeRaw } from "./answers.ts";
import type { AppGrant } from "./auth-api.ts";
import {
  APP_SESSION_COOKIE,
  APP_STATE_COOKIE,
  clearSessionCookie,
  clearStateCookie,
  cookieValue,
  newState,
  safePath,
  sameState,
  sessionCookie,
  stateCookie,
  TOKEN,
} from "./cookies.ts";
import { AppForwarder, type ForwardContext } from "./forwarder.ts";
import type { AppGrants } from "./grants.ts";

export interface AppServerOptions {
  /** The proxy's public URL (https://host[:port]): app hosts are one label under its host. */
  publicUrl: string;
  tls: ProxyTls;
  grants: AppGrants;
  /** Throws AccessDeniedError (with the lock's message) when a lock covers the user. */
  checkLock: (user: { username: string; roles: string[] }) => void;
  /**
   * Registers an open WebSocket of this user: `close` is called when a lock comes to cover them
   * (ProxyLocks.track). Returns the release for when it ends.
   */
  trackOpen?: (user: { username: string; roles: string[] }, close: () => void) => () => void;
  /** Whether the web session with this SHA-256 hex was revoked (logout, revocation). */
  webSessionRevoked: (hash: string) => boolean;
  clock: Clock;
  logger: Logger;
  metrics?: Registry | undefined;
}

/** How long a refused connection may linger for its answer to leave before it is destroyed. */
const CLIENT_ERROR_LINGER_MS = 1_000;

/** Answers that carry a session or a redirect are never cached and never leak the URL onward. */
const PRIVATE = { "cache-control": "no-store", "referrer-policy": "no-referrer" };

export class AppServer {
  readonly #o: AppServerOptions;
  readonly #server: Server;
  readonly #forwarder = new AppForwarder();
  readonly #publicHost: string;
  readonly #port: string;
  readonly #mainOrigin: string;
  readonly #requests: Counter<"app" | "code"> | undefined;
  /** Open WebSockets and the session each was opened under (the id stays in memory only). */
  readonly #open = new Map<Duplex, { grant: AppGrant; sessionId: string; host: string }>();

  constructor(o: AppServerOptions) {
    this.#o = o;
    const url = new URL(o.publicUrl);
    this.#publicHost = url.hostname.toLowerCase();
    this.#port = url.port;
    this.#mainOrigin = url.origin;
    this.#server = createServer(
      {
        cert: o.tls.certPem,
        key: o.tls.keyPem,
        minVersion: "TLSv1.2",
        handshakeTimeout: 10_000,
        // Uploads to apps may stream for longer than Node's default 300 s for a whole request; the
        // head must still arrive within headersTimeout (60 s), and requests the proxy answers
        // itself close their connection instead of waiting for a body (#write).
        requestTimeout: 0,
        ...(o.tls.sniCallback ? { SNICallback: o.tls.sniCallback } : {}),
      },
      (req, res) => {
        this.#request(req, res).catch((err: unknown) => this.#fail(res, err));
      },
    );
    this.#server.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      this.#upgrade(req, socket, head).catch((err: unknown) => this.#refuseUpgrade(socket, err));
    });
    // Node's parser refused the request (an ambiguous length such as Content-Length with
    // Transfer-Encoding, bad framing, headers over 16 KiB): nothing was forwarded. The client gets
    // the proxy's answer for it (as on the main host) and the connection ends, so no byte after it
    // is read as another request.
    this.#server.on("clientError", (err: NodeJS.ErrnoException, socket: Duplex) => {
      if (err.code === "ECONNRESET" || socket.destroyed || !socket.writable) {
        socket.destroy();
        return;
      }
      socket.end(clientErrorResponse(err.code));
      setTimeout(() => socket.destroy(), CLIENT_ERROR_LINGER_MS).unref();
    });
    // Never listens itself (the router hands connections over): start its timeouts as listen would.
    this.#server.emit("listening");
    if (o.metrics) {
      this.#requests = new Counter({
        name: "svc_proxy_app_requests_total",
        help: 'Requests on app hosts by app and status (app "-" before a session names one)',
        labelNames: ["app", "code"],
        registers: [o.metrics],
      });
      const grants = o.grants;
      new Gauge({
        name: "svc_proxy_app_session_cache_entries",
        help: "App sessions held in the proxy's app-session cache",
        registers: [o.metrics],
        collect() {
          this.set(grants.size);
        },
      });
    }
  }

  /** Takes a connection routed here (its ClientHello unshifted, TLS still to be handshaken). */
  handle(socket: Socket): void {
    this.#server.emit("connection", socket);
  }

  /** New connections get this certificate (a renewal); open ones keep theirs. */
  setTls(certPem: string, keyPem: string): void {
    this.#server.setSecureContext({ cert: certPem, key: keyPem, minVersion: "TLSv1.2" });
  }

  /** Closes the open WebSockets whose grant `which` selects (their web session was revoked). */
  closeOpen(which: (g: AppGrant) => boolean): void {
    for (const [socket, o] of this.#open) if (which(o.grant)) socket.destroy();
  }

  /**
   * Asks again for the session of every open WebSocket `which` selects (after the grants were
   * marked for a re-check) and closes those whose session is gone or refused.
   */
  recheckOpen(which: (g: AppGrant) => boolean): void {
    for (const [socket, o] of this.#open) {
      if (!which(o.grant)) continue;
      this.#o.grants.lookup(o.sessionId, o.host).then(
        (g) => {
          if (g === undefined) socket.destroy();
        },
        (err: unknown) => {
          // Refused (a lock, access denied); an outage keeps it, as requests are kept.
          if (!(err instanceof UnavailableError)) socket.destroy();
        },
      );
    }
  }

  close(): void {
    this.#server.closeAllConnections();
    this.#server.close();
    this.#forwarder.close();
  }

  // ---- requests ------------------------------------------------------------------------------

  /** The app host of a request, or an answer refusing it (421: Host is not the TLS name). */
  #hostOf(req: IncomingMessage): string | Answer {
    const sni = ((req.socket as TLSSocket).servername || "").toLowerCase();
    const host = hostWithoutPort(req.headers.host ?? "");
    if (sni === "" || host !== sni || !isAppHostOf(sni, this.#publicHost)) {
      return json(
        421,
        "bad_parameter",
        "the Host header does not name the app this connection was opened for",
      );
    }
    return sni;
  }

  #origin(host: string): string {
    return `https://${host}${this.#port ? `:${this.#port}` : ""}`;
  }

  async #request(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const host = this.#hostOf(req);
    if (typeof host !== "string") return this.#send(res, host, "-");
    const path = normalizeTarget(req);
    if (path === undefined)
      return this.#send(res, json(400, "bad_parameter", "the request target must be a path"), "-");
    if (path === "/x-svc" || path.startsWith("/x-svc/"))
      return this.#send(res, await this.#own(req, host, path), "-");
    const grant = await this.#session(req, host);
    if (grant === undefined) return this.#send(res, this.#noSession(req, host), "-");
    res.on("finish", () => this.#requests?.inc({ app: grant.appName, code: String(res.statusCode) }));
    this.#forwarder.web(req, res, this.#context(grant, host), (err, target) => {
      this.#o.logger.debug({ app: grant.appName, err: err.message }, "app upstream failed");
      if (target === res && !res.headersSent) {
        this.#write(res, json(502, "bad_gateway", `app ${grant.appName} did not answer`));
      } else {
        target.destroy();
      }
    });
  }

  async #upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    socket.on("error", () => socket.destroy());
    const host = this.#hostOf(req);
    if (typeof host !== "string") return writeRaw(socket, host);
    const path = normalizeTarget(req);
    if (path === undefined)
      return writeRaw(socket, json(400, "bad_parameter", "the request target must be a path"));
    if (path === "/x-svc" || path.startsWith("/x-svc/"))
      return writeRaw(socket, json(404, "not_found", "no such path on the app proxy"));
    // Browsers send the app's cookie on a WebSocket from any page of the same site, and every
    // app host is the same site: without this, another app's page could open this app's socket
    // as the user and read it (WebSockets have no CORS). Clients that are not browsers send no Origin.
    const origin = req.headers.origin;
    if (origin !== undefined && origin.toLowerCase() !== this.#origin(host))
      return writeRaw(socket, json(403, "access_denied", "WebSocket opened from another origin"));
    const grant = await this.#session(req, host);
    if (grant === undefined) return writeRaw(socket, json(401, "not_authenticated", "no app session"));
    this.#requests?.inc({ app: grant.appName, code: "101" });
    // A lock ends open WebSockets too, as it does terminals (docs/locks.md).
    const release = this.#o.trackOpen?.(grant, () => socket.destroy());
    if (release) socket.once("close", release);
    // So do the ends of its session: a web logout, a user or role change (closeOpen, recheckOpen).
    this.#open.set(socket, {
      grant,
      sessionId: cookieValue(req.headers.cookie, APP_SESSION_COOKIE) ?? "",
      host,
    });
    socket.once("close", () => this.#open.delete(socket));
    this.#forwarder.ws(req, socket, head, this.#context(grant, host), () => {
      writeRaw(socket, json(502, "bad_gateway", `app ${grant.appName} did not answer`));
    });
  }

  #context(grant: AppGrant, host: string): ForwardContext {
    return { grant, publicOrigin: this.#origin(host), publicPort: this.#port || "443" };
  }

  /** The live session of this request, or undefined; locked users are refused (AccessDeniedError). */
  async #session(req: IncomingMessage, host: string): Promise<AppGrant | undefined> {
    const id = cookieValue(req.headers.cookie, APP_SESSION_COOKIE);
    if (!id) return undefined;
    const grant = await this.#o.grants.lookup(id, host);
    if (!grant) return undefined;
    if (grant.webSessionHash !== "" && this.#o.webSessionRevoked(grant.webSessionHash)) {
      // The web session it came from ended here (logout, revocation): so did this one.
      this.#o.grants.forget(id);
      return undefined;
    }
    this.#o.checkLock(grant);
    return grant;
  }

  /** No session: browsers go to the launch page (with a login state), other requests get 401. */
  #noSession(req: IncomingMessage, host: string): Answer {
    if (req.method !== "GET" && req.method !== "HEAD") {
      return json(401, "not_authenticated", "no app session: open the app in a browser to sign in");
    }
    // A browser that has a login under way keeps its state: a page's other requests (scripts,
    // images of an expired session) would otherwise replace it and fail the login in progress.
    const current = cookieValue(req.headers.cookie, APP_STATE_COOKIE);
    const state = current !== undefined && TOKEN.test(current) ? current : newState();
    const launch = new URL(`${this.#mainOrigin}/web/launch/${encodeURIComponent(host)}`);
    launch.searchParams.set("path", req.url ?? "/");
    launch.searchParams.set("state", state);
    return {
      status: 302,
      headers: { ...PRIVATE, location: launch.href, "set-cookie": [stateCookie(state)] },
    };
  }

  /** The proxy's own paths on every app host. */
  async #own(req: IncomingMessage, host: string, path: string): Promise<Answer> {
    if (path === "/x-svc/app-login") {
      if (req.method !== "GET") return json(405, "method_not_allowed", "use GET");
      return this.#login(req, host);
    }
    if (path === "/x-svc/logout") {
      if (req.method !== "POST") return json(405, "method_not_allowed", "use POST");
      return this.#logout(req, host);
    }
    return json(404, "not_found", "no such path on the app proxy");
  }

  async #login(req: IncomingMessage, host: string): Promise<Answer> {
    const q = new URL(req.url ?? "/", "https://app.invalid").searchParams;
    if (!sameState(q.get("state") ?? undefined, cookieValue(req.headers.cookie, APP_STATE_COOKIE))) {
      return {
        ...json(400, "bad_parameter", "app login was not started from this browser"),
        headers: PRIVATE,
      };
    }
    let grant: AppGrant;
    try {
      grant = await this.#o.grants.exchange(q.get("code") ?? "", host);
    } catch (err) {
      if (err instanceof NotFoundError) {
        return {
          ...json(400, "bad_parameter", "the app login code is unknown, used or expired"),
          headers: PRIVATE,
        };
      }
      throw err;
    }
    const maxAge = (grant.expiresMs - this.#o.clock.now().getTime()) / 1000;
    return {
      status: 303,
      headers: {
        ...PRIVATE,
        location: safePath(q.get("path") ?? undefined),
        "set-cookie": [sessionCookie(grant.sessionId, maxAge), clearStateCookie()],
      },
    };
  }

  async #logout(req: IncomingMessage, host: string): Promise<Answer> {
    const origin = req.headers.origin;
    if (origin !== undefined && origin !== this.#origin(host)) {
      return json(403, "access_denied", "logout from another origin");
    }
    const id = cookieValue(req.headers.cookie, APP_SESSION_COOKIE);
    if (id) await this.#o.grants.end(id);
    return { status: 303, headers: { ...PRIVATE, location: "/", "set-cookie": [clearSessionCookie()] } };
  }

  // ---- answers -------------------------------------------------------------------------------

  #send(res: ServerResponse, a: Answer, app: string): void {
    this.#write(res, a);
    this.#requests?.inc({ app, code: String(a.status) });
  }

  #write(res: ServerResponse, a: Answer): void {
    if (res.headersSent) {
      res.destroy();
      return;
    }
    const body = a.body === undefined ? "" : JSON.stringify(a.body);
    res.writeHead(a.status, {
      ...(a.body === undefined ? {} : { "content-type": "application/json; charset=utf-8" }),
      "content-length": String(Buffer.byteLength(body)),
      // A body the proxy did not read (no session, a refusal): the connection ends with the
      // answer rather than wait for the rest, which could trickle in for as long as the client likes.
      ...(res.req.complete ? {} : { connection: "close" }),
      ...a.headers,
    });
    res.end(body);
  }

  #fail(res: ServerResponse, err: unknown): void {
    const answer = answerOf(err);
    if (answer.status >= 500 && answer.status !== 503) {
      this.#o.logger.warn({ err: err instanceof Error ? err.message : String(err) }, "app request failed");
    }
    this.#send(res, answer, "-");
  }

  #refuseUpgrade(socket: Duplex, err: unknown): void {
    writeRaw(socket, answerOf(err));
  }
}
