// Forwarding to an app's upstream (docs/apps.md) with http-proxy-3, the maintained TypeScript
// rewrite of http-proxy: bodies stream both ways without buffering, WebSocket upgrades are piped
// after the upstream's 101. What the proxy owns is set here: the client's Svc-Jwt-Assertion and
// forwarding headers are replaced, our cookies never reach the app, redirects to the upstream's
// origin come back on the app's public origin, and the app's cookies stay on its host.
import {
  Agent as HttpAgent,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type ServerResponse,
} from "node:http";
import { Agent as HttpsAgent } from "node:https";
import type { Duplex } from "node:stream";
import { ProxyServer, type ServerOptions } from "http-proxy-3";
import { RESERVED_APP_HEADERS } from "../../../core/resources/app.ts";
import type { AppGrant } from "./auth-api.ts";
import { setsOurCookie, withoutOurCookies } from "./cookies.ts";

/** Connecting to an upstream may take this long before the request fails (502). */
const CONNECT_TIMEOUT_MS = 10_000;

/** What a forwarded request is sent with besides the grant. */
export interface ForwardContext {
  grant: AppGrant;
  /** https://<app host>[:port], what the browser uses */
  publicOrigin: string;
  /** the port the client reached (X-Forwarded-Port) */
  publicPort: string;
}

/** Why a request could not be forwarded; the caller answers it (502). */
export type UpstreamFailure = (err: Error, target: Response | Duplex) => void;
type Response = ServerResponse<IncomingMessage>;

const reserved = new Set<string>(RESERVED_APP_HEADERS);

/** The request's headers as the app gets them (mutated in place: http-proxy-3 copies req.headers). */
export function prepareHeaders(req: IncomingMessage, c: ForwardContext): void {
  const h: IncomingHttpHeaders = req.headers;
  const host = h.host ?? "";
  delete h["svc-jwt-assertion"];
  delete h.forwarded;
  // Hop-by-hop: meant for this proxy, not the app (RFC 9110 7.6.1); an upgrade keeps its own.
  delete h["proxy-authorization"];
  delete h["keep-alive"];
  if (!h.upgrade) {
    for (const name of (h.connection ?? "").split(",")) {
      const n = name.trim().toLowerCase();
      if (n !== "" && n !== "close" && n !== "keep-alive") delete h[n];
    }
  }
  const cookie = withoutOurCookies(h.cookie);
  if (cookie === undefined) delete h.cookie;
  else h.cookie = cookie;
  // The client's own X-Forwarded-* are not believed: this proxy is the edge for apps.
  h["x-forwarded-for"] = req.socket.remoteAddress ?? "";
  h["x-forwarded-proto"] = "https";
  h["x-forwarded-host"] = host;
  h["x-forwarded-port"] = c.publicPort;
  for (const { name, value } of c.grant.headers) {
    const lower = name.toLowerCase();
    if (!reserved.has(lower)) h[lower] = value;
  }
  h["svc-jwt-assertion"] = c.grant.assertion;
}

/**
 * An absolute Location pointing at the upstream's origin (or one of the App's redirect hosts)
 * rewritten onto the public origin; relative ones and others are left alone.
 */
export function rewriteLocation(location: string, c: ForwardContext): string {
  let url: URL;
  try {
    url = new URL(location);
  } catch {
    return location;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return location;
  const upstream = new URL(c.grant.appUri);
  const sameOrigin = url.host.toLowerCase() === upstream.host.toLowerCase();
  if (!sameOrigin && !c.grant.redirectHosts.includes(url.hostname.toLowerCase())) return location;
  // Requests get the URI's path prepended on the way in; a redirect under it loses it on the way out.
  const base = upstream.pathname.replace(/\/+$/, "");
  let path = url.pathname;
  if (sameOrigin && base !== "" && (path === base || path.startsWith(`${base}/`)))
    path = path.slice(base.length) || "/";
  return `${c.publicOrigin}${path}${url.search}${url.hash}`;
}

export class AppForwarder {
  readonly #proxy: ProxyServer;
  readonly #contexts = new WeakMap<IncomingMessage, ForwardContext>();
  // Kept-alive connections to upstreams; the https agent pools verified and unverified
  // connections apart (rejectUnauthorized is part of its pool key).
  readonly #http = new HttpAgent({ keepAlive: true, maxFreeSockets: 64 });
  readonly #https = new HttpsAgent({ keepAlive: true, maxFreeSockets: 64 });

  constructor() {
    this.#proxy = new ProxyServer({ xfwd: false, changeOrigin: true, connectTimeout: CONNECT_TIMEOUT_MS });
    this.#proxy.on("proxyRes", (proxyRes, req) => {
      const c = this.#contexts.get(req);
      if (!c) return;
      const location = proxyRes.headers.location;
      if (typeof location === "string") proxyRes.headers.location = rewriteLocation(location, c);
      const cookies = proxyRes.headers["set-cookie"];
      if (cookies) proxyRes.headers["set-cookie"] = cookies.filter((line) => !setsOurCookie(line));
    });
    // Failures without a callback (none expected: every call passes one) must not crash.
    this.#proxy.on("error", () => {});
  }

  #options(c: ForwardContext, upgrade: boolean): ServerOptions {
    const https = c.grant.appUri.startsWith("https:");
    return {
      target: c.grant.appUri,
      // Verified against the system CAs (and NODE_EXTRA_CA_CERTS) unless the App opts out.
      secure: !c.grant.insecureSkipVerify,
      // Domain attributes removed: the app's cookies stay on its own host.
      cookieDomainRewrite: { "*": "" },
      // An upgraded connection leaves the pool; a plain one goes back to it.
      agent: upgrade ? false : https ? this.#https : this.#http,
    };
  }

  web(req: IncomingMessage, res: Response, c: ForwardContext, failed: UpstreamFailure): void {
    prepareHeaders(req, c);
    this.#contexts.set(req, c);
    this.#proxy.web(req, res, this.#options(c, false), (err, _req, target) => failed(err, target));
  }

  ws(req: IncomingMessage, socket: Duplex, head: Buffer, c: ForwardContext, failed: UpstreamFailure): void {
    prepareHeaders(req, c);
    this.#proxy.ws(req, socket, head, this.#options(c, true), (err, _req, target) => failed(err, target));
  }

  close(): void {
    this.#http.destroy();
    this.#https.destroy();
  }
}
