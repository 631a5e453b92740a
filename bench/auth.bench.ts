import { mkdtemp, rm } from "node:fs/promises";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import { isMainThread, parentPort, Worker, workerData } from "node:worker_threads";
import type { Backend } from "../core/backend/backend.ts";
import { PostgresBackend } from "../core/backend/postgres.ts";
import { SqliteBackend } from "../core/backend/sqlite.ts";
import { generateSshKeyPair } from "../core/certs/ssh-keys.ts";
import { systemClock } from "../core/clock.ts";
import { callUnary, createAuthClient, userMetadata } from "../server/auth/client.ts";
import { LoginThrottle } from "../server/auth/login-throttle.ts";
import { ARGON2_PARAMS, hashPassword, verifyPassword } from "../server/auth/passwords.ts";
import { PASSWORD, startAuthEnv } from "../test/auth-fixture.ts";
import { type PostgresServer, startPostgres, uniqueSchemaName } from "../test/harness/postgres.ts";
import { startCertFloorServer } from "./auth-cert-floor.ts";
import { processTreeCpuMs } from "./proc-cpu.ts";
import { rawSign } from "./raw-sign.ts";
import { type BenchReport, percentile } from "./report.ts";

/** Users of the fixture that have the password (test/auth-fixture.ts). */
const LOGIN_USERS = ["alice", "bob", "eve", "carl"];

interface LoadJob {
  /** "floor": IssueUserCerts on the floor server (auth-cert-floor.ts) at `address` */
  mode: "certs" | "floor" | "logins" | "empty" | "session";
  address: string;
  caPem: string;
  sessionIds: string[];
  publicKey: string;
  concurrency: number;
  durationMs: number;
}

interface LoadResult {
  count: number;
  elapsedMs: number;
  latenciesMs: number[];
  errors: number;
}

async function runLoad(job: LoadJob, afterWarmUp: () => Promise<void>): Promise<LoadResult> {
  const client = createAuthClient({ address: job.address, caPems: [job.caPem], serverName: "localhost" });
  const latencies: number[] = [];
  let errors = 0;
  const one = async (i: number): Promise<void> => {
    const t = performance.now();
    try {
      if (job.mode === "certs" || job.mode === "floor") {
        const sid = job.sessionIds[i % job.sessionIds.length] ?? "";
        await callUnary(
          client,
          "IssueUserCerts",
          { ssh_public_key: job.publicKey, ttl_seconds: 300 },
          userMetadata(sid),
        );
      } else if (job.mode === "empty") {
        await callUnary(client, "GetClusterInfo", {});
      } else if (job.mode === "session") {
        const sid = job.sessionIds[i % job.sessionIds.length] ?? "";
        await callUnary(client, "GetSession", {}, userMetadata(sid));
      } else {
        // Several users, as a login burst has: one name allows at most lockout.max_failures
        // attempts in flight at once (server/auth/login.ts), a limit this load would otherwise hit.
        await callUnary(client, "AuthenticateLocal", {
          username: LOGIN_USERS[i % LOGIN_USERS.length] ?? "bob",
          password: PASSWORD,
          client_address: "",
        });
      }
      latencies.push(performance.now() - t);
    } catch {
      errors++;
    }
  };
  // Warm-up: connection, JIT (optimized code needs a few hundred calls), caches.
  for (let i = 0; i < 200; i++) await one(i);
  latencies.length = 0;
  errors = 0;
  await afterWarmUp();
  const start = performance.now();
  const end = start + job.durationMs;
  let n = 0;
  await Promise.all(
    Array.from({ length: job.concurrency }, async (_v, w) => {
      while (performance.now() < end) await one(w + n++);
    }),
  );
  const elapsedMs = performance.now() - start;
  client.close();
  return { count: latencies.length, elapsedMs, latenciesMs: latencies, errors };
}

