// Proxy throughput: GET /v1/webapi/ping (config only) and GET /v1/webapi/session with Bearer
// (one GetSession call to the real auth server over gRPC TLS per request) against a bare fastify
// HTTPS hello route with the same certificate, all measured in the same run with autocannon.
// Processes: this one runs the proxy, the bare baseline (both on its main thread) and autocannon
// (a worker thread); auth runs in a child process. All share the machine's 2 cores, so each row
// also reports CPU per request: this main thread's, and the auth child's where /proc exists.

import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:https";
import { Session } from "node:inspector/promises";
import { join } from "node:path";
import { createInterface } from "node:readline";
import autocannon from "autocannon";
import Fastify from "fastify";
import { presets } from "../core/resources/index.ts";
import { MemorySource } from "../core/sources/memory.ts";
import { proxyDefaults } from "../server/proxy/config.ts";
import { SESSION_MAX_AGE_MS } from "../server/proxy/session-cache.ts";
import { PASSWORD, startProxySide, USERS } from "../test/proxy-fixture.ts";
import { type InventoryProxy, startInventoryProxy } from "./proxy-inventory.ts";
import { type SessionCacheProxy, startSessionCacheProxy } from "./proxy-session-cache.ts";
import type { BenchReport, BenchRow } from "./report.ts";
import { percentile } from "./report.ts";

const DURATION_S = Number(process.env.SVC_BENCH_SECONDS ?? 3);
/**
 * A folder: after the measured rounds, each row is run once more under V8's sampling profiler
 * (this main thread only: the proxies and the baseline, not autocannon's worker) and its profile
 * written there as <row number>.cpuprofile, to be opened in Chrome's DevTools.
 */
const PROFILE_DIR = process.env.SVC_BENCH_PROXY_PROFILE;
const CONNECTIONS = 16;

const ROUNDS = 3;
/** Nodes the auth child registers (bench/proxy-auth-child.ts reads the same variable). */
const NODES = Number(process.env.SVC_BENCH_PROXY_NODES ?? 300);

interface Sample {
  perSecond: number;
  latencies: { p50: number; p99: number };
  /** CPU of this process's main thread (the server under test) per request, µs. */
  serverCpuUs: number;
  /** The kernel's part of it (system time): syscalls, and on loopback the TCP path to the client. */
  serverSysUs: number;
  /** CPU of the auth child process per request, µs (Linux /proc; NaN elsewhere). */
  authCpuUs: number;
}

let authPid: number | undefined;

/** Whole-process CPU time of another process in ms, from /proc (Linux only). */
function processCpuMs(pid: number | undefined): number {
  if (pid === undefined) return Number.NaN;
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
    // utime and stime are fields 14 and 15 of stat, in clock ticks (100 per second on Linux).
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return Number.NaN;
  }
}

async function sample(url: string, headers: Record<string, string>, seconds: number): Promise<Sample> {
  const cpu0 = process.threadCpuUsage();
  const auth0 = processCpuMs(authPid);
  const r = await autocannon({
    url,
    headers,
    connections: CONNECTIONS,
    servername: "proxy.svc.test",
    workers: 1,
    duration: seconds,
  });
  const failures = r.non2xx + r.errors + r.timeouts;
  if (failures > 0) throw new Error(`${url}: ${failures} failed requests`);
  const cpu = process.threadCpuUsage(cpu0);
  const n = Math.max(1, r.requests.total);
  return {
    perSecond: r.requests.average,
    latencies: { p50: r.latency.p50, p99: r.latency.p99 },
    serverCpuUs: (cpu.user + cpu.system) / n,
    serverSysUs: cpu.system / n,
    authCpuUs: ((processCpuMs(authPid) - auth0) * 1000) / n,
  };
}

interface Target {
  name: string;
  url: string;
  headers: Record<string, string>;
  samples: Sample[];
}

/** Rounds interleave the targets so a shared machine's load drifts over all of them alike. */
async function measureAll(
  targets: Target[],
): Promise<Array<BenchRow & { perSecond: number; cpuUs: number }>> {
  for (const t of targets) await sample(t.url, t.headers, 1); // warm-up: JIT, TLS, gRPC channel
  for (let round = 0; round < ROUNDS; round++) {
    for (const t of targets) t.samples.push(await sample(t.url, t.headers, DURATION_S));
  }
  if (PROFILE_DIR) await profileEach(targets, PROFILE_DIR);
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;
  return targets.map((t) => ({
    name: t.name,
    perSecond: median(t.samples.map((x) => x.perSecond)),
    cpuUs: median(t.samples.map((x) => x.serverCpuUs)),
    unit: "req",
    p50Ms: median(t.samples.map((x) => x.latencies.p50)),
    p99Ms: median(t.samples.map((x) => x.latencies.p99)),
    note: `median of ${ROUNDS}; server main thread ${median(t.samples.map((x) => x.serverCpuUs)).toFixed(0)} us CPU/req (${median(t.samples.map((x) => x.serverSysUs)).toFixed(0)} in the kernel)${cpuOfAuth(t)}`,
  }));
}

