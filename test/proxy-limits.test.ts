// Limits that protect the platform, through the real proxy over HTTPS / WSS: requests per session
// (token bucket, 429 + Retry-After), open terminals per user and per proxy (429 before the
// upgrade, a slot freed when a terminal closes), the WebSocket message size (close 1009 "message
// too big", the proxy keeps serving); and the `proxy.limits` keys of the config file.
import { setTimeout as sleep } from "node:timers/promises";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { systemClock } from "../core/clock.ts";
import { checkConfig, defaultConfig } from "../server/config.ts";
import { type ProxyConfig, proxyConfigFrom, proxyDefaults } from "../server/proxy/config.ts";
import { GrpcAuthApi } from "../server/proxy/grpc-auth-api.ts";
import { TokenBuckets } from "../server/proxy/plugins/session-rate-limit.ts";
import { type ProxyServer, startProxyServer } from "../server/proxy/server.ts";
import { GrpcTerminalAuthApi } from "../server/proxy/terminal-auth.ts";
import { TerminalSlots, terminalRoutes } from "../server/proxy/terminal-route.ts";
import {
  type AuthSide,
  PASSWORD,
  PUBLIC_HOST,
  PUBLIC_ORIGIN,
  startAuthSide,
  USERS,
} from "./proxy-fixture.ts";
import { HttpsClient } from "./proxy-https-client.ts";
import { mustOpen, type OpenOptions, openTerminal, type TerminalConnection } from "./terminal-client.ts";
import { NODES, startTerminalFixture, type TerminalFixture } from "./terminal-fixture.ts";

