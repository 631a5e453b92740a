// Auth restarts under load (issue 17, docs/performance.md "Auth restarts (issue 17)"): the
// scenario of test/auth-restart.test.ts (2 svcd auth on PostgreSQL, 2 svcd proxy, a node agent;
// reads, logins, open and new browser terminals while each auth restarts with SIGTERM, then one
// with kill -9), reporting the failure counts and the read latency during the restarts against
// the steady state of the same run.
import { type RestartWorld, startRestartWorld } from "../test/auth-restart-kit.ts";
import { percentile, runRestartScenario } from "../test/auth-restart-load.ts";
import { startPostgres } from "../test/harness/postgres.ts";
import type { BenchReport, BenchRow } from "./report.ts";

/** Load before and after the restarts (the steady baseline). */
const STEADY_MS = 5_000;

export default async function bench(): Promise<BenchReport> {
  const server = await startPostgres();
  let world: RestartWorld | undefined;
  try {
    world = await startRestartWorld(server.url);
    const first = world.clients[0];
    if (!first) throw new Error("no proxy");
    const login = await world.login(first);
    if (login.status !== 200) throw new Error(`login: ${login.status} ${login.text}`);
    const r = await runRestartScenario(world, login.sessionId, { steadyMs: STEADY_MS });

    const steady = r.reads.filter((s) => s.phase === "steady" && s.ok).map((s) => s.ms);
    const during = r.reads.filter((s) => s.phase === "restart" && s.ok).map((s) => s.ms);
    const failed = (xs: Array<{ ok: boolean }>) => xs.filter((x) => !x.ok).length;
    const ms = (xs: Array<{ ok: boolean; ms: number }>) => xs.filter((x) => x.ok).map((x) => x.ms);
    const row = (name: string, xs: number[], note: string): BenchRow => ({
      name,
      p50Ms: percentile(xs, 50),
      p99Ms: percentile(xs, 99),
      note,
    });
    const rows: BenchRow[] = [
      row("GET /v1/webapi/session, steady", steady, `${steady.length} reads`),
      row(
        "GET /v1/webapi/session, during the restarts",
        during,
        `${during.length} reads, ${failed(r.reads)} failed in all`,
      ),
      row("login + read, whole run", ms(r.logins), `${r.logins.length} logins, ${failed(r.logins)} failed`),
      row(
        "new browser terminal (open, echo, close)",
        ms(r.newTerminals),
        `${r.newTerminals.length} opened, ${failed(r.newTerminals)} failed`,
      ),
      {
        name: "open browser terminals through the restarts",
        note: `${r.openTerminals} open, ${r.brokenTerminals.length} broken, ${r.openTerminals - r.aliveAfter} dead after, ${failed(r.echoRounds)} of ${r.echoRounds.length} echo rounds failed`,
      },
      { name: "auths stopped with SIGTERM", note: `exit codes ${r.drainedExitCodes.join(", ")}` },
    ];
    return {
      title: "auth restarts under load (2 auths on PostgreSQL, 2 proxies; SIGTERM each, then kill -9)",
      rows,
      ratios: [
        {
          name: "read p99 during restarts / steady p99",
          ratio: percentile(during, 99) / percentile(steady, 99),
          lowerIsBetter: true,
        },
        {
          name: "failed requests (reads+logins+terminals) / all",
          ratio:
            (failed(r.reads) + failed(r.logins) + failed(r.newTerminals) + r.brokenTerminals.length) /
            Math.max(1, r.reads.length + r.logins.length + r.newTerminals.length),
          goal: 0,
          lowerIsBetter: true,
        },
      ],
    };
  } finally {
    await world?.close();
    await server.stop();
  }
}