if (!isMainThread && (workerData as { authBenchJob?: LoadJob } | null)?.authBenchJob) {
  const job = (workerData as { authBenchJob: LoadJob }).authBenchJob;
  // Tells the main thread the warm-up is over (so it starts its CPU clock), then waits for "go".
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

/**
 * Server (main-thread) CPU per completed call, µs: the main thread only serves while it waits.
 * With PostgreSQL, also the database server's CPU per call (every postgres process, when local).
 */
async function measured(job: LoadJob): Promise<LoadResult & { serverCpuUs: number; dbCpuUs: number }> {
  let before = process.threadCpuUsage();
  let db = Number.NaN;
  const r = await inWorker(job, () => {
    before = process.threadCpuUsage();
    if (pg) db = processTreeCpuMs(pg.pid);
  });
  const used = process.threadCpuUsage(before);
  const n = Math.max(1, r.count);
  const dbCpuUs = pg ? ((processTreeCpuMs(pg.pid) - db) * 1000) / n : Number.NaN;
  return { ...r, serverCpuUs: (used.user + used.system) / n, dbCpuUs };
}

const ROUNDS = 3;

/**
 * SVC_BENCH_AUTH_BACKEND=postgres runs auth on PostgreSQL (a private server, or SVC_TEST_PG_URL),
 * as several replicas run; the default is a file SQLite (WAL), the embedded default.
 */
const BACKEND = process.env.SVC_BENCH_AUTH_BACKEND ?? "sqlite";
let pg: PostgresServer | undefined;

async function openBenchBackend(dir: string): Promise<Backend> {
  if (BACKEND === "sqlite")
    return new SqliteBackend({ path: join(dir, "state.db"), clock: systemClock, sweepIntervalMs: 0 });
  if (BACKEND !== "postgres") throw new Error("SVC_BENCH_AUTH_BACKEND is sqlite or postgres");
  pg = await startPostgres();
  return PostgresBackend.open({
    connectionString: pg.url,
    clock: systemClock,
    schema: uniqueSchemaName("authbench"),
    sweepIntervalMs: 0,
  });
}
const median = (xs: number[]): number =>
  [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;

function inWorker(job: LoadJob, onWarm: () => void = () => {}): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const w = new Worker(new URL(import.meta.url), { workerData: { authBenchJob: job } });
    w.on("message", (m: LoadResult | { error: string } | { warm: true }) => {
      if ("warm" in m) {
        onWarm();
        w.postMessage("go");
        return;
      }
      void w.terminate();
      if ("error" in m) reject(new Error(m.error));
      else resolve(m);
    });
    w.once("error", reject);
  });
}

/** The database server's CPU per call, when it is a local PostgreSQL. */
function dbNote(runs: Array<{ dbCpuUs: number }>): string {
  const us = median(runs.map((r) => r.dbCpuUs));
  return Number.isFinite(us) ? `, postgres ${us.toFixed(0)} us CPU/call` : "";
}

function sum<T>(xs: T[], key: { [K in keyof T]: T[K] extends number ? K : never }[keyof T]): number {
  return xs.reduce((a, x) => a + (x[key] as number), 0);
}

async function singleHashMs(): Promise<number> {
  const phc = await hashPassword("some password for timing");
  await verifyPassword("warm up", phc);
  const n = 10;
  const start = performance.now();
  for (let i = 0; i < n; i++) await verifyPassword("some password for timing", phc);
  return (performance.now() - start) / n;
}

/**
 * µs per login of the throttle's bookkeeping, as server/auth/login.ts runs it: a right password
 * from an address new to the user, from a known address, and an attempt refused while waiting.
 */
async function throttleCostUs(backend: Backend): Promise<{ fresh: number; known: number; refused: number }> {
  const t = new LoginThrottle(
    backend,
    systemClock,
    { maxFailures: 1, lockoutMs: 3_600_000, baseDelayMs: 3_600_000 },
    async () => {},
  );
  const n = 400;
  const run = async (f: (i: number) => Promise<void>): Promise<number> => {
    for (let i = 0; i < 50; i++) await f(i + 1_000_000); // warm-up
    const start = performance.now();
    for (let i = 0; i < n; i++) await f(i);
    return ((performance.now() - start) * 1000) / n;
  };
  const login = async (user: string, address: string) => {
    const ctx = { user_name: user, client_address: address };
    const a = await t.admit(user, address, ctx);
    if (!a.ok) throw new Error("bench login refused");
    await t.settle(user, address, a.taken, "success", ctx);
  };
  const fresh = await run((i) => login(`bench-${i}`, `192.0.2.${i % 250}`));
  const known = await run(() => login("bench-known", "198.51.100.1"));
  // One failure starts an hour's wait for this name; every attempt after is refused unchecked.
  const ctx = { user_name: "bench-guessed", client_address: "203.0.113.1" };
  const first = await t.admit("bench-guessed", "203.0.113.1", ctx);
  if (first.ok) await t.settle("bench-guessed", "203.0.113.1", first.taken, "failure", ctx);
  const refused = await run(async (i) => {
    if ((await t.admit("bench-guessed", `203.0.113.${2 + (i % 250)}`, ctx)).ok)
      throw new Error("not refused");
  });
  return { fresh, known, refused };
}

