// What the forwarder changes on the way to the app and back, without a network: the request
// headers it owns and the redirects it brings back onto the app's public origin.
import type { IncomingMessage } from "node:http";
import { describe, expect, it } from "vitest";
import type { AppGrant } from "./auth-api.ts";
import { type ForwardContext, prepareHeaders, rewriteLocation } from "./forwarder.ts";

const grant = (o: Partial<AppGrant> = {}): AppGrant => ({
  sessionId: "",
  username: "alice",
  roles: ["dev"],
  traits: {},
  appName: "grafana",
  appUri: "http://10.0.0.5:3000",
  publicAddr: "grafana.proxy.example.com",
  insecureSkipVerify: false,
  headers: [],
  redirectHosts: [],
  expiresMs: 0,
  assertion: "a.b.c",
  assertionExpiresMs: 0,
  webSessionHash: "",
  ...o,
});
const ctx = (o: Partial<AppGrant> = {}): ForwardContext => ({
  grant: grant(o),
  publicOrigin: "https://grafana.proxy.example.com:3080",
  publicPort: "3080",
});

describe("rewriteLocation", () => {
  it("brings the upstream's own origin and the App's redirect hosts back to the public origin", () => {
    const c = ctx({ redirectHosts: ["grafana.internal"] });
    expect(rewriteLocation("http://10.0.0.5:3000/login?next=%2F#top", c)).toBe(
      "https://grafana.proxy.example.com:3080/login?next=%2F#top",
    );
    expect(rewriteLocation("https://grafana.internal/d/1", c)).toBe(
      "https://grafana.proxy.example.com:3080/d/1",
    );
  });

  it("leaves other hosts, other ports, relative and non-http locations alone", () => {
    const c = ctx();
    for (const l of [
      "https://accounts.example/auth",
      "http://10.0.0.5:3001/x",
      "/relative",
      "mailto:a@b",
      "::bad",
    ]) {
      expect(rewriteLocation(l, c)).toBe(l);
    }
  });

  it("takes the URI's path prefix off a redirect under it (requests get it added on the way in)", () => {
    const c = ctx({ appUri: "http://10.0.0.5:3000/grafana/" });
    expect(rewriteLocation("http://10.0.0.5:3000/grafana/login", c)).toBe(
      "https://grafana.proxy.example.com:3080/login",
    );
    expect(rewriteLocation("http://10.0.0.5:3000/grafana", c)).toBe(
      "https://grafana.proxy.example.com:3080/",
    );
    expect(rewriteLocation("http://10.0.0.5:3000/grafanax", c)).toBe(
      "https://grafana.proxy.example.com:3080/grafanax",
    );
  });
});

describe("prepareHeaders", () => {
  const req = (headers: Record<string, string>) =>
    ({ headers: { ...headers }, socket: { remoteAddress: "192.0.2.7" } }) as unknown as IncomingMessage;

  it("sets what the proxy owns and drops what the client may not decide", () => {
    const r = req({
      host: "grafana.proxy.example.com:3080",
      "svc-jwt-assertion": "forged",
      forwarded: "for=1.2.3.4",
      "x-forwarded-for": "203.0.113.1",
      "proxy-authorization": "Basic eA==",
      connection: "keep-alive, x-secret",
      "x-secret": "hop",
      cookie: "a=1; __Host-svc_app_session=s; __Host-svc_app_state=t",
      "x-team": "client value",
      accept: "text/html",
    });
    prepareHeaders(
      r,
      ctx({
        headers: [
          { name: "X-Team", value: "platform" },
          { name: "Host", value: "evil" },
        ],
      }),
    );
    expect(r.headers).toEqual({
      host: "grafana.proxy.example.com:3080",
      "svc-jwt-assertion": "a.b.c",
      "x-forwarded-for": "192.0.2.7",
      "x-forwarded-proto": "https",
      "x-forwarded-host": "grafana.proxy.example.com:3080",
      "x-forwarded-port": "3080",
      connection: "keep-alive, x-secret",
      cookie: "a=1",
      "x-team": "platform",
      accept: "text/html",
    });
  });

  it("keeps a WebSocket upgrade's Connection-listed headers and drops an empty Cookie", () => {
    const r = req({ connection: "Upgrade", upgrade: "websocket", cookie: "__Host-svc_app_session=s" });
    prepareHeaders(r, ctx());
    expect(r.headers.upgrade).toBe("websocket");
    expect(r.headers.cookie).toBeUndefined();
  });
});