async function until(check: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

describe("proxy.limits in the config file", () => {
  const good = defaultConfig({ clusterName: "prod-1", publicHost: "svc.example.com" });

  it("has defaults, written into a first start's config, and reaches the proxy", () => {
    expect(good.proxy.limits).toEqual({
      terminals_per_user: 32,
      terminals_per_proxy: 1000,
      ws_message_bytes: 1048576,
      session_requests_per_second: 20,
      session_request_burst: 100,
    });
    expect(proxyConfigFrom(good, "0.1.0").limits).toEqual(proxyDefaults.limits);
    const set = checkConfig({
      ...good,
      proxy: { ...good.proxy, limits: { terminals_per_user: 4, session_requests_per_second: 0.5 } },
    });
    expect(proxyConfigFrom(set, "0.1.0").limits).toEqual({
      ...proxyDefaults.limits,
      terminalsPerUser: 4,
      sessionRequestsPerSecond: 0.5,
    });
  });

  it.each([
    [{ terminals_per_user: 0 }, "terminals_per_user"],
    [{ terminals_per_proxy: 1.5 }, "terminals_per_proxy"],
    [{ ws_message_bytes: 10 }, "ws_message_bytes"],
    [{ session_requests_per_second: 0 }, "session_requests_per_second"],
    [{ session_request_burst: -1 }, "session_request_burst"],
    [{ sessions: 3 }, "proxy.limits"],
  ])("refuses %j naming the field", (limits, field) => {
    expect(() => checkConfig({ ...good, proxy: { ...good.proxy, limits } })).toThrow(
      new RegExp(`field proxy\\.limits.*${field.replace("proxy.limits", "")}`),
    );
  });
});

describe("token bucket", () => {
  it("grants the burst, refuses the next with the wait, refills at the rate", () => {
    let t = 0;
    const b = new TokenBuckets({ perSecond: 2, burst: 3, maxKeys: 2, now: () => t });
    expect([b.take("a"), b.take("a"), b.take("a")]).toEqual([0, 0, 0]);
    expect(b.take("a")).toBe(1);
    t = 499;
    expect(b.take("a")).toBe(1);
    t = 500;
    expect(b.take("a")).toBe(0);
    expect(b.take("b")).toBe(0);
    // a third key forgets the least recently used one (a), whose bucket starts full again
    expect(b.take("c")).toBe(0);
    expect(b.size).toBe(2);
  });
});

describe("requests per session (REST)", () => {
  let side: AuthSide;
  let proxy: ProxyServer;
  let authApi: GrpcAuthApi;
  let terminalAuth: GrpcTerminalAuthApi;
  let client: HttpsClient;

  beforeAll(async () => {
    side = await startAuthSide();
    const grpc = {
      address: side.auth.address,
      caPems: [side.hostCaPem],
      certPem: side.proxyClient.certPem,
      keyPem: side.proxyClient.keyPem,
    };
    authApi = new GrpcAuthApi(grpc);
    terminalAuth = new GrpcTerminalAuthApi(grpc);
    const config: ProxyConfig = {
      ...proxyDefaults,
      listenHost: "127.0.0.1",
      listenPort: 0,
      publicUrl: PUBLIC_ORIGIN,
      clusterName: "proxy-test",
      serverVersion: "0.1.0",
      clientVersionPolicy: { minimum: "0.1.0", recommended: "0.1.0" },
      oidcIssuerUrl: PUBLIC_ORIGIN,
      // One token every 5 s: the burst is spent well before a token comes back.
      limits: { ...proxyDefaults.limits, sessionRequestsPerSecond: 0.2, sessionRequestBurst: 5 },
    };
    proxy = await startProxyServer({
      config,
      tls: side.proxyServer,
      authApi,
      logger: pino({ level: process.env.SVC_TEST_LOG_LEVEL ?? "silent" }),
      ready: () => true,
      resources: side.source,
      routes: [terminalRoutes({ terminalAuth, clock: systemClock })],
    });
    client = new HttpsClient(proxy.url, side.hostCaPem, PUBLIC_HOST);
  }, 60_000);
  afterAll(async () => {
    await proxy?.close();
    authApi?.close();
    terminalAuth?.close();
    await side?.close();
  });

  const login = async (username: string): Promise<Record<string, string>> => {
    const res = await client.send({
      method: "POST",
      path: "/v1/webapi/login",
      body: { username, password: PASSWORD },
    });
    expect(res.status, res.text).toBe(200);
    return { authorization: `Bearer ${(res.json as { session_id: string }).session_id}` };
  };

  it("passes the burst, refuses one past it with 429 + Retry-After, and refills", async () => {
    const alice = await login(USERS.user);
    for (let i = 0; i < 5; i++) {
      expect((await client.send({ path: "/v1/webapi/session", headers: alice })).status).toBe(200);
    }
    const refused = await client.send({ path: "/v1/webapi/nodes", headers: alice });
    expect(refused.status).toBe(429);
    expect(refused.json).toEqual({
      error: { code: "limit_exceeded", message: "too many requests for this session, slow down" },
    });
    const wait = Number(refused.headers["retry-after"]);
    expect(wait).toBeGreaterThanOrEqual(1);
    expect(wait).toBeLessThanOrEqual(5);

    // Other sessions and requests without a session are not affected.
    const admin = await login(USERS.admin);
    expect((await client.send({ path: "/v1/webapi/session", headers: admin })).status).toBe(200);
    expect((await client.send({ path: "/v1/webapi/ping" })).status).toBe(200);

    await sleep(wait * 1000);
    expect((await client.send({ path: "/v1/webapi/session", headers: alice })).status).toBe(200);
    expect((await client.send({ path: "/v1/webapi/session", headers: alice })).status).toBe(429);
    // The terminal upgrade spends the same budget: refused before the upgrade.
    const upgrade = await openTerminal({
      baseUrl: proxy.url,
      caPem: side.hostCaPem,
      servername: PUBLIC_HOST,
      query: { node: "any" },
      headers: alice,
    });
    expect(upgrade).toMatchObject({ kind: "refused", status: 429 });
  }, 30_000);

  it("counts a session carried by the cookie the same way", async () => {
    const res = await client.send({
      method: "POST",
      path: "/v1/webapi/login",
      body: { username: USERS.mfa, password: PASSWORD },
    });
    const cookie = { cookie: res.setCookies.map((l) => l.split(";")[0]).join("; ") };
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) {
      statuses.push((await client.send({ path: "/v1/webapi/session", headers: cookie })).status);
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
  });

  it("declares the 429 on every route taking a session, and only there", async () => {
    const doc = (await client.send({ path: "/v1/webapi/openapi.json" })).json as {
      paths: Record<string, Record<string, { security?: unknown[]; responses: Record<string, unknown> }>>;
    };
    const ops = Object.entries(doc.paths).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, op]) => ({ where: `${method} ${path}`, op })),
    );
    const session = ops.filter((o) => o.op.security !== undefined);
    expect(session.length).toBeGreaterThan(5);
    for (const { where, op } of session) expect(Object.keys(op.responses), where).toContain("429");
    expect(Object.keys(doc.paths["/v1/webapi/ping"]?.["get"]?.responses ?? {})).not.toContain("429");
  });
});

