// SSH user certificates against a Go peer, same machine, one run: step-ca's POST /1.0/ssh/sign
// (github.com/smallstep/certificates, built by scripts/tools/bench/step-ca.sh) and our IssueUserCerts.
// - Both sign with an Ed25519 user CA key (ours: core/ca's key type), for an Ed25519 user key,
//   with the same principals, and both keep their own records: step-ca its one-time-token
//   replay check and the certificate in its badger database, auth its session read, certificate
//   journal and audit event in a file SQLite (WAL), as in production.
// - Each server runs in a process of its own. The load (16 calls in flight over one HTTP/2 TLS
//   connection each: grpc-js for ours, node:http2 for step-ca) runs in a worker thread of this
//   process. step-ca gets a fresh one-time token per call, as its clients do (a JWT signed with the
//   JWK provisioner's ES256 key that this bench writes into ca.json, minted with jose in the load
//   thread, so the server's CPU does not include it).
// - Rounds are interleaved (raw sign, step-ca, ours, three times); medians are reported. Server
//   CPU per certificate is read from /proc/<pid>/stat over the measured calls only (whole process:
//   Go's threads, Node's threadpool and GC too; auth's main thread alone as well). CPU per
//   certificate holds up on a loaded machine; certificates per second do not.
import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { isMainThread, parentPort, Worker, workerData } from "node:worker_threads";
import { SqliteBackend } from "../core/backend/sqlite.ts";
import { generateSshKeyPair } from "../core/certs/ssh-keys.ts";
import { systemClock } from "../core/clock.ts";
import { certificateCaKeyBlob } from "../server/auth/cert-journal.ts";
import { callUnary, createAuthClient, userMetadata } from "../server/auth/client.ts";
import { PASSWORD, startAuthEnv } from "../test/auth-fixture.ts";
import { toolVersions } from "../test/harness/tools.ts";
import { rawSign } from "./raw-sign.ts";
import { type BenchReport, percentile } from "./report.ts";
import {
  freeLocalPort,
  type StepCa,
  type StepCaClientJob,
  startStepCa,
  stepCaBinary,
  stepCaClient,
} from "./step-ca-peer.ts";

const CONCURRENCY = 16;
const ROUNDS = 3;
const DURATION_MS = 4000;
const WARM_UP_CALLS = 200;
const TTL_SECONDS = 300;

/** What the auth child prints once it serves. */
interface AuthSide {
  address: string;
  caPem: string;
  sessionIds: string[];
  principals: string[];
  userCaBlob: string;
}

type LoadJob =
  | { kind: "ours"; side: AuthSide; publicLine: string }
  | ({ kind: "step-ca"; userCaBlob: string } & StepCaClientJob);

interface LoadResult {
  count: number;
  elapsedMs: number;
  latenciesMs: number[];
  errors: number;
  firstError?: string;
  /** the load thread's own CPU per call, µs (the client's cost, on the same cores) */
  clientCpuUs: number;
}

// ---- the auth child: our auth server in a process of its own -----------------------------------

async function authChild(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), "svc-certs-peer-auth-"));
  const backend = new SqliteBackend({ path: join(dir, "state.db"), clock: systemClock, sweepIntervalMs: 0 });
  const env = await startAuthEnv({ backend });
  const sessionIds: string[] = [];
  for (let i = 0; i < 8; i++) {
    const r = await callUnary(env.client, "AuthenticateLocal", {
      username: "bob",
      password: PASSWORD,
      client_address: "",
    });
    sessionIds.push(r.session?.session_id ?? "");
  }
  // One certificate now: its principals are what step-ca's token asks for too.
  const first = await callUnary(
    env.client,
    "IssueUserCerts",
    { ssh_public_key: generateSshKeyPair("ed25519").publicLine, ttl_seconds: TTL_SECONDS },
    userMetadata(sessionIds[0] ?? ""),
  );
  const blob = Buffer.from(first.ssh_certificate.split(" ")[1] ?? "", "base64");
  const side: AuthSide = {
    address: env.auth.address,
    caPem: env.pki.hostCa.certPem,
    sessionIds,
    principals: first.principals,
    userCaBlob: certificateCaKeyBlob(blob).toString("base64"),
  };
  process.stdout.write(`${JSON.stringify(side)}\n`);
  process.stdin.resume();
  process.stdin.on("end", () => {
    void env
      .close()
      .then(() => backend.close())
      .then(() => rm(dir, { recursive: true, force: true }))
      .then(() => process.exit(0));
  });
}

// ---- the load, in a worker thread ----------------------------------------------------------------

/** One call that gets one certificate; resolves to its wire blob. */
type OneCall = () => Promise<Buffer>;

async function oursCall(
  job: Extract<LoadJob, { kind: "ours" }>,
): Promise<{ one: OneCall; close: () => void }> {
  const client = createAuthClient({
    address: job.side.address,
    caPems: [job.side.caPem],
    serverName: "localhost",
  });
  let i = 0;
  const one: OneCall = async () => {
    const sid = job.side.sessionIds[i++ % job.side.sessionIds.length] ?? "";
    const r = await callUnary(
      client,
      "IssueUserCerts",
      { ssh_public_key: job.publicLine, ttl_seconds: TTL_SECONDS },
      userMetadata(sid),
    );
    return Buffer.from(r.ssh_certificate.split(" ")[1] ?? "", "base64");
  };
  return { one, close: () => client.close() };
}

