// The proxy's inventory copy (server/proxy/inventory-cache.ts) against real auth over gRPC/TLS
// and the real proxy over HTTPS: GET /v1/webapi/nodes from the copy equals auth's own ListNodes
// for an admin, a label-limited user and a user without roles; role edits and nodes joining or
// leaving reach it; the per-node login decision matches auth's; with the feed down the proxy asks
// auth; a node identity is refused the feed.
import type { ServiceError } from "@grpc/grpc-js";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openSqliteBackend } from "../core/backend/sqlite.ts";
import {
  agentIdentityUri,
  generateEcdsaP256,
  issueTlsClientCert,
  privateKeyToPem,
} from "../core/certs/x509.ts";
import { systemClock } from "../core/clock.ts";
import { API_VERSION } from "../core/resources/index.ts";
import { type AuthServiceClient, agentMetadata, createAuthClient } from "../server/auth/client.ts";
import { MAX_STREAMS_PER_CALLER } from "../server/auth/feed-streams.ts";
import { NodeStore } from "../server/auth/nodes.ts";
import { setPassword } from "../server/auth/passwords.ts";
import type { NodePage, NodeQuery } from "../server/proxy/auth-client.ts";
import { proxyDefaults } from "../server/proxy/config.ts";
import { GrpcAuthApi } from "../server/proxy/grpc-auth-api.ts";
import { InventoryCache } from "../server/proxy/inventory-cache.ts";
import { type ProxyServer, startProxyServer } from "../server/proxy/server.ts";
import { GrpcTerminalAuthApi } from "../server/proxy/terminal-auth.ts";
import { proxyCallerId } from "../server/proxy/tunnel/registration.ts";
import { TrustWatcher } from "../server/trust/watcher.ts";
import {
  type AuthSide,
  PASSWORD,
  PUBLIC_HOST,
  PUBLIC_ORIGIN,
  startAuthSide,
  USERS,
} from "./proxy-fixture.ts";
import { HttpsClient } from "./proxy-https-client.ts";

const logger = pino({ level: process.env.SVC_TEST_LOG_LEVEL ?? "silent" });
let side: AuthSide;
let proxy: ProxyServer;
let http: HttpsClient;
let rawApi: GrpcAuthApi;
let rawTerminal: GrpcTerminalAuthApi;
let cache: InventoryCache;
let trust: TrustWatcher;
let streamClient: AuthServiceClient;
let callerId: string;
const clients: Array<{ close(): void }> = [];
const bearer: Record<string, string> = {};
const N = 120;

const envOf = (i: number) => ["prod", "dev", "staging"][i % 3] ?? "prod";
const pad = (i: number) => String(i).padStart(3, "0");

async function heartbeat(id: string, hostname: string, labels: Record<string, string>): Promise<void> {
  await side.auth.service.nodes.heartbeat(id, {
    hostname,
    addresses: ["10.0.0.1:3022"],
    labels,
    version: "1.0.0",
  });
}

