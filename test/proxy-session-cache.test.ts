// The proxy's session cache (docs/proxy-cache.md) against two real auth replicas on one real
// PostgreSQL schema and two real proxies, one per replica, over HTTPS and gRPC/TLS. Revocations on
// one side reach the other side's proxy through the backend's notifications and WatchSessions;
// with the stream down the proxy checks every session with auth and says 503 when it cannot.
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Metadata, type ServiceError, status } from "@grpc/grpc-js";
import pg from "pg";
import { pino } from "pino";
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openPostgresBackend, type PostgresBackend } from "../core/backend/postgres.ts";
import { PostgresNotifier } from "../core/backend/postgres-notify.ts";
import { CertificateAuthorities } from "../core/ca/authorities.ts";
import { FileCaKeyStore } from "../core/ca/key-store.ts";
import {
  generateEcdsaP256,
  issueTlsClientCert,
  issueTlsServerCert,
  privateKeyToPem,
  serviceIdentityUri,
} from "../core/certs/x509.ts";
import { systemClock } from "../core/clock.ts";
import { type AnyResource, API_VERSION, presets } from "../core/resources/index.ts";
import { MemorySource } from "../core/sources/memory.ts";
import type { SessionEvent__Output } from "../proto/generated/svc/v1/SessionEvent.ts";
import {
  type AuthServiceClient,
  agentMetadata,
  createAuthClient,
  userMetadata,
} from "../server/auth/client.ts";
import { setPassword } from "../server/auth/passwords.ts";
import { type RunningAuthServer, startAuthServer } from "../server/auth/server.ts";
import { hashSecret } from "../server/auth/sessions.ts";
import { proxyDefaults } from "../server/proxy/config.ts";
import { GrpcAuthApi } from "../server/proxy/grpc-auth-api.ts";
import { ProxyLocks } from "../server/proxy/locks.ts";
import { type ProxyServer, startProxyServer } from "../server/proxy/server.ts";
import { SessionCache } from "../server/proxy/session-cache.ts";
import { TrustWatcher } from "../server/trust/watcher.ts";
import { clientCert } from "./auth-fixture.ts";
import { freePort } from "./harness/ports.ts";
import { dropSchema, testPostgresUrl, uniqueSchemaName } from "./harness/postgres.ts";
import { HttpsClient } from "./proxy-https-client.ts";

const HOST = "proxy.session-cache.test";
const ORIGIN = `https://${HOST}`;
const PASSWORD = "one cache, two replicas";
const PROXY_ID = "proxy:session-cache";
const USERS = ["alice", "bob", "carol", "dave", "erin", "frank", "gina"] as const;
const logger = pino({ level: process.env.SVC_TEST_LOG_LEVEL ?? "silent" });
const clock = systemClock;
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Polls `probe` until it is true, at most `ms` (never a timing assertion: only a bound). */
async function until(what: string, probe: () => Promise<boolean> | boolean, ms = 5_000): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await probe()) return;
    await sleep(20);
  }
  throw new Error(`not within ${ms} ms: ${what}`);
}

const user = (name: string, roles: string[]): AnyResource => ({
  apiVersion: API_VERSION,
  kind: "User",
  metadata: { name },
  spec: { roles, traits: { logins: [name] } },
});
const helpdesk = (rules: { resources: string[]; verbs: string[] }[]): AnyResource => ({
  apiVersion: API_VERSION,
  kind: "Role",
  metadata: { name: "helpdesk" },
  spec: { allow: { rules } },
});

interface Replica {
  port: number;
  backend: PostgresBackend;
  server: RunningAuthServer;
}

interface ProxySide {
  proxy: ProxyServer;
  client: HttpsClient;
  cache: SessionCache;
  registry: Registry;
  close(): Promise<void>;
}