async function runLoad(job: LoadJob, afterWarmUp: () => Promise<void>): Promise<LoadResult> {
  const { one, close } = job.kind === "ours" ? await oursCall(job) : await stepCaClient(job);
  // Both answer an Ed25519 user certificate signed by their Ed25519 user CA: checked once, so
  // the comparison is between like certificates.
  const blob = await one();
  const type = blob.subarray(4, 4 + blob.readUInt32BE(0)).toString();
  if (type !== "ssh-ed25519-cert-v01@openssh.com") throw new Error(`${job.kind}: certificate type ${type}`);
  const caBlob = job.kind === "ours" ? job.side.userCaBlob : job.userCaBlob;
  if (certificateCaKeyBlob(blob).toString("base64") !== caBlob)
    throw new Error(`${job.kind}: the certificate is not signed by the expected user CA`);
  const latencies: number[] = [];
  let errors = 0;
  let firstError: string | undefined;
  const timed = async (): Promise<void> => {
    const t = performance.now();
    try {
      await one();
      latencies.push(performance.now() - t);
    } catch (err) {
      errors++;
      firstError ??= String(err);
    }
  };
  // Warm-up: connection, JIT, caches.
  for (let i = 0; i < WARM_UP_CALLS; i += CONCURRENCY)
    await Promise.all(Array.from({ length: CONCURRENCY }, timed));
  latencies.length = 0;
  errors = 0;
  await afterWarmUp();
  const cpuBefore = process.threadCpuUsage();
  const start = performance.now();
  const end = start + DURATION_MS;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < end) await timed();
    }),
  );
  const elapsedMs = performance.now() - start;
  const cpu = process.threadCpuUsage(cpuBefore);
  close();
  return {
    count: latencies.length,
    elapsedMs,
    latenciesMs: latencies,
    errors,
    clientCpuUs: (cpu.user + cpu.system) / Math.max(1, latencies.length),
    ...(firstError ? { firstError } : {}),
  };
}

if (!isMainThread && (workerData as { certsPeerJob?: LoadJob } | null)?.certsPeerJob) {
  const job = (workerData as { certsPeerJob: LoadJob }).certsPeerJob;
  const warmedUp = () =>
    new Promise<void>((resolve) => {
      parentPort?.once("message", () => resolve());
      parentPort?.postMessage({ warm: true });
    });
  runLoad(job, warmedUp).then(
    (r) => parentPort?.postMessage(r),
    (err: unknown) => parentPort?.postMessage({ error: String(err) }),
  );
}

// ---- the main thread -----------------------------------------------------------------------------

