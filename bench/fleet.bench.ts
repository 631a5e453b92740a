// Fleet scale: 10,000 agents heartbeating into one auth, and the node list with 10,000 nodes.
// Auth runs in its own process (bench/fleet-auth-child.ts: SQLite file, node join wired in) and
// registers every agent through its own join code. Four client processes (bench/fleet-agents.ts)
// hold the agents: one gRPC channel and one TLS connection per agent, each with its own client
// certificate, as auth identifies an agent by its connection's certificate. Phases, same run:
//  1. baseline: every agent sends a health check (an RPC auth answers without any work of ours)
//     once per heartbeat interval, over the same connections;
//  2. every agent sends Heartbeat once per interval (the agent's default, 30 s; auth is given the
//     same interval), one interval of warm-up (first records written), then two measured
//     intervals (a skipped and a written record per agent, as a steady fleet alternates them);
//  3. heartbeats go on while the proxy (this process, attached to auth since before phase 1, as
//     in a deployment, with the inventory copy svcd proxy keeps) serves GET /v1/webapi/nodes
//     (default page, and a label-filtered one) to autocannon, against a bare fastify HTTPS hello;
//     also the same route answered by auth's ListNodes (what happens while the copy is not in
//     sync), through the test fixture's proxy.
// Auth CPU is read from /proc/<pid>/stat over each window (Linux). SVC_BENCH_FLEET_AGENTS and
// SVC_BENCH_FLEET_INTERVAL (seconds) shrink the run for a quick look; SVC_BENCH_FLEET_PROFILE=<dir>
// writes auth's CPU profile of the measured heartbeat window there.
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { readdirSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface, type Interface } from "node:readline";
import autocannon from "autocannon";
import Fastify from "fastify";
import { MemorySource } from "../core/sources/memory.ts";
import { HEARTBEAT_INTERVAL_SECONDS } from "../server/auth/nodes.ts";
import { proxyDefaults } from "../server/proxy/config.ts";
import { PASSWORD, testResources } from "../test/auth-fixture.ts";
import { PUBLIC_HOST, startProxySide } from "../test/proxy-fixture.ts";
import { HttpsClient } from "../test/proxy-https-client.ts";
import { processCpuMs } from "./proc-cpu.ts";
import { startInventoryProxy } from "./proxy-inventory.ts";
import type { BenchRatio, BenchReport, BenchRow } from "./report.ts";
import { formatReport, percentile } from "./report.ts";

const AGENTS = Number(process.env.SVC_BENCH_FLEET_AGENTS ?? 10_000);
const INTERVAL_S = Number(process.env.SVC_BENCH_FLEET_INTERVAL ?? HEARTBEAT_INTERVAL_SECONDS);
const PROCESSES = 4;
const HEARTBEAT_WINDOW_INTERVALS = 2;
const LIST_SECONDS = 5;
const LIST_CONNECTIONS = 8;
const CPU_GOAL = 0.2;
const LIST_GOAL_MS = 100;

interface Lines {
  child: ChildProcess;
  lines: Interface;
  next(): Promise<string>;
}

function linesOf(child: ChildProcess, what: string): Lines {
  if (!child.stdout) throw new Error(`${what} has no stdout`);
  const lines = createInterface({ input: child.stdout });
  const queue: string[] = [];
  const waiters: Array<{ resolve: (l: string) => void; reject: (e: Error) => void }> = [];
  lines.on("line", (l) => {
    const w = waiters.shift();
    if (w) w.resolve(l);
    else queue.push(l);
  });
  child.once("exit", (code) => {
    for (const w of waiters.splice(0)) w.reject(new Error(`${what} exited (${code})`));
  });
  return {
    child,
    lines,
    next: () => {
      const l = queue.shift();
      if (l !== undefined) return Promise.resolve(l);
      if (child.exitCode !== null) return Promise.reject(new Error(`${what} exited (${child.exitCode})`));
      return new Promise((resolve, reject) => waiters.push({ resolve, reject }));
    },
  };
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.stdin?.end();
  const timer = setTimeout(() => child.kill("SIGKILL"), 15_000);
  await once(child, "exit");
  clearTimeout(timer);
}

interface AuthInfo {
  address: string;
  serverName: string;
  hostCaPem: string;
  agentsFile: string;
  joinMs: number;
  proxyClient: { certPem: string; keyPem: string };
  proxyServer: { certPem: string; keyPem: string };
}