export default async function bench(): Promise<BenchReport> {
  const cores = availableParallelism();
  // A file database as in production (WAL): the audit append of every certificate is a real
  // commit, not an in-memory one.
  const dir = await mkdtemp(join(tmpdir(), "svc-auth-bench-"));
  const backend = await openBenchBackend(dir);
  const env = await startAuthEnv({ backend });
  // What bob (preset access) is granted: the floor's certificate and answer are the size of auth's.
  const floor = await startCertFloorServer({
    service: env.auth.service,
    keys: env.pki.keys,
    backend,
    tls: {
      certPem: env.pki.serverCertPem,
      keyPem: env.pki.serverKeyPem,
      clientCaPems: [env.pki.hostCa.certPem],
    },
    principals: ["bob", "deploy"],
    roles: ["access"],
    traits: { logins: ["bob", "deploy"] },
  });
  try {
    const sessionIds: string[] = [];
    for (let i = 0; i < 8; i++) {
      const r = await callUnary(env.client, "AuthenticateLocal", {
        username: "bob",
        password: PASSWORD,
        client_address: "",
      });
      sessionIds.push(r.session?.session_id ?? "");
    }
    const base = {
      address: env.auth.address,
      caPem: env.pki.hostCa.certPem,
      sessionIds,
      publicKey: generateSshKeyPair("ed25519").publicLine,
    };

    const raws: number[] = [];
    const signCpus: number[] = [];
    const certRuns: Array<LoadResult & { serverCpuUs: number; dbCpuUs: number }> = [];
    const floorRuns: Array<LoadResult & { serverCpuUs: number; dbCpuUs: number }> = [];
    const emptyRuns: Array<LoadResult & { serverCpuUs: number; dbCpuUs: number }> = [];
    const sessionRuns: Array<LoadResult & { serverCpuUs: number; dbCpuUs: number }> = [];
    for (let round = 0; round < ROUNDS; round++) {
      const r = rawSign(2000);
      raws.push(r.rate);
      signCpus.push(r.cpuUs);
      certRuns.push(await measured({ ...base, mode: "certs", concurrency: 32, durationMs: 5000 }));
      // The same certificate with only what no certificate service can skip (auth-cert-floor.ts).
      floorRuns.push(
        await measured({ ...base, address: floor.address, mode: "floor", concurrency: 32, durationMs: 5000 }),
      );
      // The floor of the transport: an RPC that does no work, same TLS channel and interceptor.
      emptyRuns.push(await measured({ ...base, mode: "empty", concurrency: 32, durationMs: 3000 }));
      // The same with a user's session checked: what authenticating a caller adds to any user RPC.
      sessionRuns.push(await measured({ ...base, mode: "session", concurrency: 32, durationMs: 3000 }));
    }
    const rateOf = (r: LoadResult) => r.count / (r.elapsedMs / 1000);
    const raw = median(raws);
    const certRate = median(certRuns.map(rateOf));
    const emptyRate = median(emptyRuns.map(rateOf));
    const certs = { latenciesMs: certRuns.flatMap((r) => r.latenciesMs), errors: sum(certRuns, "errors") };
    const empty = { latenciesMs: emptyRuns.flatMap((r) => r.latenciesMs) };
    const certCpuUs = median(certRuns.map((r) => r.serverCpuUs));
    const emptyCpuUs = median(emptyRuns.map((r) => r.serverCpuUs));
    const floorRate = median(floorRuns.map(rateOf));
    const floorCpuUs = median(floorRuns.map((r) => r.serverCpuUs));
    const sessionRate = median(sessionRuns.map(rateOf));
    const sessionCpuUs = median(sessionRuns.map((r) => r.serverCpuUs));
    // CPU time, not wall time: a loaded machine preempts the signing loop too.
    const signUs = median(signCpus);

    const hashMs = await singleHashMs();
    const throttle = await throttleCostUs(backend);
    const bound = cores * (1000 / hashMs);
    const logins = await inWorker({ ...base, mode: "logins", concurrency: cores * 4, durationMs: 8000 });
    const loginRate = logins.count / (logins.elapsedMs / 1000);

    return {
      title: `auth gRPC (IssueUserCerts, AuthenticateLocal), ${BACKEND === "postgres" ? "PostgreSQL" : "file SQLite"}`,
      rows: [
        {
          name: "raw Ed25519 crypto.sign, 1 core (baseline)",
          perSecond: raw,
          unit: "signs",
          note: `median of ${ROUNDS}, ${signUs.toFixed(0)} us CPU each`,
        },
        {
          name: "IssueUserCerts over gRPC TLS 1.3, 32 in flight",
          perSecond: certRate,
          unit: "certs",
          p50Ms: percentile(certs.latenciesMs, 50),
          p99Ms: percentile(certs.latenciesMs, 99),
          note: `median of ${ROUNDS}, ${certs.errors} errors, server ${certCpuUs.toFixed(0)} us CPU/call${dbNote(certRuns)}`,
        },
        {
          name: `IssueUserCerts floor: session, sign, ${process.env.SVC_BENCH_CERT_FLOOR_AUDIT === "0" ? "no audit" : "audit commit"}, no policy`,
          perSecond: floorRate,
          unit: "certs",
          note: `${sum(floorRuns, "errors")} errors, server ${floorCpuUs.toFixed(0)} us CPU/call${dbNote(floorRuns)}`,
        },
        {
          name: "GetClusterInfo (no work) over gRPC, 32 in flight",
          perSecond: emptyRate,
          unit: "calls",
          p50Ms: percentile(empty.latenciesMs, 50),
          p99Ms: percentile(empty.latenciesMs, 99),
          note: `transport floor, server ${emptyCpuUs.toFixed(0)} us CPU/call${dbNote(emptyRuns)}`,
        },
        {
          name: "GetSession (a user's session checked) over gRPC, 32 in flight",
          perSecond: sessionRate,
          unit: "calls",
          note: `${sum(sessionRuns, "errors")} errors, authenticated floor, server ${sessionCpuUs.toFixed(0)} us CPU/call${dbNote(sessionRuns)}`,
        },
        {
          name: `argon2id bound: ${cores} cores / ${hashMs.toFixed(1)} ms`,
          perSecond: bound,
          unit: "hashes",
          note: `m=${ARGON2_PARAMS.memoryKiB}KiB t=${ARGON2_PARAMS.passes} p=${ARGON2_PARAMS.parallelism}`,
        },
        {
          name: `AuthenticateLocal over gRPC, ${cores * 4} in flight`,
          perSecond: loginRate,
          unit: "logins",
          p50Ms: percentile(logins.latenciesMs, 50),
          p99Ms: percentile(logins.latenciesMs, 99),
          note: `${logins.errors} errors`,
        },
        {
          name: "login throttle bookkeeping",
          perSecond: 1e6 / throttle.fresh,
          unit: "logins",
          note: `new address ${throttle.fresh.toFixed(0)} us, known address ${throttle.known.toFixed(0)} us, refused attempt ${throttle.refused.toFixed(0)} us`,
        },
      ],
      ratios: [
        { name: "IssueUserCerts / raw sign", ratio: certRate / raw, goal: 0.4 },
        { name: "IssueUserCerts / empty RPC (info)", ratio: certRate / emptyRate },
        // The ceiling of the goal above on this transport: an RPC that does nothing.
        { name: "empty RPC / raw sign (info: transport ceiling)", ratio: emptyRate / raw },
        // Per core-second of the server thread, contention-proof: sign CPU / server CPU per cert.
        { name: "server CPU: raw sign / IssueUserCerts (info)", ratio: signUs / certCpuUs },
        // Auth's own work per certificate: what it costs above an RPC that does nothing, in
        // signatures (issue 17: at most 2).
        {
          name: "(IssueUserCerts - empty RPC) CPU / sign CPU",
          ratio: (certCpuUs - emptyCpuUs) / signUs,
          goal: 2,
          lowerIsBetter: true,
        },
        // The same above an RPC that checks the caller's session too: the certificate's own part.
        {
          name: "(IssueUserCerts - GetSession) CPU / sign CPU (info)",
          ratio: (certCpuUs - sessionCpuUs) / signUs,
          lowerIsBetter: true,
        },
        // The floor above the empty RPC: the part of the goal's budget no trimming of auth returns.
        {
          name: "(floor - empty RPC) CPU / sign CPU (info: the least the goal can measure)",
          ratio: (floorCpuUs - emptyCpuUs) / signUs,
          lowerIsBetter: true,
        },
        // Auth's policy (roles, MFA, logins, the certificate journal) above the floor.
        {
          name: "(IssueUserCerts - floor) CPU / sign CPU (info: auth's policy)",
          ratio: (certCpuUs - floorCpuUs) / signUs,
          lowerIsBetter: true,
        },
        { name: "logins / hash bound", ratio: loginRate / bound, goal: 0.9 },
        // What throttling adds to a login, next to the argon2id verification it always pays.
        {
          name: "throttle bookkeeping / one argon2id verify (info)",
          ratio: throttle.fresh / (hashMs * 1000),
          lowerIsBetter: true,
        },
      ],
    };
  } finally {
    await floor.close();
    await env.close();
    await backend.close();
    await pg?.stop();
    await rm(dir, { recursive: true, force: true });
  }
}