/** CPU time (user + system) of a process, or of one of its threads, in µs, from /proc (Linux). */
function cpuUs(pid: number, tid?: number): number {
  const path = tid === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${tid}/stat`;
  // Fields after the command name; utime and stime are stat fields 14 and 15 (clock ticks).
  const fields = readFileSync(path, "utf8").split(") ")[1]?.split(" ") ?? [];
  const ticks = Number(fields[11]) + Number(fields[12]);
  return ticks * 10_000; // USER_HZ is 100 on Linux
}

interface Measured extends LoadResult {
  /** whole server process, µs per certificate */
  cpuUs: number;
  /** the server's main thread only (ours), µs per certificate */
  mainThreadUs?: number;
}

function measured(job: LoadJob, pid: number, mainThread: boolean): Promise<Measured> {
  return new Promise((resolve, reject) => {
    const w = new Worker(new URL(import.meta.url), { workerData: { certsPeerJob: job } });
    let before = { proc: 0, main: 0 };
    const snapshot = () => ({ proc: cpuUs(pid), main: mainThread ? cpuUs(pid, pid) : 0 });
    w.on("message", (m: LoadResult | { error: string } | { warm: true }) => {
      if ("warm" in m) {
        before = snapshot();
        w.postMessage("go");
        return;
      }
      const after = snapshot();
      void w.terminate();
      if ("error" in m) return reject(new Error(m.error));
      const n = Math.max(1, m.count);
      resolve({
        ...m,
        cpuUs: (after.proc - before.proc) / n,
        ...(mainThread ? { mainThreadUs: (after.main - before.main) / n } : {}),
      });
    });
    w.once("error", reject);
  });
}

function firstLine(child: ChildProcess, what: string, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    if (!child.stdout) return reject(new Error(`${what}: no stdout`));
    const rl = createInterface({ input: child.stdout });
    const timer = setTimeout(() => reject(new Error(`${what} did not start in ${timeoutMs} ms`)), timeoutMs);
    rl.once("line", (l) => {
      clearTimeout(timer);
      rl.close();
      resolve(l);
    });
    child.once("exit", (code) => reject(new Error(`${what} exited (${code}) before it served`)));
  });
}

const median = (xs: number[]): number =>
  [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;

export default async function bench(): Promise<BenchReport> {
  const bin = stepCaBinary();
  const dir = await mkdtemp(join(tmpdir(), "svc-certs-peer-"));
  let ca: StepCa | undefined;
  let auth: ChildProcess | undefined;
  try {
    ca = await startStepCa(bin, dir, await freeLocalPort(), TTL_SECONDS);
    auth = spawn(process.execPath, [new URL(import.meta.url).pathname, "--auth-child"], {
      stdio: ["pipe", "pipe", "inherit"],
    });
    const side = JSON.parse(await firstLine(auth, "the auth child", 60_000)) as AuthSide;
    const authPid = auth.pid ?? 0;
    const caPid = ca.child.pid ?? 0;
    const publicLine = generateSshKeyPair("ed25519").publicLine;
    const stepJob: LoadJob = {
      kind: "step-ca",
      url: ca.url,
      rootPem: ca.rootPem,
      provisioner: ca.provisioner,
      jwk: ca.jwk,
      keyId: "bob",
      principals: side.principals,
      publicLine,
      userCaBlob: ca.userCaBlob,
    };
    const ourJob: LoadJob = { kind: "ours", side, publicLine };

    const signs: number[] = [];
    const steps: Measured[] = [];
    const ours: Measured[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      signs.push(rawSign(1000).cpuUs);
      steps.push(await measured(stepJob, caPid, false));
      ours.push(await measured(ourJob, authPid, true));
    }
    for (const [name, runs] of [
      ["step-ca", steps],
      ["IssueUserCerts", ours],
    ] as const) {
      const bad = runs.find((r) => r.errors > 0);
      if (bad) throw new Error(`${name}: ${bad.errors} errors, first: ${bad.firstError}`);
    }
    const rate = (r: LoadResult) => r.count / (r.elapsedMs / 1000);
    const stepRate = median(steps.map(rate));
    const ourRate = median(ours.map(rate));
    const stepCpu = median(steps.map((r) => r.cpuUs));
    const ourCpu = median(ours.map((r) => r.cpuUs));
    const ourMain = median(ours.map((r) => r.mainThreadUs ?? Number.NaN));
    const signUs = median(signs);
    const stepClient = median(steps.map((r) => r.clientCpuUs));
    const ourClient = median(ours.map((r) => r.clientCpuUs));
    const lat = (runs: Measured[]) => runs.flatMap((r) => r.latenciesMs);
    return {
      title: `SSH user certificates: step-ca ${toolVersions()["STEP_CA_VERSION"]} vs IssueUserCerts (Ed25519, ${CONCURRENCY} in flight)`,
      rows: [
        {
          name: "raw Ed25519 crypto.sign, 1 core (baseline)",
          perSecond: 1e6 / signUs,
          unit: "signs",
          note: `median of ${ROUNDS}, ${signUs.toFixed(0)} us CPU each`,
        },
        {
          name: "step-ca POST /1.0/ssh/sign (JWK token each)",
          perSecond: stepRate,
          unit: "certs",
          p50Ms: percentile(lat(steps), 50),
          p99Ms: percentile(lat(steps), 99),
          note: `median of ${ROUNDS}, server ${stepCpu.toFixed(0)} us CPU/cert (process), client ${stepClient.toFixed(0)} us`,
        },
        {
          name: "IssueUserCerts over gRPC TLS (session each)",
          perSecond: ourRate,
          unit: "certs",
          p50Ms: percentile(lat(ours), 50),
          p99Ms: percentile(lat(ours), 99),
          note: `median of ${ROUNDS}, server ${ourCpu.toFixed(0)} us CPU/cert (process; main thread ${ourMain.toFixed(0)}), client ${ourClient.toFixed(0)} us`,
        },
      ],
      ratios: [
        { name: "IssueUserCerts / step-ca, certs/s", ratio: ourRate / stepRate, goal: 1 },
        // Per certificate of server CPU, whole process each: contention-proof.
        { name: "server CPU/cert: step-ca / IssueUserCerts", ratio: stepCpu / ourCpu, goal: 1 },
        { name: "step-ca CPU/cert / raw sign (info)", ratio: stepCpu / signUs, lowerIsBetter: true },
        { name: "IssueUserCerts CPU/cert / raw sign (info)", ratio: ourCpu / signUs, lowerIsBetter: true },
      ],
    };
  } finally {
    if (auth && auth.exitCode === null) {
      const exited = new Promise((r) => auth?.once("exit", r));
      auth.stdin?.end();
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
      if (auth.exitCode === null) auth.kill("SIGKILL");
    }
    if (ca && ca.child.exitCode === null) {
      const exited = new Promise((r) => ca?.child.once("exit", r));
      ca.child.kill("SIGTERM");
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
      if (ca.child.exitCode === null) ca.child.kill("SIGKILL");
    }
    await rm(dir, { recursive: true, force: true });
  }
}

if (isMainThread && process.argv.includes("--auth-child")) await authChild();