/** One more run per target with the profiler on; not counted in the rows. */
async function profileEach(targets: Target[], dir: string): Promise<void> {
  mkdirSync(dir, { recursive: true });
  const session = new Session();
  session.connect();
  try {
    await session.post("Profiler.enable");
    await session.post("Profiler.setSamplingInterval", { interval: 100 });
    for (const [i, t] of targets.entries()) {
      await session.post("Profiler.start");
      await sample(t.url, t.headers, DURATION_S);
      const { profile } = await session.post("Profiler.stop");
      writeFileSync(join(dir, `${i + 1}.cpuprofile`), JSON.stringify(profile));
    }
  } finally {
    session.disconnect();
  }
}

function cpuOfAuth(t: Target): string {
  const xs = t.samples.map((x) => x.authCpuUs).filter((x) => Number.isFinite(x) && x > 5);
  if (xs.length === 0) return "";
  return `, auth process ${[...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]?.toFixed(0)} us CPU/req`;
}

interface AuthChildInfo {
  address: string;
  hostCaPem: string;
  proxyClient: { certPem: string; keyPem: string };
  proxyServer: { certPem: string; keyPem: string };
}

/** The upper bound of the session route: GetSession straight over gRPC, same concurrency. */
async function directGetSession(
  call: () => Promise<unknown>,
  seconds: number,
): Promise<BenchRow & { perSecond: number }> {
  const latencies: number[] = [];
  const end = performance.now() + seconds * 1000;
  const worker = async () => {
    while (performance.now() < end) {
      const t = performance.now();
      await call();
      latencies.push(performance.now() - t);
    }
  };
  const t0 = performance.now();
  await Promise.all(Array.from({ length: CONNECTIONS }, worker));
  return {
    name: "auth GetSession direct over gRPC (proxy's client)",
    perSecond: latencies.length / ((performance.now() - t0) / 1000),
    unit: "call",
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    note: "upper bound for /session",
  };
}