/** Polls `check` until it holds (bounded). */
async function until(what: string, check: () => Promise<boolean> | boolean, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

async function login(username: string): Promise<string> {
  const res = await http.send({
    method: "POST",
    path: "/v1/webapi/login",
    body: { username, password: PASSWORD },
  });
  expect(res.status, res.text).toBe(200);
  return (res.json as { session_id: string }).session_id;
}

const toQuery = (q: NodeQuery): string =>
  new URLSearchParams({
    limit: String(q.limit),
    ...(q.search ? { search: q.search } : {}),
    ...(q.labels ? { labels: q.labels } : {}),
    ...(q.status ? { status: q.status } : {}),
    ...(q.startKey ? { start_key: q.startKey } : {}),
  }).toString();

/** The proxy's answer (HTTPS) and auth's own ListNodes for the same session, in one shape. */
async function both(who: string, q: NodeQuery): Promise<{ proxy: unknown; auth: unknown }> {
  const res = await http.send({
    path: `/v1/webapi/nodes?${toQuery(q)}`,
    headers: { authorization: `Bearer ${bearer[who]}` },
  });
  expect(res.status, res.text).toBe(200);
  const page: NodePage = await rawApi.listNodes(bearer[who] ?? "", { ...q, withLogins: true });
  const auth = {
    items: page.items.map((n) => ({
      id: n.id,
      hostname: n.hostname,
      addresses: n.addresses,
      labels: n.labels,
      status: n.status,
      last_heartbeat: n.lastHeartbeat?.toISOString(),
      version: n.version,
      logins: n.logins ?? [],
    })),
    ...(page.nextKey ? { next_key: page.nextKey } : {}),
    total_count: page.totalCount,
  };
  return { proxy: res.json, auth };
}

const ids = (page: unknown): string[] => (page as { items: { id: string }[] }).items.map((n) => n.id);

beforeAll(async () => {
  side = await startAuthSide();
  await side.source.apply({
    apiVersion: API_VERSION,
    kind: "Role",
    metadata: { name: "dev-only" },
    spec: { allow: { logins: ["deploy", "{{internal.logins}}"], node_labels: { env: "dev" } } },
  } as never);
  // mara's role requires MFA and she has no device: her password login is enrolment-only.
  await side.source.apply({
    apiVersion: API_VERSION,
    kind: "Role",
    metadata: { name: "needs-mfa" },
    spec: { allow: { logins: ["mara"], node_labels: { "*": "*" } }, options: { require_mfa: true } },
  } as never);
  for (const [name, roles] of [
    ["dora", ["dev-only"]],
    ["nemo", []],
    ["mara", ["needs-mfa"]],
  ] as const) {
    await side.source.apply({
      apiVersion: API_VERSION,
      kind: "User",
      metadata: { name },
      spec: { roles: [...roles], traits: { logins: [name] } },
    } as never);
    await setPassword(side.backend, name, PASSWORD);
  }
  for (let i = 0; i < N; i++) await heartbeat(`agent-${pad(i)}`, `node-${pad(i)}`, { env: envOf(i) });

  const grpc = {
    address: side.auth.address,
    caPems: [side.hostCaPem],
    certPem: side.proxyClient.certPem,
    keyPem: side.proxyClient.keyPem,
  };
  rawApi = new GrpcAuthApi(grpc);
  rawTerminal = new GrpcTerminalAuthApi(grpc);
  streamClient = createAuthClient(grpc);
  clients.push(rawApi, rawTerminal, streamClient);
  callerId = proxyCallerId(side.proxyClient.certPem);
  const connection = { client: streamClient, metadata: () => agentMetadata(callerId) };
  trust = new TrustWatcher({ ...connection, client: () => streamClient, clock: systemClock, logger });
  trust.start();
  cache = new InventoryCache({
    connection: () => connection,
    clock: systemClock,
    logger,
    locks: () => (trust.connected() ? trust.current()?.locks : undefined),
    backoff: { initialMs: 50, maxMs: 200 },
  });
  cache.start();
  proxy = await startProxyServer({
    config: {
      ...proxyDefaults,
      listenHost: "127.0.0.1",
      listenPort: 0,
      publicUrl: PUBLIC_ORIGIN,
      clusterName: "proxy-test",
      serverVersion: "0.1.0",
      clientVersionPolicy: { minimum: "0.1.0", recommended: "0.1.0" },
      oidcIssuerUrl: PUBLIC_ORIGIN,
    },
    tls: side.proxyServer,
    authApi: cache.serveAuthApi(new GrpcAuthApi(grpc)),
    logger,
    ready: () => true,
    resources: side.source,
  });
  http = new HttpsClient(proxy.url, side.hostCaPem, PUBLIC_HOST);
  for (const who of [USERS.admin, "dora", "nemo", "mara"]) bearer[who] = await login(who);
  await until("the inventory and the trust snapshot", () => cache.fresh() && trust.connected());
}, 120_000);

afterAll(async () => {
  cache?.close();
  await trust?.close();
  await proxy?.close();
  for (const c of clients) c.close();
  await side?.close();
});

describe("GET /v1/webapi/nodes from the proxy's copy", () => {
  const queries: NodeQuery[] = [
    { limit: 500 },
    { limit: 7 },
    { limit: 10, labels: "env=dev" },
    { limit: 500, search: "node-01" },
    { limit: 5, status: "online", search: "1" },
  ];

  for (const who of [USERS.admin, "dora", "nemo"]) {
    it(`equals auth's ListNodes for ${who} (every filter, every page), answered by the copy`, async () => {
      const before = cache.served.cache;
      for (const q of queries) {
        let startKey = "";
        for (let pages = 0; pages < 100; pages++) {
          const got = await both(who, { ...q, ...(startKey ? { startKey } : {}) });
          expect(got.proxy).toEqual(got.auth);
          startKey = (got.auth as { next_key?: string }).next_key ?? "";
          if (!startKey) break;
        }
      }
      expect(cache.served.cache - before).toBeGreaterThanOrEqual(queries.length);
    });
  }

  it("shows each user what their roles allow (admin all, dora env=dev, nemo none)", async () => {
    expect(ids((await both(USERS.admin, { limit: 500 })).proxy)).toHaveLength(N);
    const dora = (await both("dora", { limit: 500 })).proxy as { items: { labels: { env: string } }[] };
    expect(dora.items).toHaveLength(N / 3);
    expect(dora.items.every((n) => n.labels.env === "dev")).toBe(true);
    expect(ids((await both("nemo", { limit: 500 })).proxy)).toEqual([]);
  });

  it("answers a bad start_key as auth does (400, same message)", async () => {
    const res = await http.send({
      path: "/v1/webapi/nodes?start_key=bm90LWEta2V5",
      headers: { authorization: `Bearer ${bearer.dora}` },
    });
    expect(res.status).toBe(400);
    const fromAuth = await rawApi.listNodes(bearer.dora ?? "", { limit: 10, startKey: "bm90LWEta2V5" }).then(
      () => "no error",
      (err: Error) => err.message,
    );
    expect((res.json as { error: { message: string } }).error.message).toBe(fromAuth);
  });

  it("a role edit reaches the copy: dora then sees env=staging", async () => {
    await side.source.apply({
      apiVersion: API_VERSION,
      kind: "Role",
      metadata: { name: "dev-only" },
      spec: { allow: { logins: ["deploy", "{{internal.logins}}"], node_labels: { env: "staging" } } },
    } as never);
    await until("dora's list to follow the role", async () => {
      const got = await both("dora", { limit: 500 });
      const envs = new Set(
        (got.proxy as { items: { labels: { env: string } }[] }).items.map((n) => n.labels.env),
      );
      return envs.size === 1 && envs.has("staging");
    });
    const before = cache.served.cache;
    const got = await both("dora", { limit: 500 });
    expect(got.proxy).toEqual(got.auth);
    expect(cache.served.cache).toBe(before + 1);
  });

  it("a node registering (any replica: it is the shared backend) and leaving shows up", async () => {
    // Another replica's NodeStore on the same file: its write is announced to this auth's feed.
    const replica = await openSqliteBackend({
      path: side.backend.path,
      clock: systemClock,
      sweepIntervalMs: 0,
    });
    try {
      await new NodeStore({ backend: replica, clock: systemClock }).heartbeat("agent-new", {
        hostname: "node-new",
        addresses: ["10.0.0.9:3022"],
        labels: { env: "prod" },
        version: "1.0.1",
      });
    } finally {
      await replica.close();
    }
    await until("the new node in the copy", async () =>
      ids((await both(USERS.admin, { limit: 500 })).proxy).includes("agent-new"),
    );
    const got = await both(USERS.admin, { limit: 500 });
    expect(got.proxy).toEqual(got.auth);
    await side.auth.service.nodes.remove("agent-new");
    await until(
      "the node gone from the copy",
      async () => !ids((await both(USERS.admin, { limit: 500 })).proxy).includes("agent-new"),
    );
  });

  it("a heartbeat through this auth is listed at once (no scan wait), and refresh() sends a removal before it resolves", async () => {
    const feed = side.auth.service.inventoryFeed;
    const scans = feed.scans;
    const beat = {
      hostname: "node-now",
      addresses: ["10.0.0.8:3022"],
      labels: { env: "dev" },
      version: "1.0.0",
    };
    await side.auth.service.nodes.heartbeat("agent-now", beat);
    feed.noteHeartbeat("agent-now", beat);
    await until("the noted node in the copy", () => cache.nodeCount === N + 1);
    expect(feed.scans).toBeLessThanOrEqual(scans + 2);
    // As DeleteNode does: remove, then refresh; the copy has dropped it once the event arrived.
    await side.auth.service.nodes.remove("agent-now");
    const before = cache.nodeCount;
    await feed.refresh();
    await until("the removal in the copy", () => cache.nodeCount === before - 1, 2_000);
  });

  it("a heartbeat that changes nothing shown is not sent again (no flood); a label change is", async () => {
    const before = cache.received.nodes;
    const reads = side.auth.service.inventoryFeed.reads;
    for (let i = 0; i < N; i++) await heartbeat(`agent-${pad(i)}`, `node-${pad(i)}`, { env: envOf(i) });
    // Every rewrite announced and read: anything the feed would send has been sent by then.
    await until("the rewrites read", () => side.auth.service.inventoryFeed.reads >= reads + N);
    await side.auth.service.inventoryFeed.refreshNodes([]);
    await new Promise((r) => setTimeout(r, 200));
    expect(cache.received.nodes).toBe(before);
    await heartbeat("agent-000", "node-000", { env: envOf(0), rack: "r1" });
    await until("the label change", () => cache.received.nodes > before);
    const got = await both(USERS.admin, { limit: 1, search: "node-000" });
    expect(got.proxy).toEqual(got.auth);
    expect(JSON.stringify(got.proxy)).toContain("r1");
    expect(cache.received.nodes).toBe(before + 1);
  });
});

describe("GET /v1/webapi/roles from the copy", () => {
  it("an admin gets auth's ListRoles answer (roles being deleted too), from the copy", async () => {
    // A role held by a finalizer: listed, but it grants gina nothing (as at auth).
    await side.source.apply({
      apiVersion: API_VERSION,
      kind: "Role",
      metadata: { name: "going", deletionTimestamp: new Date().toISOString(), finalizers: ["x/y"] },
      spec: { allow: { logins: ["gina"], node_labels: { "*": "*" } } },
    } as never);
    await side.source.apply({
      apiVersion: API_VERSION,
      kind: "User",
      metadata: { name: "gina" },
      spec: { roles: ["going"] },
    } as never);
    await setPassword(side.backend, "gina", PASSWORD);
    bearer.gina = await login("gina");
    const get = () =>
      http.send({ path: "/v1/webapi/roles", headers: { authorization: `Bearer ${bearer[USERS.admin]}` } });
    await until("the deleting role in the copy", async () =>
      JSON.stringify((await get()).json).includes('"going"'),
    );
    const before = cache.served.cache;
    const res = await get();
    expect(res.status, res.text).toBe(200);
    expect(cache.served.cache).toBe(before + 1);
    const fromAuth = await rawApi.listRoles(bearer[USERS.admin] ?? "");
    expect((res.json as { items: unknown[] }).items).toEqual(fromAuth);
    expect(fromAuth.map((r) => r.name)).toContain("going");
    // The deleting role grants nothing: gina's list is empty here as at auth.
    const gina = await both("gina", { limit: 500 });
    expect(gina.proxy).toEqual(gina.auth);
    expect(ids(gina.proxy)).toEqual([]);
  });

  it("a user who may not list roles gets auth's refusal (403)", async () => {
    const before = { ...cache.served };
    const res = await http.send({
      path: "/v1/webapi/roles",
      headers: { authorization: `Bearer ${bearer.dora}` },
    });
    expect(res.status).toBe(403);
    expect(cache.served.auth).toBe(before.auth + 1);
    expect(cache.served.cache).toBe(before.cache);
  });
});

describe("the terminal's per-node login decision from the copy", () => {
  it("allows, refuses and hides exactly as auth's AuthorizeNodeLogin", async () => {
    const terminal = cache.serveTerminalAuth(rawTerminal);
    const api = cache.serveAuthApi(rawApi);
    // dora's role now grants deploy and dora on env=staging nodes (node-002 is staging).
    const cases: Array<[string, string]> = [
      ["node-002", "deploy"],
      ["node-002", "dora"],
      ["node-002", "root"],
      ["node-001", "deploy"],
      ["no-such-node", "deploy"],
    ];
    for (const [host, loginName] of cases) {
      await api.getSession(bearer.dora ?? "");
      const before = { ...cache.served };
      const fromCopy = await terminal.authorizeNodeLogin(bearer.dora ?? "", host, loginName).then(
        (n) => ({ ok: n.id }),
        (err: Error) => ({ err: `${err.name}: ${err.message}` }),
      );
      const fromAuth = await rawTerminal.authorizeNodeLogin(bearer.dora ?? "", host, loginName).then(
        (n) => ({ ok: n.id }),
        (err: Error) => ({ err: `${err.name}: ${err.message}` }),
      );
      expect(fromCopy, `${host} as ${loginName}`).toEqual(fromAuth);
      // Decided here, not forwarded (a refusal is decided here too: it throws before auth);
      // a host name the copy has never seen goes to auth (it may have joined on another replica).
      const asked = host === "no-such-node" ? 1 : 0;
      expect(cache.served.auth, `${host} as ${loginName}`).toBe(before.auth + asked);
    }
  });
});

describe("when the copy cannot answer", () => {
  it("an enrolment-only session (roles require MFA, none passed) gets auth's refusal", async () => {
    const before = { ...cache.served };
    const res = await http.send({
      path: "/v1/webapi/nodes?limit=5",
      headers: { authorization: `Bearer ${bearer.mara}` },
    });
    const fromAuth = await rawApi.listNodes(bearer.mara ?? "", { limit: 5, withLogins: true }).then(
      () => "listed",
      (err: Error) => err.name,
    );
    expect(fromAuth).toBe("AccessDeniedError");
    expect(res.status, res.text).toBe(403);
    expect(cache.served.cache).toBe(before.cache);
    expect(cache.served.auth).toBe(before.auth + 1);
  });

  it("a node identity is refused the feed (PERMISSION_DENIED)", async () => {
    const k = generateEcdsaP256();
    const certPem = await issueTlsClientCert(side.cas.hostCa, {
      publicKey: k.publicKey,
      commonName: "node-7",
      uri: agentIdentityUri("node-7"),
      clock: systemClock,
    });
    const node = createAuthClient({
      address: side.auth.address,
      caPems: [side.hostCaPem],
      certPem,
      keyPem: privateKeyToPem(k.privateKey),
    });
    clients.push(node);
    const code = await new Promise<number>((resolve) => {
      const call = node.WatchInventory({}, agentMetadata("node-7"), { deadline: Date.now() + 10_000 });
      call.on("data", () => resolve(-1));
      call.on("error", (err: ServiceError) => resolve(err.code));
    });
    expect(code).toBe(7); // PERMISSION_DENIED
  });

  it("one proxy identity holds at most MAX_STREAMS_PER_CALLER streams: the oldest are ended", async () => {
    const calls = Array.from({ length: MAX_STREAMS_PER_CALLER + 2 }, () => {
      const call = streamClient.WatchInventory({}, agentMetadata(callerId));
      const state: { code?: number; seen: number } = { seen: 0 };
      call.on("data", () => state.seen++);
      call.on("error", (err: ServiceError) => (state.code = err.code));
      return { call, state };
    });
    try {
      await until(
        "the oldest streams to be ended",
        () => calls.filter((c) => c.state.code !== undefined).length >= 2,
      );
      const ended = calls.filter((c) => c.state.code !== undefined);
      for (const c of ended) expect(c.state.code).toBe(8); // RESOURCE_EXHAUSTED
      expect(calls.length - ended.length).toBeLessThanOrEqual(MAX_STREAMS_PER_CALLER);
      // The newest stream is served (a snapshot first).
      await until("the newest stream's snapshot", () => (calls.at(-1)?.state.seen ?? 0) > 0);
    } finally {
      for (const c of calls) c.call.cancel();
    }
    await until("the copy to answer again", () => cache.fresh());
  });

  it("with the feed down the proxy asks auth, and answers the same", async () => {
    side.auth.service.inventoryFeed.close();
    await until("the copy to stop answering", () => !cache.fresh());
    const before = { ...cache.served };
    const got = await both("dora", { limit: 500 });
    expect(got.proxy).toEqual(got.auth);
    expect(cache.served.auth).toBe(before.auth + 1);
    expect(cache.served.cache).toBe(before.cache);
  });
});
