// Application access (docs/apps.md): requests through the proxy's app forwarder against the same
// go-httpbin called directly over HTTPS, in the same run, with the same connections. Both paths
// pay the client's TLS; the proxied one adds the proxy's work (cookie -> session cache, lock
// check, assertion header, the hop to the upstream over plain HTTP). Two cases: a small GET (256
// bytes) and a 64 KiB body streamed in 8 KiB chunks.
// Processes: `svcd start` (auth + proxy, the embedded default) and two go-httpbin (the upstream
// the App names, plain HTTP; the baseline, HTTPS) run as children; autocannon runs in a worker
// thread of this process. All share the machine's cores, so each row also reports the CPU the
// proxy process and go-httpbin spent per request (Linux /proc).
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { generateKeyPairSync } from "node:crypto";
import { once } from "node:events";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { Agent, request } from "node:https";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import autocannon from "autocannon";
import { createRootCa } from "../core/certs/x509.ts";
import { systemClock } from "../core/clock.ts";
import { freePort } from "../test/harness/ports.ts";
import { toolPath } from "../test/harness/tools.ts";
import { processCpuMs } from "./proc-cpu.ts";
import type { BenchReport, BenchRow } from "./report.ts";
import { percentile } from "./report.ts";

const execFileP = promisify(execFile);
const root = join(import.meta.dirname, "..");
/** Seconds per throughput sample; with the latency rounds about 30 s per case. */
const DURATION_S = Number(process.env.SVC_BENCH_SECONDS ?? 4);
/** Seconds per latency sample: one connection, one request at a time. */
const LATENCY_S = Math.max(1, DURATION_S / 4);
const ROUNDS = 3;
const CONNECTIONS = 16;
const APP = "httpbin";
/** The proxy's public host: a name with a dot, whose wildcard TLS clients accept (docs/apps.md). */
const PUBLIC_HOST = "svc.localhost";

const CASES = [
  { name: "small GET (256 B)", path: "/bytes/256?seed=1" },
  { name: "64 KiB streamed (8 KiB chunks)", path: "/stream-bytes/65536?chunk_size=8192&seed=1" },
] as const;

interface Sample {
  perSecond: number;
  bytesPerSecond: number;
  p50: number;
  p99: number;
  /** CPU per request of the svcd process (auth + proxy) and of the go-httpbin serving it, µs. */
  proxyCpuUs: number;
  upstreamCpuUs: number;
}

interface Target {
  name: string;
  url: string;
  servername: string;
  headers: Record<string, string>;
  /** the go-httpbin that serves this target (its CPU is counted) */
  upstream: ChildProcess;
  samples: Sample[];
  /** sequential request times, ms, over all rounds */
  latencies: number[];
}

let svcdPid: number | undefined;

async function sample(t: Target, seconds: number): Promise<Sample> {
  const proxy0 = processCpuMs(svcdPid);
  const up0 = processCpuMs(t.upstream.pid);
  const r = await autocannon({
    url: t.url,
    headers: t.headers,
    servername: t.servername,
    connections: CONNECTIONS,
    workers: 1,
    duration: seconds,
  });
  const failures = r.non2xx + r.errors + r.timeouts;
  if (failures > 0) throw new Error(`${t.name}: ${failures} failed requests (${r.non2xx} non-2xx)`);
  const n = Math.max(1, r.requests.total);
  return {
    perSecond: r.requests.average,
    bytesPerSecond: r.throughput.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    proxyCpuUs: ((processCpuMs(svcdPid) - proxy0) * 1000) / n,
    upstreamCpuUs: ((processCpuMs(t.upstream.pid) - up0) * 1000) / n,
  };
}

/**
 * Latency without load: one kept-alive connection, one request at a time, timed in this process
 * with sub-millisecond resolution (autocannon's latencies are whole milliseconds).
 */
async function sequential(t: Target, seconds: number): Promise<number[]> {
  const url = new URL(t.url);
  // Certificates are not checked, as autocannon does not: this measures time, not trust.
  const agent = new Agent({ keepAlive: true, maxSockets: 1, rejectUnauthorized: false });
  const one = () =>
    new Promise<void>((resolve, reject) => {
      const req = request(
        {
          host: url.hostname,
          port: url.port,
          path: `${url.pathname}${url.search}`,
          agent,
          servername: t.servername,
          headers: t.headers,
        },
        (res) => {
          if (res.statusCode !== 200) reject(new Error(`${t.name}: HTTP ${res.statusCode}`));
          res.resume();
          res.on("end", () => resolve());
        },
      );
      req.on("error", reject);
      req.end();
    });
  const samples: number[] = [];
  try {
    await one(); // the connection and its TLS handshake are not part of the samples
    const end = performance.now() + seconds * 1000;
    while (performance.now() < end) {
      const t0 = performance.now();
      await one();
      samples.push(performance.now() - t0);
    }
  } finally {
    agent.destroy();
  }
  return samples;
}