let dir = "";
let pgUrl = "";
let schema = "";
let cas: CertificateAuthorities;
let hostCaPem = "";
let authTls: { certPem: string; keyPem: string };
let proxyClientTls: { certPem: string; keyPem: string };
let proxyServerTls: { certPem: string; keyPem: string };
const source = new MemorySource([
  ...presets(),
  ...USERS.map((u) => user(u, u === "gina" ? ["access", "helpdesk"] : ["access"])),
  helpdesk([{ resources: ["nodes"], verbs: ["list"] }]),
]);
const replicas: (Replica | undefined)[] = [];
const proxies: ProxySide[] = [];
const grpcClients: AuthServiceClient[] = [];

async function startReplica(port: number): Promise<Replica> {
  const backend = await openPostgresBackend({ connectionString: pgUrl, schema, clock, sweepIntervalMs: 0 });
  const server = await startAuthServer({
    backend,
    source,
    clock,
    logger,
    keys: {
      userCertSigner: cas.sshUserSigner,
      publicKeys: () => ({
        user_ca_ssh_public_keys: [cas.sshUserCaPublicKey],
        host_ca_ssh_public_keys: [cas.sshHostCaPublicKey],
        host_ca_pems: [hostCaPem],
        spiffe_bundle_json: JSON.stringify(cas.spiffeBundle()),
        spiffe_jwks_json: JSON.stringify(cas.spiffeJwks()),
        app_jwt_jwks_json: JSON.stringify(cas.appJwks()),
        trust_domain: cas.trustDomain,
      }),
    },
    cluster: { clusterName: "session-cache", serverVersion: "0.1.0" },
    tls: { ...authTls, clientCaPems: [hostCaPem] },
    host: "127.0.0.1",
    port,
    relyingParty: { rpId: HOST, rpName: "session-cache", origin: ORIGIN },
  });
  // WatchSessions serves once the replica hears the other's revocations.
  await until("the replica listens for session changes", () => backendListening(server), 10_000);
  return { port, backend, server };
}

async function backendListening(server: RunningAuthServer): Promise<boolean> {
  const c = rawClient(`127.0.0.1:${server.port}`, proxyClientTls);
  try {
    const first = await firstEvent(c, agentMetadata(PROXY_ID));
    return "event" in first;
  } finally {
    c.close();
  }
}

async function stopReplica(i: number): Promise<void> {
  const r = replicas[i];
  replicas[i] = undefined;
  await r?.server.close(500);
  await r?.backend.close();
}

function rawClient(address: string, tls: { certPem: string; keyPem: string }): AuthServiceClient {
  const c = createAuthClient({ address, caPems: [hostCaPem], ...tls });
  grpcClients.push(c);
  return c;
}

/** The first event of a WatchSessions stream, or its error; the stream is cancelled after it. */
function firstEvent(
  client: AuthServiceClient,
  md: Metadata,
  resumeFrom = "",
): Promise<{ event: SessionEvent__Output } | { code: number }> {
  return new Promise((resolve) => {
    const call = client.WatchSessions({ resume_from: resumeFrom }, md, { deadline: Date.now() + 5_000 });
    call.on("data", (event: SessionEvent__Output) => {
      resolve({ event });
      call.cancel();
    });
    call.on("error", (err: ServiceError) => resolve({ code: err.code }));
  });
}

