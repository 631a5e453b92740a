// Auth throughput against same-run baselines:
// - IssueUserCerts calls/s over gRPC TLS 1.3 with real sessions (session lookup, RBAC, signing,
//   audit append on SQLite) vs raw Ed25519 crypto.sign on one core. Goal >= 40 %. p50/p99 too.
// - AuthenticateLocal logins/s vs the argon2id bound (cores / single hash time). Goal >= 90 %.
// The gRPC client load runs in a worker thread so the server keeps the main thread to itself.
import { generateKeyPairSync, randomBytes, sign } from "node:crypto";
import { availableParallelism } from "node:os";
import { isMainThread, parentPort, Worker, workerData } from "node:worker_threads";
import { generateSshKeyPair } from "../core/certs/ssh-keys.ts";
import { callUnary, createAuthClient, userMetadata } from "../server/auth/client.ts";
import { ARGON2_PARAMS, hashPassword, verifyPassword } from "../server/auth/passwords.ts";
import { PASSWORD, startAuthEnv } from "../test/auth-fixture.ts";
import { type BenchReport, percentile } from "./report.ts";

interface LoadJob {
  mode: "certs" | "logins" | "empty";
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

async function runLoad(job: LoadJob): Promise<LoadResult> {
  const client = createAuthClient({ address: job.address, caPems: [job.caPem], serverName: "localhost" });
  const latencies: number[] = [];
  let errors = 0;
  const one = async (i: number): Promise<void> => {
    const t = performance.now();
    try {
      if (job.mode === "certs") {
        const sid = job.sessionIds[i % job.sessionIds.length] ?? "";
        await callUnary(
          client,
          "IssueUserCerts",
          { ssh_public_key: job.publicKey, ttl_seconds: 300 },
          userMetadata(sid),
        );
      } else if (job.mode === "empty") {
        await callUnary(client, "GetClusterInfo", {});
      } else {
        await callUnary(client, "AuthenticateLocal", {
          username: "bob",
          password: PASSWORD,
          client_address: "",
        });
      }
      latencies.push(performance.now() - t);
    } catch {
      errors++;
    }
  };
  // Warm-up: connection, JIT, caches.
  for (let i = 0; i < 5; i++) await one(i);
  latencies.length = 0;
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
  runLoad(job).then(
    (r) => parentPort?.postMessage(r),
    (err: unknown) => parentPort?.postMessage({ error: String(err) }),
  );
}

function inWorker(job: LoadJob): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const w = new Worker(new URL(import.meta.url), { workerData: { authBenchJob: job } });
    w.once("message", (m: LoadResult | { error: string }) => {
      void w.terminate();
      if ("error" in m) reject(new Error(m.error));
      else resolve(m);
    });
    w.once("error", reject);
  });
}

function rawSignRate(durationMs: number): number {
  const { privateKey } = generateKeyPairSync("ed25519");
  const tbs = randomBytes(320); // about the size of a user certificate's signed part
  for (let i = 0; i < 1000; i++) sign(null, tbs, privateKey);
  const start = performance.now();
  let n = 0;
  while (performance.now() - start < durationMs) {
    for (let i = 0; i < 200; i++) sign(null, tbs, privateKey);
    n += 200;
  }
  return n / ((performance.now() - start) / 1000);
}

async function singleHashMs(): Promise<number> {
  const phc = await hashPassword("some password for timing");
  await verifyPassword("warm up", phc);
  const n = 10;
  const start = performance.now();
  for (let i = 0; i < n; i++) await verifyPassword("some password for timing", phc);
  return (performance.now() - start) / n;
}

export default async function bench(): Promise<BenchReport> {
  const cores = availableParallelism();
  const env = await startAuthEnv();
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

    const raw = rawSignRate(3000);
    const certs = await inWorker({ ...base, mode: "certs", concurrency: 32, durationMs: 8000 });
    const certRate = certs.count / (certs.elapsedMs / 1000);
    // The floor of the transport: an RPC that does no work, same TLS channel and interceptor.
    const empty = await inWorker({ ...base, mode: "empty", concurrency: 32, durationMs: 4000 });
    const emptyRate = empty.count / (empty.elapsedMs / 1000);

    const hashMs = await singleHashMs();
    const bound = cores * (1000 / hashMs);
    const logins = await inWorker({ ...base, mode: "logins", concurrency: cores * 4, durationMs: 8000 });
    const loginRate = logins.count / (logins.elapsedMs / 1000);

    return {
      title: "auth gRPC (IssueUserCerts, AuthenticateLocal)",
      rows: [
        { name: "raw Ed25519 crypto.sign, 1 core (baseline)", perSecond: raw, unit: "signs" },
        {
          name: "IssueUserCerts over gRPC TLS 1.3, 32 in flight",
          perSecond: certRate,
          unit: "certs",
          p50Ms: percentile(certs.latenciesMs, 50),
          p99Ms: percentile(certs.latenciesMs, 99),
          note: `${certs.errors} errors`,
        },
        {
          name: "GetClusterInfo (no work) over gRPC, 32 in flight",
          perSecond: emptyRate,
          unit: "calls",
          p50Ms: percentile(empty.latenciesMs, 50),
          p99Ms: percentile(empty.latenciesMs, 99),
          note: "transport floor",
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
      ],
      ratios: [
        { name: "IssueUserCerts / raw sign", ratio: certRate / raw, goal: 0.4 },
        { name: "IssueUserCerts / empty RPC (info)", ratio: certRate / emptyRate },
        { name: "logins / hash bound", ratio: loginRate / bound, goal: 0.9 },
      ],
    };
  } finally {
    await env.close();
  }
}