export default async function proxyBench(): Promise<BenchReport> {
  const child = spawn(process.execPath, [join(import.meta.dirname, "proxy-auth-child.ts")], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  const stopChild = async () => {
    if (child.exitCode !== null) return;
    child.stdin.end();
    const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
    await once(child, "exit");
    clearTimeout(timer);
  };
  authPid = child.pid;
  let info: AuthChildInfo;
  try {
    const lines = createInterface({ input: child.stdout });
    const first = await Promise.race([
      once(lines, "line").then(([l]) => String(l)),
      once(child, "exit").then(() => {
        throw new Error("auth child exited before it was ready");
      }),
    ]);
    info = JSON.parse(first) as AuthChildInfo;
  } catch (err) {
    await stopChild();
    throw err;
  }
  const fx = await startProxySide({
    authAddress: info.address,
    hostCaPem: info.hostCaPem,
    proxyClient: info.proxyClient,
    proxyServer: info.proxyServer,
    resources: new MemorySource(presets()),
    overrides: {
      rateLimit: { perAddress: 100, perUsername: 100, windowMs: 60_000 },
      // The benchmark measures throughput with one session: no per-session budget.
      limits: { ...proxyDefaults.limits, sessionRequestsPerSecond: 1e6, sessionRequestBurst: 1e6 },
    },
  }).catch(async (err: unknown) => {
    await stopChild();
    throw err;
  });
  // The baseline shares the proxy's certificate and TLS settings.
  const bare = Fastify({
    serverFactory: (handler) =>
      createServer(
        { cert: info.proxyServer.certPem, key: info.proxyServer.keyPem, minVersion: "TLSv1.2" },
        handler,
      ),
  });
  bare.get("/hello", async () => ({ hello: "world" }));
  // Payload baselines: the same JSON bytes the proxy answers on the session, nodes and roles
  // rows, served as they are (no checks, no security headers): what the proxy's own work costs
  // on each route, the payload aside.
  const sameBody = { session: "{}", nodes: "{}", roles: "{}" };
  for (const name of ["session", "nodes", "roles"] as const) {
    bare.get(`/${name}`, async (_request, reply) =>
      reply.type("application/json; charset=utf-8").send(sameBody[name]),
    );
  }
  await bare.listen({ host: "127.0.0.1", port: 0 });
  let inventory: InventoryProxy | undefined;
  let cached: SessionCacheProxy | undefined;
  const started = performance.now();
  try {
    // The cached session row's proxy: sessions answered from the WatchSessions cache (issue 17).
    cached = await startSessionCacheProxy({
      authAddress: info.address,
      hostCaPem: info.hostCaPem,
      proxyClient: info.proxyClient,
      proxyServer: info.proxyServer,
      config: fx.config,
      resources: new MemorySource(presets()),
    });
    // The nodes row's proxy: the inventory copy answers ListNodes (issue 17; docs/proxy-cache.md).
    inventory = await startInventoryProxy({
      authAddress: info.address,
      hostCaPem: info.hostCaPem,
      proxyClient: info.proxyClient,
      proxyServer: info.proxyServer,
      config: fx.config,
      resources: new MemorySource(presets()),
    });
    const login = await fx.client.send({
      method: "POST",
      path: "/v1/webapi/login",
      body: { username: USERS.user, password: PASSWORD },
    });
    if (login.status !== 200) throw new Error(`login failed: ${login.status} ${login.text}`);
    const sessionId = (login.json as { session_id: string }).session_id;
    const address = bare.server.address();
    if (address === null || typeof address === "string") throw new Error("baseline did not bind");

    const nodesPath = "/v1/webapi/nodes?limit=50";
    const page = await fx.client.send({ path: nodesPath, headers: { authorization: `Bearer ${sessionId}` } });
    if (page.status !== 200) throw new Error(`nodes page: ${page.status} ${page.text}`);
    sameBody.nodes = page.text;
    const sessionPage = await fx.client.send({
      path: "/v1/webapi/session",
      headers: { authorization: `Bearer ${sessionId}` },
    });
    if (sessionPage.status !== 200) throw new Error(`session: ${sessionPage.status} ${sessionPage.text}`);
    sameBody.session = sessionPage.text;
    // The roles row: an admin's session (roles:list), answered by the same copy.
    const adminLogin = await fx.client.send({
      method: "POST",
      path: "/v1/webapi/login",
      body: { username: USERS.admin, password: PASSWORD },
    });
    if (adminLogin.status !== 200) throw new Error(`admin login failed: ${adminLogin.status}`);
    const adminSession = (adminLogin.json as { session_id: string }).session_id;
    const rolesPage = await fx.client.send({
      path: "/v1/webapi/roles",
      headers: { authorization: `Bearer ${adminSession}` },
    });
    if (rolesPage.status !== 200) throw new Error(`roles: ${rolesPage.status} ${rolesPage.text}`);
    sameBody.roles = rolesPage.text;
    const [
      base,
      ping,
      session,
      sessionCached,
      nodesAuth,
      nodesCopy,
      bareNodes,
      rolesCopy,
      sessionFull,
      bareSession,
      bareRoles,
    ] = await measureAll([
      {
        name: "bare fastify HTTPS hello",
        url: `https://127.0.0.1:${address.port}/hello`,
        headers: {},
        samples: [],
      },
      {
        name: "proxy GET /v1/webapi/ping",
        url: `${fx.proxy.url}/v1/webapi/ping`,
        headers: {},
        samples: [],
      },
      {
        name: "proxy GET /v1/webapi/session (Bearer)",
        url: `${fx.proxy.url}/v1/webapi/session`,
        headers: { authorization: `Bearer ${sessionId}` },
        samples: [],
      },
      {
        name: "proxy GET /v1/webapi/session (Bearer), session cache",
        url: `${cached.url}/v1/webapi/session`,
        headers: { authorization: `Bearer ${sessionId}` },
        samples: [],
      },
      {
        name: `proxy GET ${nodesPath} (Bearer, ${NODES} nodes), ListNodes by auth`,
        url: `${fx.proxy.url}${nodesPath}`,
        headers: { authorization: `Bearer ${sessionId}` },
        samples: [],
      },
      {
        name: `proxy GET ${nodesPath} (Bearer, ${NODES} nodes), inventory copy + session cache`,
        url: `${inventory.url}${nodesPath}`,
        headers: { authorization: `Bearer ${sessionId}` },
        samples: [],
      },
      {
        name: `bare fastify HTTPS, the same nodes page as static JSON (${sameBody.nodes.length} bytes)`,
        url: `https://127.0.0.1:${address.port}/nodes`,
        headers: {},
        samples: [],
      },
      {
        name: "proxy GET /v1/webapi/roles (admin Bearer), inventory copy + session cache",
        url: `${inventory.url}/v1/webapi/roles`,
        headers: { authorization: `Bearer ${adminSession}` },
        samples: [],
      },
      {
        // The session route through everything svcd proxy puts in front of auth.
        name: "proxy GET /v1/webapi/session (Bearer), as svcd proxy (copy, locks, session cache)",
        url: `${inventory.url}/v1/webapi/session`,
        headers: { authorization: `Bearer ${sessionId}` },
        samples: [],
      },
      {
        name: `bare fastify HTTPS, the same session body as static JSON (${sameBody.session.length} bytes)`,
        url: `https://127.0.0.1:${address.port}/session`,
        headers: {},
        samples: [],
      },
      {
        name: `bare fastify HTTPS, the same roles page as static JSON (${sameBody.roles.length} bytes)`,
        url: `https://127.0.0.1:${address.port}/roles`,
        headers: {},
        samples: [],
      },
    ]);
    if (
      !base ||
      !ping ||
      !session ||
      !sessionCached ||
      !nodesAuth ||
      !nodesCopy ||
      !bareNodes ||
      !rolesCopy ||
      !sessionFull ||
      !bareSession ||
      !bareRoles
    )
      throw new Error("missing measurement");
    // The copy row measures the copy: not one ListNodes may have gone to auth.
    if (inventory.cache.served.auth > 0 || inventory.cache.served.cache === 0)
      throw new Error(`the inventory copy did not answer: ${JSON.stringify(inventory.cache.served)}`);
    // The cached row measures the cache: the first requests (at most one per connection) fill it,
    // and again each time the answer reaches its maximum age; every other request is a hit.
    // So do the rows as svcd proxy (session, nodes and roles through the inventory proxy's cache).
    const refills = 1 + Math.ceil((performance.now() - started) / SESSION_MAX_AGE_MS);
    // Two sessions (user and admin) on the inventory proxy: at most twice the fills there.
    for (const [served, sessions] of [
      [await cached.served(), 1],
      [await inventory.sessionsServed(), 2],
    ] as const) {
      if (served.misses > sessions * CONNECTIONS * refills || served.hits === 0)
        throw new Error(`the session cache did not answer: ${JSON.stringify(served)}`);
    }
    const direct = await directGetSession(() => fx.authApi.getSession(sessionId), DURATION_S);
    return {
      title: `proxy web API (${CONNECTIONS} connections, ${ROUNDS}x${DURATION_S}s interleaved, autocannon in a worker thread; auth in its own process)`,
      rows: [
        base,
        ping,
        session,
        sessionCached,
        nodesAuth,
        nodesCopy,
        bareNodes,
        rolesCopy,
        sessionFull,
        bareSession,
        bareRoles,
        direct,
      ],
      ratios: [
        { name: "ping / bare hello", ratio: ping.perSecond / base.perSecond, goal: 0.8 },
        {
          name: "session (Bearer, session cache) / bare hello",
          ratio: sessionCached.perSecond / base.perSecond,
          goal: 0.5,
        },
        {
          name: "session (Bearer, as svcd proxy) / bare hello",
          ratio: sessionFull.perSecond / base.perSecond,
          goal: 0.5,
        },
        {
          name: "session (Bearer, GetSession per request) / bare hello",
          ratio: session.perSecond / base.perSecond,
        },
        {
          name: "nodes (inventory copy) / bare hello",
          ratio: nodesCopy.perSecond / base.perSecond,
          goal: 0.5,
        },
        {
          name: "roles (admin, inventory copy) / bare hello",
          ratio: rolesCopy.perSecond / base.perSecond,
          goal: 0.5,
        },
        {
          name: "nodes (inventory copy) / nodes (ListNodes by auth)",
          ratio: nodesCopy.perSecond / nodesAuth.perSecond,
        },
        // Where the server's thread is the limit, req/s goes as 1 / CPU per request. On a loaded
        // machine autocannon and other processes limit the baseline too, and the req/s ratios
        // swing far more than these do.
        // Each authenticated GET against bare hello and against bare fastify sending the same
        // body (what the proxy's own work costs, payload aside), by req/s and by CPU.
        ...(
          [
            ["session (Bearer, as svcd proxy)", sessionFull, bareSession],
            ["nodes (inventory copy)", nodesCopy, bareNodes],
            ["roles (admin, inventory copy)", rolesCopy, bareRoles],
          ] as const
        ).flatMap(([name, row, same]) => [
          { name: `CPU/req: bare hello / ${name} (info)`, ratio: base.cpuUs / row.cpuUs },
          { name: `${name} / bare fastify same body (info)`, ratio: row.perSecond / same.perSecond },
          { name: `CPU/req: bare fastify same body / ${name} (info)`, ratio: same.cpuUs / row.cpuUs },
        ]),
        { name: "session (Bearer) / direct GetSession", ratio: session.perSecond / direct.perSecond },
        // What the gRPC hop alone allows: GetSession straight from this process, no HTTP at all.
        { name: "direct GetSession / bare hello (info: ceiling)", ratio: direct.perSecond / base.perSecond },
      ],
    };
  } finally {
    await inventory?.close();
    await cached?.close();
    await bare.close();
    await fx.close();
    await stopChild();
  }
}