async function startProxySide(replica: Replica): Promise<ProxySide> {
  const address = `127.0.0.1:${replica.port}`;
  const registry = new Registry();
  const api = new GrpcAuthApi({ address, caPems: [hostCaPem], ...proxyClientTls, timeoutMs: 3_000 });
  const stream = rawClient(address, proxyClientTls);
  const metadata = () => agentMetadata(PROXY_ID);
  const cache = new SessionCache({
    connection: () => ({ client: stream, metadata }),
    clock,
    logger,
    metrics: registry,
    backoff: { initialMs: 50, maxMs: 500 },
  });
  cache.start();
  const watcher = new TrustWatcher({
    client: () => stream,
    metadata,
    clock,
    logger,
    backoff: { initialMs: 50, maxMs: 500 },
  });
  const locks = new ProxyLocks({ watcher, clock, logger });
  watcher.start();
  const proxy = await startProxyServer({
    config: {
      ...proxyDefaults,
      listenHost: "127.0.0.1",
      listenPort: 0,
      publicUrl: ORIGIN,
      clusterName: "session-cache",
      serverVersion: "0.1.0",
      clientVersionPolicy: { minimum: "0.1.0", recommended: "0.1.0" },
      oidcIssuerUrl: ORIGIN,
      // Tests log in and check sessions far faster than any person.
      rateLimit: { ...proxyDefaults.rateLimit, perAddress: 1_000, perUsername: 1_000 },
      limits: { ...proxyDefaults.limits, sessionRequestsPerSecond: 1_000 },
    },
    tls: proxyServerTls,
    authApi: locks.guardSessions(cache.guard(api)),
    logger,
    ready: () => true,
    resources: source,
    metrics: registry,
  });
  return {
    proxy,
    client: new HttpsClient(proxy.url, hostCaPem, HOST),
    cache,
    registry,
    async close() {
      await proxy.close();
      await cache.close();
      locks.close();
      await watcher.close();
      api.close();
    },
  };
}

async function counter(p: ProxySide, name: string): Promise<number> {
  const m = await p.registry.getSingleMetric(name)?.get();
  return m?.values.reduce((n, v) => n + v.value, 0) ?? 0;
}

async function login(p: ProxySide, name: string): Promise<string> {
  const res = await p.client.send({
    method: "POST",
    path: "/v1/webapi/login",
    body: { username: name, password: PASSWORD },
  });
  expect(res.status, res.text).toBe(200);
  return (res.json as { session_id: string }).session_id;
}

async function sessionStatus(p: ProxySide, sessionId: string): Promise<number> {
  const res = await p.client.send({
    path: "/v1/webapi/session",
    headers: { authorization: `Bearer ${sessionId}` },
  });
  return res.status;
}

async function session(p: ProxySide, sessionId: string): Promise<{ allowed: string[]; roles: string[] }> {
  const res = await p.client.send({
    path: "/v1/webapi/session",
    headers: { authorization: `Bearer ${sessionId}` },
  });
  expect(res.status, res.text).toBe(200);
  return res.json as { allowed: string[]; roles: string[] };
}

async function logout(p: ProxySide, sessionId: string): Promise<void> {
  const res = await p.client.send({
    method: "POST",
    path: "/v1/webapi/logout",
    headers: { authorization: `Bearer ${sessionId}` },
  });
  expect(res.status, res.text).toBe(200);
}

/** Both proxies answer the session from their caches (a second check is a hit). */
async function cachedOnBoth(sessionId: string): Promise<void> {
  for (const p of proxies) {
    await until("the session stream is live", () => p.cache.live);
    expect(await sessionStatus(p, sessionId)).toBe(200);
    const hits = await counter(p, "svc_proxy_session_cache_hits_total");
    expect(await sessionStatus(p, sessionId)).toBe(200);
    expect(await counter(p, "svc_proxy_session_cache_hits_total")).toBe(hits + 1);
  }
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "svc-session-cache-"));
  pgUrl = testPostgresUrl();
  schema = uniqueSchemaName("session_cache");
  cas = await CertificateAuthorities.loadOrCreate(new FileCaKeyStore(join(dir, "ca")), {
    clusterName: "session-cache",
    trustDomain: "session-cache.local",
    clock,
  });
  hostCaPem = cas.hostCa.certPem;
  const ak = generateEcdsaP256();
  authTls = {
    certPem: await issueTlsServerCert(cas.hostCa, {
      publicKey: ak.publicKey,
      commonName: "auth",
      ips: ["127.0.0.1"],
      clock,
    }),
    keyPem: privateKeyToPem(ak.privateKey),
  };
  const sk = generateEcdsaP256();
  proxyServerTls = {
    certPem: await issueTlsServerCert(cas.hostCa, {
      publicKey: sk.publicKey,
      commonName: HOST,
      dnsNames: [HOST],
      clock,
    }),
    keyPem: privateKeyToPem(sk.privateKey),
  };
  const ck = generateEcdsaP256();
  proxyClientTls = {
    certPem: await issueTlsClientCert(cas.hostCa, {
      publicKey: ck.publicKey,
      commonName: "proxy",
      uri: serviceIdentityUri("proxy", "session-cache"),
      clock,
    }),
    keyPem: privateKeyToPem(ck.privateKey),
  };
  for (let i = 0; i < 2; i++) replicas.push(await startReplica(await freePort()));
  const first = replicas[0];
  if (!first) throw new Error("no replica");
  for (const u of USERS) await setPassword(first.backend, u, PASSWORD);
  for (const r of replicas) if (r) proxies.push(await startProxySide(r));
}, 60_000);