interface Collected {
  ms: number[];
  errors: number;
  firstError: string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Sends a command to every client process and waits for each one's answer. */
async function all<T>(clients: Lines[], cmd: object): Promise<T[]> {
  for (const c of clients) c.child.stdin?.write(`${JSON.stringify(cmd)}\n`);
  const answers = await Promise.all(clients.map((c) => c.next()));
  return answers.map((a) => {
    const v = JSON.parse(a) as T & { error?: string };
    if (v.error) throw new Error(v.error);
    return v;
  });
}

interface Window {
  /** how long it was measured */
  seconds: number;
  calls: number;
  errors: number;
  firstError: string;
  p50: number;
  p99: number;
  /** auth CPU as a share of one core */
  cpuShare: number;
  /** auth CPU per call, µs */
  cpuPerCallUs: number;
}

/** One measured window: samples and auth CPU over `seconds`. */
async function measure(clients: Lines[], authPid: number | undefined, seconds: number): Promise<Window> {
  await all(clients, { cmd: "mark" });
  const cpu0 = processCpuMs(authPid);
  const t0 = performance.now();
  await sleep(seconds * 1000);
  const cpuMs = processCpuMs(authPid) - cpu0;
  const wallMs = performance.now() - t0;
  const got = await all<Collected>(clients, { cmd: "collect" });
  const ms = got.flatMap((g) => g.ms);
  return {
    seconds,
    calls: ms.length,
    errors: got.reduce((s, g) => s + g.errors, 0),
    firstError: got.find((g) => g.firstError)?.firstError ?? "",
    p50: percentile(ms, 50),
    p99: percentile(ms, 99),
    cpuShare: cpuMs / wallMs,
    cpuPerCallUs: (cpuMs * 1000) / Math.max(1, ms.length),
  };
}

function windowRow(name: string, w: Window): BenchRow {
  return {
    name,
    perSecond: w.calls / w.seconds,
    unit: "call",
    p50Ms: w.p50,
    p99Ms: w.p99,
    note: `auth ${(w.cpuShare * 100).toFixed(1)} % of one core, ${w.cpuPerCallUs.toFixed(0)} us CPU/call${w.errors ? `; ${w.errors} errors: ${w.firstError}` : ""}`,
  };
}

async function cannon(
  url: string,
  headers: Record<string, string>,
): Promise<BenchRow & { perSecond: number }> {
  const r = await autocannon({
    url,
    headers,
    connections: LIST_CONNECTIONS,
    servername: "proxy.svc.test",
    workers: 1,
    duration: LIST_SECONDS,
  });
  const failures = r.non2xx + r.errors + r.timeouts;
  if (failures > 0) throw new Error(`${url}: ${failures} failed requests`);
  return {
    name: url,
    perSecond: r.requests.average,
    unit: "req",
    p50Ms: r.latency.p50,
    p99Ms: r.latency.p99,
  };
}

export default async function fleetBench(): Promise<BenchReport> {
  const dir = await mkdtemp(join(tmpdir(), "svc-fleet-bench-"));
  const children: ChildProcess[] = [];
  const cleanups: Array<() => Promise<void>> = [];
  try {
    const authChild = spawn(process.execPath, [join(import.meta.dirname, "fleet-auth-child.ts")], {
      stdio: ["pipe", "pipe", "inherit"],
      // Auth's interval is the agents' own, so the record-write skip window (1.5 intervals) scales
      // with it: a shortened run writes every other beat, as a fleet at the default interval does.
      env: {
        ...process.env,
        FLEET_AGENTS: String(AGENTS),
        FLEET_DIR: dir,
        FLEET_INTERVAL: String(INTERVAL_S),
      },
    });
    children.push(authChild);
    const info = JSON.parse(await linesOf(authChild, "auth").next()) as AuthInfo;
    const caFile = join(dir, "ca.pem");
    await writeFile(caFile, info.hostCaPem);

    const clients: Lines[] = [];
    const per = Math.ceil(AGENTS / PROCESSES);
    for (let p = 0; p < PROCESSES; p++) {
      const c = spawn(
        process.execPath,
        [
          join(import.meta.dirname, "fleet-agents.ts"),
          info.agentsFile,
          String(p * per),
          String(Math.min(AGENTS, (p + 1) * per)),
          info.address,
          info.serverName,
          caFile,
        ],
        { stdio: ["pipe", "pipe", "inherit"] },
      );
      children.push(c);
      clients.push(linesOf(c, `agents ${p}`));
    }
    const t0 = performance.now();
    const connected = await all<{ connected: number }>(clients, { cmd: "connect" });
    const connectMs = performance.now() - t0;
    const total = connected.reduce((s, c) => s + c.connected, 0);
    if (total !== AGENTS) throw new Error(`${total} of ${AGENTS} agents connected`);

    // A proxy is attached throughout, as in a deployment: auth serves its streams (trust, sessions,
    // inventory) in every window, the baseline included.
    const fx = await startProxySide({
      authAddress: info.address,
      hostCaPem: info.hostCaPem,
      proxyClient: info.proxyClient,
      proxyServer: info.proxyServer,
      resources: new MemorySource(testResources()),
      overrides: {
        rateLimit: { perAddress: 100, perUsername: 100, windowMs: 60_000 },
        limits: { ...proxyDefaults.limits, sessionRequestsPerSecond: 1e6, sessionRequestBurst: 1e6 },
      },
    });
    cleanups.push(() => fx.close());
    // svcd proxy's shape: the inventory copy (WatchInventory) answers the node list.
    const inventory = await startInventoryProxy({
      authAddress: info.address,
      hostCaPem: info.hostCaPem,
      proxyClient: info.proxyClient,
      proxyServer: info.proxyServer,
      config: fx.config,
      resources: new MemorySource(testResources()),
    });
    cleanups.push(() => inventory.close());
    const interval = INTERVAL_S * 1000;
    await all(clients, { cmd: "run", rpc: "health", intervalMs: interval });
    // Random phases: every agent calls once per interval from the start, so the rate is steady.
    const health = await measure(clients, authChild.pid, INTERVAL_S);
    await all(clients, { cmd: "run", rpc: "heartbeat", intervalMs: interval });
    await sleep(interval); // warm-up: each agent's first heartbeat writes its node record
    const profiling = process.env.SVC_BENCH_FLEET_PROFILE !== undefined;
    if (profiling) authChild.kill("SIGUSR2");
    // Two intervals: each agent's second beat (record write skipped) and third (written), as a
    // steady fleet alternates them; one interval would measure skipped beats only.
    const heartbeat = await measure(clients, authChild.pid, HEARTBEAT_WINDOW_INTERVALS * INTERVAL_S);
    // The windows' figures at once, in case auth is too busy for the list phase to finish.
    for (const [name, w] of [
      ["health check (baseline)", health],
      ["Heartbeat", heartbeat],
    ] as const)
      process.stderr.write(
        `fleet window: ${formatReport({ title: name, rows: [windowRow(name, w)], ratios: [] })}\n`,
      );
    if (profiling) {
      authChild.kill("SIGUSR2");
      // Written by auth once its main thread takes the signal: wait, or a busy auth loses it.
      const dir = process.env.SVC_BENCH_FLEET_PROFILE as string;
      for (let i = 0; i < 120 && !readdirSync(dir).some((f) => f.endsWith(".cpuprofile")); i++)
        await sleep(500);
    }

    // The node list while the fleet keeps heartbeating.
    const bare = Fastify({
      serverFactory: (handler) =>
        createServer(
          { cert: info.proxyServer.certPem, key: info.proxyServer.keyPem, minVersion: "TLSv1.2" },
          handler,
        ),
    });
    bare.get("/hello", async () => ({ hello: "world" }));
    await bare.listen({ host: "127.0.0.1", port: 0 });
    cleanups.push(() => bare.close());
    const addr = bare.server.address();
    if (addr === null || typeof addr === "string") throw new Error("baseline did not bind");
    const login = await fx.client.send({
      method: "POST",
      path: "/v1/webapi/login",
      body: { username: "bob", password: PASSWORD },
    });
    if (login.status !== 200) throw new Error(`login failed: ${login.status} ${login.text}`);
    const auth = { authorization: `Bearer ${(login.json as { session_id: string }).session_id}` };
    // The copy must hold the whole fleet before it is measured.
    const copy = new HttpsClient(inventory.url, info.hostCaPem, PUBLIC_HOST);
    const deadline = Date.now() + 60_000;
    for (;;) {
      const r = await copy.send({ method: "GET", path: "/v1/webapi/nodes?limit=1", headers: auth });
      const n = (r.json as { total_count?: number } | undefined)?.total_count;
      if (n === AGENTS) break;
      if (Date.now() > deadline)
        throw new Error(`inventory copy lists ${n} of ${AGENTS} nodes (${r.status})`);
      await sleep(500);
    }
    const first = await fx.client.send({ method: "GET", path: "/v1/webapi/nodes", headers: auth });
    const listed = (first.json as { total_count?: number }).total_count ?? 0;
    if (first.status !== 200 || listed !== AGENTS)
      throw new Error(`node list: ${first.status}, ${listed} of ${AGENTS} nodes`);

    const hello = await cannon(`https://127.0.0.1:${addr.port}/hello`, {});
    const page = await cannon(`${inventory.url}/v1/webapi/nodes`, auth);
    const filtered = await cannon(`${inventory.url}/v1/webapi/nodes?labels=env%3Dprod`, auth);
    const authPage = await cannon(`${fx.proxy.url}/v1/webapi/nodes`, auth);
    const authFiltered = await cannon(`${fx.proxy.url}/v1/webapi/nodes?labels=env%3Dprod`, auth);
    await all(clients, { cmd: "stop" });

    const rows: BenchRow[] = [
      {
        name: `setup: ${AGENTS} agents joined through AgentJoin`,
        note: `${(info.joinMs / 1000).toFixed(1)} s`,
      },
      {
        name: `setup: ${AGENTS} TLS connections, own certificate each`,
        note: `${(connectMs / 1000).toFixed(1)} s from ${PROCESSES} processes`,
      },
      windowRow(`health check every ${INTERVAL_S} s per agent (baseline)`, health),
      windowRow(`Heartbeat every ${INTERVAL_S} s per agent`, heartbeat),
      { ...hello, name: "bare fastify HTTPS hello" },
      { ...page, name: `GET /v1/webapi/nodes (first page of ${AGENTS})`, note: "inventory copy" },
      { ...filtered, name: "GET /v1/webapi/nodes?labels=env=prod (10 %)", note: "inventory copy" },
      { ...authPage, name: "GET /v1/webapi/nodes, answered by auth", note: "ListNodes: copy not in sync" },
      { ...authFiltered, name: "GET /v1/webapi/nodes?labels=env=prod, by auth", note: "ListNodes" },
    ];
    const ratios: BenchRatio[] = [
      {
        name: `auth CPU share (heartbeats) / ${CPU_GOAL}`,
        ratio: heartbeat.cpuShare / CPU_GOAL,
        goal: 1,
        lowerIsBetter: true,
      },
      { name: "auth CPU heartbeats / health-check baseline", ratio: heartbeat.cpuShare / health.cpuShare },
      { name: "heartbeat p99 / health-check p99", ratio: heartbeat.p99 / health.p99 },
      {
        name: `nodes page p99 / ${LIST_GOAL_MS} ms`,
        ratio: (page.p99Ms ?? Number.NaN) / LIST_GOAL_MS,
        goal: 1,
        lowerIsBetter: true,
      },
      {
        name: `nodes label filter p99 / ${LIST_GOAL_MS} ms`,
        ratio: (filtered.p99Ms ?? Number.NaN) / LIST_GOAL_MS,
        goal: 1,
        lowerIsBetter: true,
      },
      { name: "nodes page rate / bare hello", ratio: page.perSecond / hello.perSecond },
      { name: "nodes label filter rate / bare hello", ratio: filtered.perSecond / hello.perSecond },
      {
        name: "nodes page by auth p99 / 100 ms (info)",
        ratio: (authPage.p99Ms ?? Number.NaN) / LIST_GOAL_MS,
      },
    ];
    if (heartbeat.errors > 0 || health.errors > 0)
      throw new Error(
        `calls failed: ${health.errors + heartbeat.errors} (${heartbeat.firstError || health.firstError})`,
      );
    return {
      title: `fleet: ${AGENTS} agents, one auth (SQLite), heartbeat every ${INTERVAL_S} s; node list through a proxy`,
      rows,
      ratios,
    };
  } finally {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
    for (const c of children.reverse()) await stop(c);
    await rm(dir, { recursive: true, force: true });
  }
}
