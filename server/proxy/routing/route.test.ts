// The routing rules on their own (docs/one-address.md): handlers, auth by SNI or ["h2"], web.
import { describe, expect, it } from "vitest";
import { routeOf } from "./route.ts";

const rules = {
  handlers: ["svc-tunnel", "svc-peer"],
  authServerName: "svc-auth.svc-system.svc",
  publicHost: "proxy.example.com",
};

describe("routeOf", () => {
  it("sends a registered ALPN id to its handler, before any other rule", () => {
    expect(routeOf({ serverName: "svc-auth.svc-system.svc", alpnProtocols: ["svc-tunnel"] }, rules)).toEqual({
      kind: "handler",
      protocol: "svc-tunnel",
    });
    expect(routeOf({ alpnProtocols: ["svc-peer", "h2"] }, rules)).toEqual({
      kind: "handler",
      protocol: "svc-peer",
    });
    // not registered: no handler route
    expect(routeOf({ alpnProtocols: ["svc-other"] }, rules)).toEqual({ kind: "web" });
  });

  it("sends auth's SNI, or exactly ALPN [h2], to auth", () => {
    expect(
      routeOf({ serverName: "svc-auth.svc-system.svc", alpnProtocols: ["h2", "http/1.1"] }, rules),
    ).toEqual({
      kind: "auth",
    });
    expect(routeOf({ serverName: "SVC-AUTH.svc-system.svc", alpnProtocols: [] }, rules)).toEqual({
      kind: "auth",
    });
    expect(routeOf({ serverName: "proxy.example.com", alpnProtocols: ["h2"] }, rules)).toEqual({
      kind: "auth",
    });
    expect(routeOf({ alpnProtocols: ["h2"] }, rules)).toEqual({ kind: "auth" });
  });

  it("sends browsers and curl (http/1.1 offered, or no ALPN) to the web server", () => {
    expect(routeOf({ serverName: "proxy.example.com", alpnProtocols: ["h2", "http/1.1"] }, rules)).toEqual({
      kind: "web",
    });
    expect(routeOf({ serverName: "proxy.example.com", alpnProtocols: ["http/1.1"] }, rules)).toEqual({
      kind: "web",
    });
    expect(routeOf({ alpnProtocols: [] }, rules)).toEqual({ kind: "web" });
  });

  it("never routes to auth without a passthrough, and ignores SNI when auth's name is the proxy's", () => {
    expect(routeOf({ alpnProtocols: ["h2"] }, { handlers: [] })).toEqual({ kind: "web" });
    const embedded = { handlers: [], authServerName: "localhost", publicHost: "localhost" };
    expect(routeOf({ serverName: "localhost", alpnProtocols: ["h2", "http/1.1"] }, embedded)).toEqual({
      kind: "web",
    });
    expect(routeOf({ serverName: "localhost", alpnProtocols: ["h2"] }, embedded)).toEqual({ kind: "auth" });
  });

  it("sends one label under the public host to the app server when apps are served", () => {
    const apps = { ...rules, apps: true };
    const browser = ["h2", "http/1.1"];
    expect(routeOf({ serverName: "grafana.proxy.example.com", alpnProtocols: browser }, apps)).toEqual({
      kind: "app",
    });
    expect(routeOf({ serverName: "Grafana.PROXY.example.com", alpnProtocols: [] }, apps)).toEqual({
      kind: "app",
    });
    // an app host is named by SNI: even a gRPC-like ALPN list goes to the app server
    expect(routeOf({ serverName: "grafana.proxy.example.com", alpnProtocols: ["h2"] }, apps)).toEqual({
      kind: "app",
    });
    // a registered ALPN handler still comes first
    expect(routeOf({ serverName: "grafana.proxy.example.com", alpnProtocols: ["svc-tunnel"] }, apps)).toEqual(
      {
        kind: "handler",
        protocol: "svc-tunnel",
      },
    );
    // not one label under it: the public host itself, two labels, another domain, no SNI
    for (const serverName of [
      "proxy.example.com",
      "a.b.proxy.example.com",
      "grafana.example.com",
      "-x.proxy.example.com",
    ]) {
      expect(routeOf({ serverName, alpnProtocols: browser }, apps)).toEqual({ kind: "web" });
    }
    expect(routeOf({ alpnProtocols: browser }, apps)).toEqual({ kind: "web" });
    // without an app server the names reach the web server as before
    expect(routeOf({ serverName: "grafana.proxy.example.com", alpnProtocols: browser }, rules)).toEqual({
      kind: "web",
    });
  });

  it("never takes auth's name for an app, even when it is one label under the public host", () => {
    const apps = {
      handlers: [],
      authServerName: "auth.proxy.example.com",
      publicHost: "proxy.example.com",
      apps: true,
    };
    expect(
      routeOf({ serverName: "auth.proxy.example.com", alpnProtocols: ["h2", "http/1.1"] }, apps),
    ).toEqual({
      kind: "auth",
    });
    expect(
      routeOf({ serverName: "wiki.proxy.example.com", alpnProtocols: ["h2", "http/1.1"] }, apps),
    ).toEqual({
      kind: "app",
    });
  });
});