afterAll(async () => {
  for (const p of proxies) await p.close().catch(() => undefined);
  for (const c of grpcClients) c.close();
  for (let i = 0; i < replicas.length; i++) await stopReplica(i).catch(() => undefined);
  if (pgUrl && schema) await dropSchema(pgUrl, schema).catch(() => undefined);
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("proxy session cache, two auth replicas on PostgreSQL", () => {
  it("a logout on proxy A is refused at once on A and soon on proxy B (the other replica)", async () => {
    const [a, b] = proxies as [ProxySide, ProxySide];
    const sid = await login(a, "alice");
    await cachedOnBoth(sid);
    await logout(a, sid);
    // A dropped its entry before answering the logout: refused without waiting for any event.
    expect(await sessionStatus(a, sid)).toBe(401);
    await until("proxy B refuses the logged-out session", async () => (await sessionStatus(b, sid)) === 401);
  });

  it("RevokeUserSessions through replica A ends the user's sessions on proxy B", async () => {
    const [, b] = proxies as [ProxySide, ProxySide];
    const sid = await login(b, "bob");
    await cachedOnBoth(sid);
    const op = rawClient(
      `127.0.0.1:${replicas[0]?.port}`,
      await clientCert(cas.hostCa, { service: "operator", name: "op-0" }),
    );
    const res = await new Promise<{ revoked?: number }>((resolve, reject) =>
      op.RevokeUserSessions({ username: "bob" }, agentMetadata("operator:op-0"), (err, r) =>
        err ? reject(err) : resolve(r as { revoked?: number }),
      ),
    );
    expect(res).toBeDefined();
    for (const p of proxies)
      await until("bob's session refused", async () => (await sessionStatus(p, sid)) === 401);
  });

  it("deleting the user ends its sessions on both proxies", async () => {
    const sid = await login(proxies[0] as ProxySide, "carol");
    await cachedOnBoth(sid);
    await source.remove("User", "carol");
    try {
      for (const p of proxies)
        await until("carol's session refused", async () => (await sessionStatus(p, sid)) === 401);
    } finally {
      await source.apply(user("carol", ["access"]));
    }
  });

  it("a Lock on the user refuses its session on both proxies; lifting it lets it back in", async () => {
    const sid = await login(proxies[0] as ProxySide, "dave");
    await cachedOnBoth(sid);
    await source.apply({
      apiVersion: API_VERSION,
      kind: "Lock",
      metadata: { name: "dave-lock" },
      spec: { target: { user: "dave" }, message: "under review" },
    });
    try {
      for (const p of proxies) await until("dave refused", async () => (await sessionStatus(p, sid)) === 403);
    } finally {
      await source.remove("Lock", "dave-lock");
    }
    for (const p of proxies) await until("dave back", async () => (await sessionStatus(p, sid)) === 200);
  });

  it("a role change is answered from auth on the next check, not from the cache", async () => {
    const sid = await login(proxies[1] as ProxySide, "gina");
    await cachedOnBoth(sid);
    for (const p of proxies) expect((await session(p, sid)).allowed).not.toContain("users:list");
    await source.apply(helpdesk([{ resources: ["nodes", "users"], verbs: ["list"] }]));
    try {
      for (const p of proxies) {
        await until("the new rights show", async () =>
          (await session(p, sid)).allowed.includes("users:list"),
        );
      }
    } finally {
      await source.apply(helpdesk([{ resources: ["nodes"], verbs: ["list"] }]));
    }
  });

  it("a garbage credential never reaches auth, an unknown one is never cached, neither evicts a good session", async () => {
    const a = proxies[0] as ProxySide;
    const sid = await login(a, "erin");
    await cachedOnBoth(sid);
    const misses = await counter(a, "svc_proxy_session_cache_misses_total");
    for (const bad of ["garbage", "x".repeat(43).replace(/x$/, "!"), `${sid}x`, "a".repeat(4000)]) {
      expect(await sessionStatus(a, bad)).toBe(401);
    }
    // Malformed: refused before any call to auth.
    expect(await counter(a, "svc_proxy_session_cache_misses_total")).toBe(misses);
    // Well-formed but unknown: asked once each, never cached, nothing else evicted.
    const size = a.cache.size;
    for (let i = 0; i < 20; i++)
      expect(await sessionStatus(a, randomBytes(32).toString("base64url"))).toBe(401);
    expect(a.cache.size).toBe(size);
    const hits = await counter(a, "svc_proxy_session_cache_hits_total");
    expect(await sessionStatus(a, sid)).toBe(200);
    expect(await counter(a, "svc_proxy_session_cache_hits_total")).toBe(hits + 1);
  });

  it("feed events carry session hashes, never session ids", async () => {
    const b = replicas[1] as Replica;
    const watcherClient = rawClient(`127.0.0.1:${b.port}`, proxyClientTls);
    const events: SessionEvent__Output[] = [];
    const call = watcherClient.WatchSessions({ resume_from: "" }, agentMetadata(PROXY_ID));
    call.on("data", (e: SessionEvent__Output) => events.push(e));
    call.on("error", () => undefined);
    try {
      await until("the stream opened", () => events.length > 0);
      expect(events[0]?.kind).toBe("reset");
      const a = proxies[0] as ProxySide;
      const sid = await login(a, "frank");
      await logout(a, sid);
      await until("the revocation arrived", () => events.some((e) => e.kind === "revoked"));
      const revoked = events.filter((e) => e.kind === "revoked");
      expect(revoked.map((e) => e.session_hash)).toContain(hashSecret(sid));
      expect(JSON.stringify(events)).not.toContain(sid);
      // Positions grow; resuming from one replays what followed it, then a keepalive.
      const from = events[0]?.position ?? "";
      const replay: SessionEvent__Output[] = [];
      await new Promise<void>((resolve) => {
        const again = watcherClient.WatchSessions({ resume_from: from }, agentMetadata(PROXY_ID));
        again.on("data", (e: SessionEvent__Output) => {
          replay.push(e);
          if (e.kind === "keepalive") {
            again.cancel();
            resolve();
          }
        });
        again.on("error", () => resolve());
      });
      expect(replay.map((e) => e.kind)).toEqual([
        ...events
          .slice(1)
          .map((e) => e.kind)
          .filter((k) => k !== "keepalive"),
        "keepalive",
      ]);
      expect(replay.some((e) => e.session_hash === hashSecret(sid))).toBe(true);
    } finally {
      call.cancel();
    }
  });

  it("a position the replica can no longer replay, or another replica's, gets a reset", async () => {
    const [r0, r1] = replicas as [Replica, Replica];
    const feed = r1.server.service.sessionFeed;
    const c1 = rawClient(`127.0.0.1:${r1.port}`, proxyClientTls);
    const c0 = rawClient(`127.0.0.1:${r0.port}`, proxyClientTls);
    const md = () => agentMetadata(PROXY_ID);
    const kind = async (c: AuthServiceClient, from: string) => {
      const got = await firstEvent(c, md(), from);
      return "event" in got ? got.event.kind : `status ${got.code}`;
    };
    const from = feed.position;
    // Nothing happened since: caught up at once.
    expect(await kind(c1, from)).toBe("keepalive");
    expect(await kind(c0, from)).toBe("reset");
    expect(await kind(c1, "0123abcd:1")).toBe("reset");
    expect(await kind(c1, "not a position")).toBe("reset");
    // More changes than the ring holds (8,192): the old position is gone.
    for (let i = 0; i < 8_300; i++) feed.role("no-such-role");
    expect(await kind(c1, from)).toBe("reset");
    expect(await kind(c1, feed.position)).toBe("keepalive");
  });

  it("the feed refuses a node, a user session and an anonymous caller", async () => {
    const address = `127.0.0.1:${replicas[0]?.port}`;
    const node = rawClient(address, await clientCert(cas.hostCa, { agent: "node-1" }));
    expect(await firstEvent(node, agentMetadata("node-1"))).toEqual({ code: status.PERMISSION_DENIED });
    const sid = await login(proxies[0] as ProxySide, "alice");
    const anon = createAuthClient({ address, caPems: [hostCaPem] });
    grpcClients.push(anon);
    expect(await firstEvent(anon, userMetadata(sid))).toEqual({ code: status.PERMISSION_DENIED });
    expect(await firstEvent(anon, new Metadata())).toEqual({ code: status.UNAUTHENTICATED });
  });

  it("replicas that lose their PostgreSQL notifications end their streams, then listen and reset", async () => {
    const [a, b] = proxies as [ProxySide, ProxySide];
    const before = await Promise.all(
      proxies.map((p) => counter(p, "svc_proxy_session_stream_reconnects_total")),
    );
    const listener = new PostgresNotifier(pgUrl, schema).applicationName;
    const admin = new pg.Client({ connectionString: pgUrl });
    await admin.connect();
    try {
      // The listening connection of each replica of this schema (named after the schema).
      const killed = await admin.query(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1 AND pid <> pg_backend_pid()",
        [listener],
      );
      expect(killed.rowCount).toBe(2);
    } finally {
      await admin.end();
    }
    for (const [i, p] of proxies.entries()) {
      await until(
        "the stream was ended and opened again",
        async () =>
          (await counter(p, "svc_proxy_session_stream_reconnects_total")) > (before[i] ?? 0) && p.cache.live,
      );
    }
    // Notifications flow again: a logout on A still reaches B.
    const sid = await login(a, "alice");
    await cachedOnBoth(sid);
    await logout(a, sid);
    await until("proxy B refuses the logged-out session", async () => (await sessionStatus(b, sid)) === 401);
  });

  it("with the stream down every session is checked with auth: 503 while auth is away, then back", async () => {
    const a = proxies[0] as ProxySide;
    const sid = await login(a, "alice");
    await cachedOnBoth(sid);
    const gone = await login(a, "alice");
    await cachedOnBoth(gone);
    await logout(a, gone);
    const port = replicas[0]?.port ?? 0;
    await stopReplica(0);
    await until("proxy A's stream is down", () => !a.cache.live);
    const hits = await counter(a, "svc_proxy_session_cache_hits_total");
    // Known to the cache, yet not answered from it.
    expect(await sessionStatus(a, sid)).toBe(503);
    expect(await sessionStatus(a, randomBytes(32).toString("base64url"))).toBe(503);
    expect(await counter(a, "svc_proxy_session_cache_hits_total")).toBe(hits);
    // A session this proxy saw revoked stays refused: that needs no auth.
    expect(await sessionStatus(a, gone)).toBe(401);
    replicas[0] = await startReplica(port);
    await until("proxy A's stream is live again", () => a.cache.live, 15_000);
    expect(await sessionStatus(a, sid)).toBe(200);
    expect(await sessionStatus(a, sid)).toBe(200);
    expect(await counter(a, "svc_proxy_session_cache_hits_total")).toBe(hits + 2);
  }, 60_000);
});
