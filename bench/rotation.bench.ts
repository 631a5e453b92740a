// CA rotation reaching a fleet: `svcd start` as a process and N agents (runAgent, in this process,
// each joined with its own token) watching trust. For every phase change of a full user_ssh and
// host_ssh rotation (init, update_clients, update_servers, standby), the time from the admin's
// RotateCertAuthority call until each agent holds a trust snapshot with the new phase and exactly
// the CA keys GetPublicKeys then answers (p50/p99 over agents x phases). Baseline in the same run:
// one heartbeat round trip from the same agents (a unary call on the same channel to the same
// auth), so the ratio says how many round trips a rotation costs to reach everyone. Also: at
// host_ssh update_servers, the time until each agent's own host certificate is re-issued by the
// new key (rotation-follow.ts asks for a renewal at once).
//   npm run bench -- rotation        (SVC_BENCH_ROTATION_AGENTS=20 by default)
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { type RunningAgent, runAgent } from "../server/agent/main.ts";
import { sshSignedBy } from "../server/agent/rotation-follow.ts";
import type { TrustSnapshotView } from "../server/trust/watcher.ts";
import { startRotationPlatform } from "../test/rotation-fixture.ts";
import type { BenchReport, BenchRow } from "./report.ts";
import { percentile } from "./report.ts";

const AGENTS = Number(process.env.SVC_BENCH_ROTATION_AGENTS ?? 20);
const HEARTBEATS = 5;
const PHASES = ["init", "update_clients", "update_servers", "standby"] as const;
const silent = pino({ level: "silent" });

const sameSet = (a: readonly string[], b: readonly string[]): boolean => {
  const x = new Set(a.map((k) => k.trim()));
  const y = new Set(b.map((k) => k.trim()));
  return x.size === y.size && [...x].every((k) => y.has(k));
};

/** Resolves with the arrival time (performance.now()) of the first snapshot `want` accepts. */
function arrival(
  agent: RunningAgent,
  want: (s: TrustSnapshotView) => boolean,
  ms = 120_000,
): Promise<number> {
  const w = agent.trust.watcher;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      w.off("snapshot", on);
      reject(new Error(`agent ${agent.hostname}: no matching snapshot within ${ms} ms`));
    }, ms);
    const on = (s: TrustSnapshotView): void => {
      if (!want(s)) return;
      clearTimeout(timer);
      w.off("snapshot", on);
      resolve(performance.now());
    };
    w.on("snapshot", on);
  });
}

function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`timed out: ${what}`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

export default async function rotationBench(): Promise<BenchReport> {
  const dir = await mkdtemp(join(tmpdir(), "svc-bench-rotation-"));
  const p = await startRotationPlatform(dir);
  const agents: RunningAgent[] = [];
  try {
    for (let i = 0; i < AGENTS; i++) {
      agents.push(
        await runAgent({
          authAddress: `127.0.0.1:${p.ports.auth}`,
          caFile: p.caFile,
          token: await p.nodeToken(`bench-${i}`),
          dataDir: join(dir, `agent-${i}`),
          listen: "127.0.0.1:0",
          hostname: `bench-${i}`,
          logger: silent,
        }),
      );
    }
    // Every agent has its first snapshot before anything is timed.
    const firstBy = performance.now() + 120_000;
    for (const a of agents) {
      while (!a.trust.watcher.current()) {
        if (performance.now() > firstBy) throw new Error(`agent ${a.hostname}: no first trust snapshot`);
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    process.stderr.write(`rotation bench: ${AGENTS} agents hold a trust snapshot\n`);

    const heartbeatMs: number[] = [];
    for (let r = 0; r < HEARTBEATS; r++) {
      await Promise.all(
        agents.map(async (a) => {
          const started = performance.now();
          await a.heartbeat();
          heartbeatMs.push(performance.now() - started);
        }),
      );
    }

    const perType: Record<string, number[]> = {};
    const reissueMs: number[] = [];
    const all: number[] = [];
    for (const type of ["user_ssh", "host_ssh"]) {
      perType[type] = [];
      for (const phase of PHASES) {
        // Listening before the call: a snapshot may arrive before the call's answer does.
        let expected: { user: string[]; host: string[] } | undefined;
        const seen = agents.map((a) =>
          arrival(a, (s) => {
            const ca = s.authorities.find((c) => c.type === type);
            if (ca?.phase !== phase) return false;
            // The keys are checked once the expected set is known (the phase alone already
            // proves the snapshot is from after the change).
            return (
              expected === undefined ||
              (sameSet(s.publicKeys.user_ca_ssh_public_keys, expected.user) &&
                sameSet(s.publicKeys.host_ca_ssh_public_keys, expected.host))
            );
          }),
        );
        // host_ssh update_servers: each agent renews at once (rotation-follow.ts); timed until its
        // first renewal, which must leave it with a host certificate from the new active key.
        const reissued =
          type === "host_ssh" && phase === "update_servers"
            ? agents.map(
                (a) =>
                  new Promise<number>((resolve) =>
                    a.credentials.once("renewed", () => resolve(performance.now())),
                  ),
              )
            : [];
        const t0 = performance.now();
        const status = await p.rotate(type, phase);
        const activeKey = status.keys.find((k) => k.role === "active")?.public_key;
        const pub = await p.publicKeys();
        expected = { user: pub.user_ca_ssh_public_keys, host: pub.host_ca_ssh_public_keys };
        const times = await Promise.all(seen);
        for (const t of times) {
          perType[type]?.push(t - t0);
          all.push(t - t0);
        }
        for (const t of await withTimeout(Promise.all(reissued), 120_000, "host certificates re-issued"))
          reissueMs.push(t - t0);
        if (reissued.length > 0)
          for (const a of agents)
            if (!activeKey || !sshSignedBy(a.credentials.identity().hostCertificate, activeKey))
              throw new Error(`agent ${a.hostname}: host certificate not from the new key after renewal`);
        process.stderr.write(`rotation bench: ${type} ${phase} reached every agent\n`);
      }
    }

    const row = (name: string, s: number[], note: string): BenchRow => ({
      name,
      p50Ms: percentile(s, 50),
      p99Ms: percentile(s, 99),
      note,
    });
    const hbP99 = percentile(heartbeatMs, 99);
    return {
      title: `rotation: phase change -> every agent holds the new trust (${AGENTS} agents, svcd start process)`,
      rows: [
        row("user_ssh phase change -> agent snapshot", perType.user_ssh ?? [], `${AGENTS} agents x 4 phases`),
        row("host_ssh phase change -> agent snapshot", perType.host_ssh ?? [], `${AGENTS} agents x 4 phases`),
        row("all phase changes -> agent snapshot", all, `${all.length} samples`),
        row(
          "host_ssh update_servers -> agent host cert re-issued",
          reissueMs,
          `${reissueMs.length} agents, RenewNodeCredentials at once`,
        ),
        row("baseline: one heartbeat round trip", heartbeatMs, `${heartbeatMs.length} samples, same agents`),
      ],
      ratios: [
        {
          name: "phase change -> all agents p99 / heartbeat p99",
          ratio: percentile(all, 99) / hbP99,
          lowerIsBetter: true,
        },
        {
          name: "phase change -> all agents p99 / 1 s",
          ratio: percentile(all, 99) / 1000,
          goal: 1,
          lowerIsBetter: true,
        },
      ],
    };
  } finally {
    for (const a of agents) await a.close().catch(() => undefined);
    await p.stop();
    await rm(dir, { recursive: true, force: true });
  }
}
