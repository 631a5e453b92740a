// The security headers are on every kind of answer the proxy gives, whichever step gave it: a
// route's 200, a static page, the session check's 401, the session budget's 429, the framework's
// 404 / 405 / 400 / 414 (refused by a hook, and before routing), and 503 while the proxy closes.
// Real HTTPS to a real proxy in front of a real auth server.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { proxyDefaults } from "../server/proxy/config.ts";
import { MAX_URL_LENGTH } from "../server/proxy/plugins/error-handler.ts";
import { computeSecurityHeaders } from "../server/proxy/plugins/security-headers.ts";
import { type ProxyServer, startProxyServer } from "../server/proxy/server.ts";
import { webRoutes } from "../web/serve.ts";
import {
  PASSWORD,
  type ProxyFixture,
  PUBLIC_HOST,
  requestsWhileClosing,
  startProxyFixture,
  USERS,
} from "./proxy-fixture.ts";
import { type HttpResponse, HttpsClient } from "./proxy-https-client.ts";

let fx: ProxyFixture;
let web: ProxyServer;
let webClient: HttpsClient;
let dist: string;
let bearer: Record<string, string>;
/** Every header the policy sets, as the proxy must send it (cache-control aside: routes may set it). */
let expected: Record<string, string>;

beforeAll(async () => {
  // A budget of 3 requests per session, refilled slowly: the 429 is reachable in a test.
  fx = await startProxyFixture({
    limits: { ...proxyDefaults.limits, sessionRequestsPerSecond: 0.01, sessionRequestBurst: 3 },
  });
  expected = computeSecurityHeaders(fx.config.publicUrl);
  const login = await fx.client.send({
    method: "POST",
    path: "/v1/webapi/login",
    body: { username: USERS.user, password: PASSWORD },
  });
  expect(login.status, login.text).toBe(200);
  bearer = { authorization: `Bearer ${(login.json as { session_id: string }).session_id}` };
  // The console's pages, from a build folder of one page.
  dist = mkdtempSync(join(tmpdir(), "svc-console-"));
  writeFileSync(
    join(dist, "index.html"),
    '<!doctype html><script type="module" src="/web/assets/a.js"></script>',
  );
  web = await startProxyServer({
    config: fx.config,
    tls: fx.proxyTls,
    authApi: fx.authApi,
    logger: pino({ level: "silent" }),
    ready: () => true,
    resources: fx.source,
    routes: [webRoutes({ dist })],
  });
  webClient = new HttpsClient(web.url, fx.hostCaPem, PUBLIC_HOST);
});

afterAll(async () => {
  await web?.close();
  await fx?.close();
  if (dist) rmSync(dist, { recursive: true, force: true });
});

function expectSecurityHeaders(res: Pick<HttpResponse, "headers" | "status">, what: string): void {
  expect(Object.keys(expected).length, "the policy").toBeGreaterThanOrEqual(13);
  for (const [name, value] of Object.entries(expected)) {
    if (name === "cache-control") {
      expect(res.headers[name], `${what}: ${name}`).toBeDefined();
      continue;
    }
    expect(res.headers[name], `${what} (${res.status}): ${name}`).toBe(value);
  }
}

