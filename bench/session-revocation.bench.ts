// Session revocation across replicas (issue 17, docs/proxy-cache.md): two `svcd auth` processes
// on one PostgreSQL schema and two proxies with session caches, proxy A on auth A and proxy B on
// auth B. Each round logs in on A, lets both proxies cache the session (a second check is a cache
// hit on each), logs out on A, then asks both proxies back to back until each refuses the
// session, both timed from the moment the logout is sent. Baseline: the refusal on A (its own
// logout, marked revoked there before answering: the logout plus one request). Measured: the refusal on B (auth A -> PostgreSQL NOTIFY -> auth B -> WatchSessions
// -> proxy B). The proxies run in this process, both the same way; auths are real processes.
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { Agent, request } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { Registry } from "prom-client";
import { stringify } from "yaml";
import {
  generateEcdsaP256,
  issueTlsClientCert,
  issueTlsServerCert,
  privateKeyToPem,
  serviceIdentityUri,
} from "../core/certs/x509.ts";
import { systemClock } from "../core/clock.ts";
import { API_VERSION } from "../core/resources/index.ts";
import { MemorySource } from "../core/sources/memory.ts";
import { agentMetadata, createAuthClient } from "../server/auth/client.ts";
import { proxyDefaults } from "../server/proxy/config.ts";
import { GrpcAuthApi } from "../server/proxy/grpc-auth-api.ts";
import { startProxyServer } from "../server/proxy/server.ts";
import { SessionCache } from "../server/proxy/session-cache.ts";
import { dropSchema, PG_URL_ENV, startPostgres, uniqueSchemaName } from "../test/harness/postgres.ts";
import {
  until as poll,
  type SvcdProcess,
  sharedClusterCas,
  spawnPostgresAuth,
  svcdReady,
} from "../test/harness/svcd.ts";
import { HttpsClient } from "../test/proxy-https-client.ts";
import type { BenchReport } from "./report.ts";
import { percentile } from "./report.ts";

const ROUNDS = Number(process.env.SVC_BENCH_REVOCATIONS ?? 200);
const GOAL_P99_MS = 100;
const CLUSTER = "revocation";
const HOST = "proxy.revocation.test";
const USER = "dana";
const PASSWORD = "revoked everywhere at once";
const until = (what: string, probe: () => Promise<boolean> | boolean, ms = 90_000) =>
  poll(what, probe, ms, 100);