describe("terminals (WSS)", () => {
  let fx: TerminalFixture;
  const slots = new TerminalSlots({ perUser: 2, perProxy: 3 });
  const open: TerminalConnection[] = [];
  let alice = { sessionId: "" };
  let dave = { sessionId: "" };
  const MAX = 4096;

  beforeAll(async () => {
    fx = await startTerminalFixture({ terminal: { slots, maxMessageBytes: MAX } });
    alice = await fx.login("alice");
    dave = await fx.login("dave");
  }, 180_000);
  afterAll(async () => {
    for (const c of open) c.ws.terminate();
    await fx?.close();
  }, 60_000);

  const opts = (s: { sessionId: string }): OpenOptions => ({
    baseUrl: fx.proxy.url,
    caPem: fx.hostCaPem,
    servername: PUBLIC_HOST,
    query: { node: NODES.agent, login: "root" },
    headers: { authorization: `Bearer ${s.sessionId}` },
  });
  const ready = async (s: { sessionId: string }): Promise<TerminalConnection> => {
    const c = await mustOpen(opts(s));
    open.push(c);
    await c.waitControl("ready");
    return c;
  };
  const refusal = async (s: { sessionId: string }): Promise<{ status: number; error: unknown }> => {
    const r = await openTerminal(opts(s));
    if (r.kind === "open") {
      open.push(r.conn);
      throw new Error("upgrade was not refused");
    }
    return { status: r.status, error: (JSON.parse(r.body) as { error: unknown }).error };
  };

  it("per user and per proxy: at the limit opens, one past is 429 before the upgrade, closing frees", async () => {
    const a1 = await ready(alice);
    await ready(alice);
    expect(await refusal(alice)).toEqual({
      status: 429,
      error: {
        code: "limit_exceeded",
        message: "too many terminals open: 2 of 2 allowed per user; close one and try again",
      },
    });
    const d1 = await ready(dave);
    expect(slots.open).toBe(3);
    expect(await refusal(dave)).toEqual({
      status: 429,
      error: {
        code: "limit_exceeded",
        message: "too many terminals open on this proxy (3); try again later",
      },
    });

    a1.ws.send(JSON.stringify({ type: "close" }));
    expect((await a1.closed).code).toBe(1000);
    await until(() => slots.open === 2, "the closed terminal's slot");
    await ready(dave);
    expect(slots.openFor("dave")).toBe(2);

    // A terminal refused after the upgrade (offline node) frees its slot too.
    d1.ws.close();
    await until(() => slots.open === 2, "dave's slot");
    const off = await mustOpen({ ...opts(alice), query: { node: NODES.offline } });
    open.push(off);
    expect((await off.closed).code).toBe(4503);
    await until(() => slots.openFor("alice") === 1, "the refused terminal's slot");

    for (const c of open) c.ws.close();
    await until(() => slots.open === 0, "every slot");
  }, 120_000);

  it("closes a terminal sent a message over the limit with 1009, and keeps serving", async () => {
    const c = await ready(alice);
    // Exactly the limit passes: one command line padded with spaces.
    const line = "echo at-lim''it-ok";
    c.type(`${line}${" ".repeat(MAX - line.length - 1)}\r`);
    await c.waitFor("at-limit-ok");
    c.type(Buffer.alloc(MAX + 1, "x"));
    expect(await c.closed).toEqual({ code: 1009, reason: "message too big" });
    await until(() => slots.open === 0, "the slot of the closed terminal");

    expect((await fx.client.send({ path: "/v1/webapi/ping" })).status).toBe(200);
    const again = await ready(alice);
    again.ws.send(JSON.stringify({ type: "close" }));
    expect((await again.closed).code).toBe(1000);
  }, 90_000);
});
