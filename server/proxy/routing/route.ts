// Which stage takes a connection, from its ClientHello alone (docs/one-address.md).
import { isAppHostOf } from "../../../core/resources/app.ts";
import type { ClientHelloInfo } from "./client-hello.ts";

export type Route =
  /** a registered ALPN handler (reverse tunnels, proxy peering) */
  | { kind: "handler"; protocol: string }
  /** raw TCP to auth's gRPC port: mutual TLS stays end to end between the client and auth */
  | { kind: "auth" }
  /** the proxy's own HTTPS server: web API, WebSockets, console */
  | { kind: "web" }
  /** the app hosts' HTTPS server: SNI is one label under the public host (docs/apps.md) */
  | { kind: "app" };

export interface RouteRules {
  /** ALPN ids with a handler, in the order they are checked. */
  handlers: readonly string[];
  /** the TLS name on auth's certificate; undefined when the proxy has no passthrough */
  authServerName?: string | undefined;
  /**
   * The proxy's own public host name. When auth's name equals it (the embedded default, both
   * "localhost"), SNI cannot tell them apart, so only the ALPN rule sends a connection to auth.
   */
  publicHost?: string | undefined;
  /** Whether app hosts are served (an app server is there); without it they go to the web server. */
  apps?: boolean | undefined;
}

/**
 * 1. an offered ALPN id with a handler; 2. an app host (SNI one label under the public host, not
 * auth's name) when apps are served, whatever ALPN it offers; 3. auth when SNI names auth, or the
 * ALPN list is exactly ["h2"] (gRPC clients offer only h2; browsers and curl always add
 * http/1.1); 4. the web server.
 */
export function routeOf(hello: ClientHelloInfo, rules: RouteRules): Route {
  for (const protocol of rules.handlers) {
    if (hello.alpnProtocols.includes(protocol)) return { kind: "handler", protocol };
  }
  const authName = rules.authServerName?.toLowerCase();
  const sni = hello.serverName?.toLowerCase();
  const publicHost = rules.publicHost?.toLowerCase();
  if (rules.apps && sni !== undefined && publicHost && sni !== authName && isAppHostOf(sni, publicHost)) {
    return { kind: "app" };
  }
  if (authName) {
    const sniIsAuth =
      hello.serverName !== undefined &&
      hello.serverName.toLowerCase() === authName &&
      authName !== rules.publicHost?.toLowerCase();
    const grpcOnly = hello.alpnProtocols.length === 1 && hello.alpnProtocols[0] === "h2";
    if (sniIsAuth || grpcOnly) return { kind: "auth" };
  }
  return { kind: "web" };
}