const signed = (n: number): string => `${n >= 0 ? "+" : ""}${n}`;

const median = (xs: number[]): number =>
  [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;

/** Rounds interleave the targets so a shared machine's drift falls on both alike. */
type Measured = BenchRow & { perSecond: number; p50Ms: number; p99Ms: number };

async function measure(targets: Target[]): Promise<Array<{ load: Measured; idle: Measured }>> {
  for (const t of targets) await sample(t, 1); // warm-up: JIT, TLS, the session cache
  for (let round = 0; round < ROUNDS; round++) {
    for (const t of targets) t.samples.push(await sample(t, DURATION_S));
    for (const t of targets) t.latencies.push(...(await sequential(t, LATENCY_S)));
  }
  return targets.map((t) => {
    const cpu = (f: (s: Sample) => number) => median(t.samples.map(f));
    const proxyCpu = cpu((s) => s.proxyCpuUs);
    const idle: Measured = {
      name: `${t.name}, 1 connection, sequential`,
      perSecond: t.latencies.length / (ROUNDS * LATENCY_S),
      unit: "req",
      p50Ms: percentile(t.latencies, 50),
      p99Ms: percentile(t.latencies, 99),
      note: `${t.latencies.length} requests`,
    };
    const load: Measured = {
      name: t.name,
      perSecond: median(t.samples.map((s) => s.perSecond)),
      unit: "req",
      p50Ms: median(t.samples.map((s) => s.p50)),
      p99Ms: median(t.samples.map((s) => s.p99)),
      note:
        `median of ${ROUNDS}; ${(median(t.samples.map((s) => s.bytesPerSecond)) / 1048576).toFixed(1)} MiB/s; ` +
        `go-httpbin ${cpu((s) => s.upstreamCpuUs).toFixed(0)} us CPU/req` +
        (Number.isFinite(proxyCpu) && proxyCpu > 1 ? `, svcd ${proxyCpu.toFixed(0)} us CPU/req` : ""),
    };
    return { load, idle };
  });
}

const listening = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = connect(port, "127.0.0.1");
    s.once("connect", () => {
      s.destroy();
      resolve(true);
    });
    s.once("error", () => resolve(false));
  });

async function waitFor(cond: () => boolean | Promise<boolean>, what: string, ms = 90_000): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await cond()) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`timed out waiting for ${what}`);
}

async function stop(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  child.kill("SIGTERM");
  const t = setTimeout(() => child.kill("SIGKILL"), 15_000);
  await once(child, "exit");
  clearTimeout(t);
}

function httpbin(port: number, tls?: { cert: string; key: string }): ChildProcess {
  const args = ["-host", "127.0.0.1", "-port", String(port), "-log-level", "OFF"];
  if (tls) args.push("-https-cert-file", tls.cert, "-https-key-file", tls.key);
  return spawn(toolPath("go-httpbin"), args, { stdio: "ignore" });
}