describe("security headers", () => {
  it("the policy: CSP, HSTS, framing, sniffing, referrer and the cross-origin isolation headers", () => {
    expect(expected["strict-transport-security"]).toBe("max-age=31536000; includeSubDomains");
    expect(expected["content-security-policy"]).toContain("frame-ancestors 'none'");
    expect(expected["x-frame-options"]).toBe("DENY");
    expect(expected["x-content-type-options"]).toBe("nosniff");
    expect(expected["referrer-policy"]).toBe("same-origin");
    expect(expected["cross-origin-resource-policy"]).toBe("same-origin");
    expect(expected["cache-control"]).toBe("no-store");
  });

  it("on 200s: a public route, an authenticated GET (twice: from the session cache too)", async () => {
    const ping = await fx.client.send({ path: "/v1/webapi/ping" });
    expect(ping.status).toBe(200);
    expectSecurityHeaders(ping, "ping");
    for (const n of [1, 2]) {
      const res = await fx.client.send({ path: "/v1/webapi/session", headers: bearer });
      expect(res.status, res.text).toBe(200);
      expectSecurityHeaders(res, `session #${n}`);
      expect(res.headers["cache-control"]).toBe("no-store");
    }
  });

  it("on a static page of the console", async () => {
    const page = await webClient.send({ path: "/web/nodes" });
    expect(page.status).toBe(200);
    expect(page.headers["content-type"]).toBe("text/html; charset=utf-8");
    expectSecurityHeaders(page, "console page");
  });

  it("on the session check's 401s: no credential and a malformed one", async () => {
    const none = await fx.client.send({ path: "/v1/webapi/session" });
    expect(none.status).toBe(401);
    expectSecurityHeaders(none, "no credential");
    const malformed = await fx.client.send({
      path: "/v1/webapi/session",
      headers: { authorization: "Bearer !" },
    });
    expect(malformed.status).toBe(401);
    expectSecurityHeaders(malformed, "malformed credential");
  });

  it("on the framework's 404, 405, 400 and both 414s", async () => {
    const notFound = await fx.client.send({ path: "/v1/webapi/nope" });
    expect(notFound.status).toBe(404);
    expectSecurityHeaders(notFound, "404");
    const method = await fx.client.send({ method: "DELETE", path: "/v1/webapi/ping" });
    expect(method.status).toBe(405);
    expectSecurityHeaders(method, "405");
    const badJson = await fx.client.send({
      method: "POST",
      path: "/v1/webapi/login",
      headers: { "content-type": "application/json" },
      raw: "{",
    });
    expect(badJson.status).toBe(400);
    expectSecurityHeaders(badJson, "400");
    // Refused by the onRequest hook (the whole URL) and before routing (one path segment).
    const longUrl = await fx.client.send({ path: `/v1/webapi/ping?x=${"a".repeat(MAX_URL_LENGTH)}` });
    expect(longUrl.status).toBe(414);
    expectSecurityHeaders(longUrl, "414 URL");
    const longSegment = await fx.client.send({
      method: "DELETE",
      path: `/v1/webapi/mfa/devices/${"a".repeat(2000)}`,
      headers: bearer,
    });
    expect(longSegment.status).toBe(414);
    expectSecurityHeaders(longSegment, "414 segment");
  });

  it("on the session budget's 429", async () => {
    const login = await fx.client.send({
      method: "POST",
      path: "/v1/webapi/login",
      body: { username: USERS.user, password: PASSWORD },
    });
    const own = { authorization: `Bearer ${(login.json as { session_id: string }).session_id}` };
    const statuses: number[] = [];
    let limited: HttpResponse | undefined;
    for (let i = 0; i < 5 && limited === undefined; i++) {
      const res = await fx.client.send({ path: "/v1/webapi/session", headers: own });
      statuses.push(res.status);
      if (res.status === 429) limited = res;
    }
    expect(statuses).toEqual([200, 200, 200, 429]);
    if (limited === undefined) throw new Error("no 429");
    expect(Number(limited.headers["retry-after"])).toBeGreaterThan(0);
    expectSecurityHeaders(limited, "429");
  });

  it("on the 503 of a request arriving while the proxy closes", async () => {
    const own = await startProxyFixture();
    try {
      const text = await requestsWhileClosing(own);
      const second = text.slice(text.indexOf("HTTP/1.1", 10));
      const [statusLine, ...lines] = (second.split("\r\n\r\n")[0] ?? "").split("\r\n");
      expect(statusLine).toBe("HTTP/1.1 503 Service Unavailable");
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const i = line.indexOf(":");
        headers[line.slice(0, i).toLowerCase()] = line.slice(i + 1).trim();
      }
      expectSecurityHeaders({ status: 503, headers }, "503 while closing");
    } finally {
      await own.close();
    }
  });
});
