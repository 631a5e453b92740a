// Locks, lock created -> enforced at the edge, on the real binaries (test/locks-kit.ts: `svcd start`,
// N `svcd agent` processes, OpenSSH sessions, the proxy's browser terminal):
//   1. CreateLock sent -> a live OpenSSH session of the locked user ended, on each of N agents
//      (p50/p99 over every agent of every repetition);
//   2. CreateLock sent -> that user's browser terminal through the proxy closed.
// Baseline, same run: a plain unary gRPC round trip to the same auth (ListLocks, an admin's call).
// Goal: p99 <= 1 s for both (ratios against 1 s), reported with the baseline ratio for scale.
import { callUnary, userMetadata } from "../server/auth/client.ts";
import { waitFor } from "../test/cli-fixture.ts";
import { startLocksWorld } from "../test/locks-kit.ts";
import type { BenchReport, BenchRow } from "./report.ts";
import { percentile } from "./report.ts";

const NODES = Number(process.env.SVC_BENCH_LOCK_NODES ?? 4);
const SAMPLES = Number(process.env.SVC_BENCH_LOCK_SAMPLES ?? 20);
const BASELINE_CALLS = 200;
const GOAL_MS = 1000;

export default async function locksBench(): Promise<BenchReport> {
  const w = await startLocksWorld({ nodes: NODES });
  try {
    const admin = userMetadata(await w.session("admin"));
    const alice = await w.session("alice");
    const first = w.nodes[0];
    if (!first) throw new Error("no node");

    // Baseline: unary round trips to the same auth, after a warm-up.
    for (let i = 0; i < 20; i++) await callUnary(w.client, "ListLocks", {}, admin);
    const unaryMs: number[] = [];
    for (let i = 0; i < BASELINE_CALLS; i++) {
      const t0 = performance.now();
      await callUnary(w.client, "ListLocks", {}, admin);
      unaryMs.push(performance.now() - t0);
    }

    const killedMs: number[] = [];
    const terminalMs: number[] = [];
    const createMs: number[] = [];
    let byProxy = 0;
    for (let r = 0; r < SAMPLES; r++) {
      const sessions = await Promise.all(w.nodes.map((n) => w.openSsh(w.aliceCerts, n)));
      const term = await w.terminal(alice, first);
      await term.waitControl("ready");
      const t0 = performance.now();
      const ended = sessions.map((s) => s.exited.then(() => performance.now() - t0));
      const termClosed = term.closed.then((c) => ({ ms: performance.now() - t0, code: c.code }));
      const name = await w.lock({ user: "alice" }, `bench ${r}`);
      createMs.push(performance.now() - t0);
      killedMs.push(...(await Promise.all(ended)));
      const t = await termClosed;
      terminalMs.push(t.ms);
      if (t.code === 4403) byProxy++;
      await w.unlock(name);
      await Promise.all(
        w.nodes.map((n) => waitFor(() => w.loginWorks(w.aliceCerts, n), `${n.name} unlocked`)),
      );
      await waitFor(async () => (await w.web("/v1/webapi/session", alice)).status === 200, "session back");
    }

    const row = (name: string, s: number[], note?: string): BenchRow => ({
      name,
      p50Ms: percentile(s, 50),
      p99Ms: percentile(s, 99),
      ...(note ? { note } : {}),
    });
    const unaryP50 = percentile(unaryMs, 50);
    return {
      title: `locks: lock created -> enforced (svcd start, ${NODES} svcd agent processes, OpenSSH, proxy terminal)`,
      rows: [
        row(
          "CreateLock sent -> OpenSSH session ended",
          killedMs,
          `${NODES} agents x ${SAMPLES} locks = ${killedMs.length} samples`,
        ),
        row(
          "CreateLock sent -> proxy terminal closed",
          terminalMs,
          `${SAMPLES} samples, ${byProxy} closed by the proxy's own enforcement (4403)`,
        ),
        row("CreateLock round trip", createMs, `${SAMPLES} samples`),
        row("baseline: unary gRPC round trip (ListLocks)", unaryMs, `${BASELINE_CALLS} samples`),
      ],
      ratios: [
        {
          name: "lock -> session ended p99 / 1 s",
          ratio: percentile(killedMs, 99) / GOAL_MS,
          goal: 1,
          lowerIsBetter: true,
        },
        {
          name: "lock -> proxy terminal closed p99 / 1 s",
          ratio: percentile(terminalMs, 99) / GOAL_MS,
          goal: 1,
          lowerIsBetter: true,
        },
        {
          name: "lock -> session ended p50 / unary gRPC p50",
          ratio: percentile(killedMs, 50) / unaryP50,
          lowerIsBetter: true,
        },
      ],
    };
  } finally {
    await w.close();
  }
}