export default async function appsBench(): Promise<BenchReport> {
  const dir = await mkdtemp(join(tmpdir(), "svc-bench-apps-"));
  const children: ChildProcess[] = [];
  try {
    const ports = {
      auth: await freePort(),
      proxy: await freePort(),
      diag: await freePort(),
      upstream: await freePort(),
      direct: await freePort(),
    };
    // The baseline's certificate: a self-signed P-256 one, like the proxy's key type.
    const { privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
    const cert = await createRootCa({ privateKey, commonName: "httpbin.bench", clock: systemClock });
    const tls = { cert: join(dir, "httpbin.crt"), key: join(dir, "httpbin.key") };
    await writeFile(tls.cert, cert);
    await writeFile(tls.key, privateKey.export({ type: "pkcs8", format: "pem" }), { mode: 0o600 });
    const upstream = httpbin(ports.upstream);
    const direct = httpbin(ports.direct, tls);
    children.push(upstream, direct);

    const data = join(dir, "data");
    await writeFile(join(dir, "admin-password"), "bench-apps-password-1\n", { mode: 0o600 });
    const startSvcd = async (): Promise<ChildProcess> => {
      let out = "";
      const svcd = spawn(
        join(root, "bin", "svcd"),
        [
          "start",
          "--auth-listen",
          `127.0.0.1:${ports.auth}`,
          "--proxy-listen",
          `127.0.0.1:${ports.proxy}`,
          "--diag-listen",
          `127.0.0.1:${ports.diag}`,
        ],
        {
          env: { ...process.env, SVC_DATA_DIR: data, SVC_ADMIN_PASSWORD_FILE: join(dir, "admin-password") },
          stdio: ["ignore", "pipe", "pipe"],
        },
      );
      children.push(svcd);
      svcd.stdout?.on("data", (d: Buffer) => {
        out += d.toString();
      });
      svcd.stderr?.on("data", (d: Buffer) => {
        out += d.toString();
      });
      await waitFor(() => {
        if (svcd.exitCode !== null) throw new Error(`svcd start exited: ${out}`);
        return out.includes("svc is running");
      }, "svcd start");
      return svcd;
    };
    // The first start writes the data folder; then the public address gets a dot, as the guide
    // says (a wildcard over the single label "localhost" is refused by TLS clients), and the App.
    await stop(await startSvcd());
    const configFile = join(data, "svc.yaml");
    const config = await readFile(configFile, "utf8");
    if (!config.includes("public_addr: localhost:3080")) throw new Error(`unexpected ${configFile}`);
    await writeFile(
      configFile,
      config.replace("public_addr: localhost:3080", `public_addr: ${PUBLIC_HOST}:${ports.proxy}`),
    );
    await writeFile(
      join(data, "manifests", `${APP}.yaml`),
      `apiVersion: svc.dev/v1\nkind: App\nmetadata:\n  name: ${APP}\nspec:\n  uri: http://127.0.0.1:${ports.upstream}\n`,
    );
    svcdPid = (await startSvcd()).pid;
    await waitFor(async () => (await listening(ports.upstream)) && listening(ports.direct), "go-httpbin");

    const env = { ...process.env, SVC_HOME: join(dir, "home") };
    const svc = async (...args: string[]) =>
      (await execFileP(join(root, "bin", "svc"), args, { env, cwd: dir, timeout: 60_000 })).stdout;
    await svc(
      "login",
      "--proxy",
      `127.0.0.1:${ports.proxy}`,
      "--ca",
      join(data, "host-ca.pem"),
      "--user",
      "admin",
      "--password-file",
      join(dir, "admin-password"),
    );
    // The folder source reads the manifest at once; the proxy's copy follows.
    await waitFor(async () => (await svc("apps", "ls")).includes(APP), `${APP} in svc apps ls`, 30_000);
    await svc("apps", "login", APP);
    const cookie = (await svc("apps", "config", APP, "--format", "cookie")).trim();
    const appHost = `${APP}.${PUBLIC_HOST}`;

    const rows: BenchRow[] = [];
    const ratios: BenchReport["ratios"] = [];
    for (const c of CASES) {
      const [base, proxied] = await measure([
        {
          name: `${c.name}: go-httpbin direct (HTTPS)`,
          url: `https://127.0.0.1:${ports.direct}${c.path}`,
          servername: "httpbin.bench",
          headers: {},
          upstream: direct,
          samples: [],
          latencies: [],
        },
        {
          name: `${c.name}: through the proxy (app session cookie)`,
          url: `https://127.0.0.1:${ports.proxy}${c.path}`,
          servername: appHost,
          headers: { host: `${appHost}:${ports.proxy}`, cookie },
          upstream,
          samples: [],
          latencies: [],
        },
      ]);
      if (!base || !proxied) throw new Error("missing measurement");
      rows.push(base.load, proxied.load, base.idle, proxied.idle, {
        name: `${c.name}: latency the proxy adds`,
        p50Ms: proxied.idle.p50Ms - base.idle.p50Ms,
        p99Ms: proxied.idle.p99Ms - base.idle.p99Ms,
        note: `sequential, proxied minus direct; under load (whole ms): p50 ${signed(proxied.load.p50Ms - base.load.p50Ms)} p99 ${signed(proxied.load.p99Ms - base.load.p99Ms)}`,
      });
      ratios.push(
        { name: `${c.name}: proxied / direct req/s`, ratio: proxied.load.perSecond / base.load.perSecond },
        {
          name: `${c.name}: proxied / direct p50, sequential`,
          ratio: proxied.idle.p50Ms / base.idle.p50Ms,
          lowerIsBetter: true,
        },
      );
    }
    return {
      title: `application access (${CONNECTIONS} connections, ${ROUNDS}x${DURATION_S}s interleaved per case, then ${LATENCY_S}s sequential each, autocannon in a worker thread; svcd start and go-httpbin as child processes)`,
      rows,
      ratios,
    };
  } finally {
    for (const c of children.reverse()) await stop(c);
    svcdPid = undefined;
    await rm(dir, { recursive: true, force: true });
  }
}