export default async function sessionRevocationBench(): Promise<BenchReport> {
  const pg = process.env[PG_URL_ENV] ? undefined : await startPostgres();
  const pgUrl = process.env[PG_URL_ENV] ?? pg?.url ?? "";
  const schema = uniqueSchemaName("revocation_bench");
  const dir = await mkdtemp(join(tmpdir(), "svc-revocation-bench-"));
  const auths: SvcdProcess[] = [];
  const closers: Array<() => Promise<void> | void> = [];
  try {
    await mkdir(join(dir, "manifests"));
    await writeFile(
      join(dir, "manifests", "dana.yaml"),
      [
        { kind: "Role", metadata: { name: "dev" }, spec: { allow: { logins: ["dana"] } } },
        { kind: "User", metadata: { name: USER }, spec: { roles: ["dev"] } },
      ]
        .map((o) => stringify({ apiVersion: API_VERSION, ...o }))
        .join("---\n"),
    );
    const startAuth = async (name: string): Promise<SvcdProcess> => {
      const p = await spawnPostgresAuth({
        dir,
        name,
        cluster: CLUSTER,
        pgUrl,
        schema,
        publicAddr: `${HOST}:443`,
        oidcIssuerUrl: `https://${HOST}`,
        logLevel: "warn",
      });
      auths.push(p);
      return p;
    };
    // One after the other: the first creates the CAs, the second loads them.
    for (const name of ["auth-a", "auth-b"]) await svcdReady(await startAuth(name));
    const cas = await sharedClusterCas({
      caDir: join(dir, "ca"),
      cluster: CLUSTER,
      pgUrl,
      schema,
      user: USER,
      password: PASSWORD,
    });
    const hostCaPem = cas.hostCa.certPem;
    const sk = generateEcdsaP256();
    const serverTls = {
      certPem: await issueTlsServerCert(cas.hostCa, {
        publicKey: sk.publicKey,
        commonName: HOST,
        dnsNames: [HOST],
        clock: systemClock,
      }),
      keyPem: privateKeyToPem(sk.privateKey),
    };
    const ck = generateEcdsaP256();
    const clientTls = {
      certPem: await issueTlsClientCert(cas.hostCa, {
        publicKey: ck.publicKey,
        commonName: "proxy",
        uri: serviceIdentityUri("proxy", CLUSTER),
        clock: systemClock,
      }),
      keyPem: privateKeyToPem(ck.privateKey),
    };
    const logger = pino({ level: "silent" });
    const startProxy = async (auth: SvcdProcess) => {
      const grpc = {
        address: `127.0.0.1:${auth.port}`,
        caPems: [hostCaPem],
        serverName: "localhost",
        ...clientTls,
      };
      const api = new GrpcAuthApi(grpc);
      const client = createAuthClient(grpc);
      const registry = new Registry();
      const cache = new SessionCache({
        connection: () => ({ client, metadata: () => agentMetadata(`proxy:${CLUSTER}`) }),
        clock: systemClock,
        logger,
        metrics: registry,
      });
      cache.start();
      const proxy = await startProxyServer({
        config: {
          ...proxyDefaults,
          listenHost: "127.0.0.1",
          listenPort: 0,
          publicUrl: `https://${HOST}`,
          clusterName: CLUSTER,
          serverVersion: "0.1.0",
          clientVersionPolicy: { minimum: "0.1.0", recommended: "0.1.0" },
          oidcIssuerUrl: `https://${HOST}`,
          rateLimit: { perAddress: 100_000, perUsername: 100_000, windowMs: 60_000 },
          limits: { ...proxyDefaults.limits, sessionRequestsPerSecond: 1e6, sessionRequestBurst: 1e6 },
        },
        tls: serverTls,
        authApi: cache.guard(api),
        logger,
        ready: () => true,
        resources: new MemorySource([]),
        metrics: registry,
      });
      closers.push(async () => {
        await proxy.close();
        await cache.close();
        api.close();
        client.close();
      });
      await until("the session stream is live", () => cache.live, 30_000);
      // Session checks on a kept-alive connection: a request costs ~1 ms, not a TLS handshake.
      const agent = new Agent({ keepAlive: true, maxSockets: 2, ca: hostCaPem, servername: HOST });
      closers.push(() => agent.destroy());
      return { http: new HttpsClient(proxy.url, hostCaPem, HOST), url: proxy.url, agent, cache, registry };
    };
    const [authA, authB] = auths as [SvcdProcess, SvcdProcess];
    const a = await startProxy(authA);
    const b = await startProxy(authB);
    const hits = async (p: { registry: Registry }) =>
      ((await p.registry.getSingleMetric("svc_proxy_session_cache_hits_total")?.get())?.values ?? []).reduce(
        (n, v) => n + v.value,
        0,
      );
    const send = (p: { url: string; agent: Agent }, method: "GET" | "POST", path: string, sid: string) =>
      new Promise<number>((resolve, reject) => {
        request(
          new URL(path, p.url),
          { method, agent: p.agent, headers: { authorization: `Bearer ${sid}` } },
          (res) => {
            res.resume();
            res.on("end", () => resolve(res.statusCode ?? 0));
          },
        )
          .on("error", reject)
          .end();
      });
    const status = (p: { url: string; agent: Agent }, sid: string) =>
      send(p, "GET", "/v1/webapi/session", sid);

    const onA: number[] = [];
    const onB: number[] = [];
    const polls: number[] = [];
    const logouts: number[] = [];
    /** how much later B refused than A, per logout: the propagation to the other replica */
    const extra: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const login = await a.http.send({
        method: "POST",
        path: "/v1/webapi/login",
        body: { username: USER, password: PASSWORD },
      });
      if (login.status !== 200) throw new Error(`login: ${login.status} ${login.text}`);
      const sid = (login.json as { session_id: string }).session_id;
      for (const p of [a, b]) {
        if (!p.cache.live) await until("the session stream is live", () => p.cache.live, 10_000);
        const before = await hits(p);
        if ((await status(p, sid)) !== 200 || (await status(p, sid)) !== 200)
          throw new Error("session not valid");
        if ((await hits(p)) <= before) throw new Error("the session was not answered from the cache");
      }
      // The clock starts when the logout is sent: B may hear of it before A has answered.
      const t0 = performance.now();
      const out = await send(a, "POST", "/v1/webapi/logout", sid);
      if (out !== 200) throw new Error(`logout: ${out}`);
      logouts.push(performance.now() - t0);
      // Both asked at once, each back to back until refused: A is the baseline of one round trip.
      const refused = async (p: { url: string; agent: Agent }): Promise<{ ms: number; n: number }> => {
        for (let n = 1; ; n++) {
          const s = await status(p, sid);
          if (s === 401) return { ms: performance.now() - t0, n };
          if (s !== 200) throw new Error(`unexpected ${s}`);
          if (performance.now() - t0 > 10_000) throw new Error("proxy B never refused the session");
        }
      };
      const [ra, rb] = await Promise.all([refused(a), refused(b)]);
      if (ra.n !== 1) throw new Error("proxy A answered a logged-out session");
      onA.push(ra.ms);
      onB.push(rb.ms);
      extra.push(Math.max(0, rb.ms - ra.ms));
      polls.push(rb.n);
    }
    const row = (name: string, xs: number[], note: string) => ({
      name,
      p50Ms: percentile(xs, 50),
      p99Ms: percentile(xs, 99),
      note,
    });
    return {
      title: `session revocation across replicas (${ROUNDS} logouts on proxy A; 2 svcd auth on PostgreSQL, 2 proxies with session caches)`,
      rows: [
        row(
          "logout round trip on proxy A",
          logouts,
          "POST /v1/webapi/logout, answered after auth A deleted it",
        ),
        row("refused on proxy A (the one logged out on)", onA, "baseline: logout, then the first request"),
        row(
          "refused on proxy B (other proxy, other auth)",
          onB,
          `requests until refused: p50 ${percentile(polls, 50)}, max ${Math.max(...polls)}; max ${Math.max(...onB).toFixed(1)} ms`,
        ),
        row("B later than A, per logout", extra, `max ${Math.max(...extra).toFixed(1)} ms`),
      ],
      ratios: [
        { name: "B / A refusal, p50", ratio: percentile(onB, 50) / percentile(onA, 50) },
        { name: "B / A refusal, p99", ratio: percentile(onB, 99) / percentile(onA, 99) },
        {
          name: `(B later than A) p99 / ${GOAL_P99_MS} ms goal`,
          ratio: percentile(extra, 99) / GOAL_P99_MS,
          goal: 1,
          lowerIsBetter: true,
        },
      ],
    };
  } finally {
    for (const c of closers.reverse()) await Promise.resolve(c()).catch(() => undefined);
    for (const p of auths) if (p.child.exitCode === null) p.child.kill("SIGTERM");
    await Promise.all(
      auths.map(async (p) => {
        const t = setTimeout(() => p.child.kill("SIGKILL"), 10_000);
        await p.exited;
        clearTimeout(t);
      }),
    );
    await dropSchema(pgUrl, schema).catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
    await pg?.stop();
  }
}
