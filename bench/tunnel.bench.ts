// Reverse tunnels (issue 15), everything in one run against one proxy process:
// - browser terminal throughput (base64 output through the terminal WebSocket) and keystroke echo
//   p50/p99 (one byte through a raw-mode cat) to a node agent reached through its reverse tunnel vs
//   the same kind of agent reached directly over TCP: the ratio is what the tunnel costs;
// - idle memory per tunnel in the proxy process (RSS and V8 heap+external growth / N, after GC);
// - 1,000 tunnelled agents on one proxy: its CPU % and memory while they stay connected and
//   exchange heartbeats. These are lightweight agents (bench/tunnel-fleet.ts: the agent's own
//   tunnel client with a real host-CA identity per node, no SSH server behind it), not 1,000
//   agent processes.
// The proxy runs in its own process (bench/tunnel-proxy-process.ts) so its CPU and memory are its
// own; auth and the lightweight agents run in this process, the two real agents in their own.
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startAgentAuthEnv, startAgentProcess } from "../test/agent-fixture.ts";
import { type BenchReport, type BenchRow, percentile } from "./report.ts";
import { echoSamples, type Session, startEcho, throughput, wsSession } from "./terminal-session.ts";
import { tunnelFleet } from "./tunnel-fleet.ts";
import { type ProxyMemory, startProxyProcess } from "./tunnel-proxy-process.ts";

const PUBLIC_HOST = "proxy.bench.test";
const PAYLOAD = Number(process.env["SVC_BENCH_TUNNEL_BYTES"] ?? 64 * 1024 * 1024);
const ROUNDS = 3;
const ECHO_SAMPLES = 600;
const IDLE_TUNNELS = Number(process.env["SVC_BENCH_TUNNEL_IDLE"] ?? 200);
const FLEET = Number(process.env["SVC_BENCH_TUNNEL_FLEET"] ?? 1000);
const CPU_WINDOW_MS = 30_000;

async function until(cond: () => Promise<boolean>, what: string, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

const MiB = 1024 * 1024;

/** user + system CPU ms of a process, from /proc (Linux; clock ticks of 10 ms). */
async function procCpuMs(pid: number | undefined): Promise<number> {
  if (pid === undefined) return Number.NaN;
  const stat = await readFile(`/proc/${pid}/stat`, "utf8");
  // Fields after the command name (which may hold spaces) start at ") ": utime is the 12th.
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(f[11]) + Number(f[12])) * 10;
}
const median = (xs: number[]): number => percentile(xs, 50);

export default async function tunnelBench(): Promise<BenchReport> {
  const cleanups: Array<() => Promise<unknown> | unknown> = [];
  const rows: BenchRow[] = [];
  try {
    const env = await startAgentAuthEnv({ heartbeatIntervalSeconds: 3600 });
    cleanups.push(() => env.close());
    const dir = await mkdtemp(join(tmpdir(), "svc-tunnel-bench-"));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const sessionId = await env.login("alice");

    const proxy = await startProxyProcess(env, PUBLIC_HOST);
    cleanups.push(() => proxy.stop());
    const proxyAddress = proxy.address;

    // Idle memory per tunnel, first, while the proxy's heap and RSS are still those of a fresh
    // process (terminal floods later leave freed pages that hide growth): lightweight agents
    // (bench/tunnel-fleet.ts), the proxy measured after a full GC. They stay connected.
    const fleet = tunnelFleet({ env, proxyAddress });
    cleanups.push(() => fleet.close());
    const base = await proxy.memory();
    const idleStart = performance.now();
    await fleet.grow(IDLE_TUNNELS);
    await until(async () => (await proxy.tunnels()) >= IDLE_TUNNELS, `${IDLE_TUNNELS} tunnels`);
    const idleSeconds = (performance.now() - idleStart) / 1000;
    await new Promise((r) => setTimeout(r, 3000));
    const idle = await proxy.memory();
    const per = (k: keyof ProxyMemory): number => (idle[k] - base[k]) / IDLE_TUNNELS / 1024;
    const rssKiB = per("rss");
    const jsKiB = per("heapUsed") + per("external");
    rows.push({
      name: `proxy memory per idle tunnel (${IDLE_TUNNELS} open)`,
      note: `RSS +${rssKiB.toFixed(1)} KiB, V8 heap +${per("heapUsed").toFixed(1)} KiB + external (TLS, nghttp2) +${per("external").toFixed(1)} KiB; opened in ${idleSeconds.toFixed(1)} s`,
    });

    // Two agents of the same build: one dialled over TCP, one reached through its tunnel (it has
    // no listening port and reaches auth through the proxy's public port too).
    const direct = startAgentProcess({
      authAddress: env.address,
      authServerName: env.serverName,
      caPin: env.pin,
      token: await env.addToken("bench-direct"),
      dataDir: join(dir, "direct"),
      listen: "127.0.0.1:0",
      hostname: "bench-direct",
      heartbeatIntervalSeconds: 3600,
    });
    cleanups.push(() => direct.stop());
    const tunnelled = startAgentProcess({
      proxyAddress,
      tunnel: {},
      caPin: env.pin,
      token: await env.addToken("bench-tunnel"),
      dataDir: join(dir, "tunnel"),
      hostname: "bench-tunnel",
      heartbeatIntervalSeconds: 3600,
    });
    cleanups.push(() => tunnelled.stop());
    await direct.ready;
    await tunnelled.ready;
    await until(async () => (await proxy.tunnels()) >= IDLE_TUNNELS + 1, "the agent's tunnel").catch(
      (err: Error) => {
        throw new Error(`${err.message}; agent: ${tunnelled.stderr().slice(-2000)}`);
      },
    );

    const open = (node: string): Promise<Session> =>
      wsSession({
        url: `https://${proxyAddress}`,
        ca: env.cas.hostCa.certPem,
        servername: PUBLIC_HOST,
        sessionId,
        node,
      });
    const paths = { direct: "bench-direct", tunnel: "bench-tunnel" } as const;
    type PathName = keyof typeof paths;
    const names: PathName[] = ["direct", "tunnel"];

    // Throughput: interleaved rounds, a fresh session per round, median per path.
    // The proxy's CPU time per MiB says where a difference comes from (it relays both paths).
    const rates: Record<PathName, number[]> = { direct: [], tunnel: [] };
    const cpuPerMiB: Record<PathName, number[]> = { direct: [], tunnel: [] };
    const agentCpuPerMiB: Record<PathName, number[]> = { direct: [], tunnel: [] };
    const agentPid: Record<PathName, number | undefined> = {
      direct: direct.child.pid,
      tunnel: tunnelled.child.pid,
    };
    for (let r = 0; r < ROUNDS; r++) {
      for (const p of names) {
        const s = await open(paths[p]);
        try {
          s.write("stty -echo\r");
          await new Promise((res) => setTimeout(res, 300));
          const before = s.received();
          const c0 = await proxy.cpu();
          const a0 = await procCpuMs(agentPid[p]);
          rates[p].push(await throughput(s, PAYLOAD, { base64: true }));
          const c1 = await proxy.cpu();
          const a1 = await procCpuMs(agentPid[p]);
          const mib = (s.received() - before) / MiB;
          cpuPerMiB[p].push((c1.cpuMicros - c0.cpuMicros) / 1000 / mib);
          agentCpuPerMiB[p].push((a1 - a0) / mib);
        } finally {
          s.close();
        }
      }
    }
    for (const p of names) {
      rows.push({
        name: `throughput ${p} (${PAYLOAD / MiB} MiB as base64)`,
        perSecond: median(rates[p]) / MiB,
        unit: "MiB",
        note: `CPU per MiB: proxy ${median(cpuPerMiB[p]).toFixed(1)} ms, agent ${median(agentCpuPerMiB[p]).toFixed(1)} ms (the shell and base64 processes not counted)`,
      });
    }

    // Keystroke echo: one session per path, samples interleaved in blocks.
    const echo: Record<PathName, number[]> = { direct: [], tunnel: [] };
    const sessions: Partial<Record<PathName, Session>> = {};
    for (const p of names) {
      const s = await open(paths[p]);
      sessions[p] = s;
      await startEcho(s);
      await echoSamples(s, 20); // warm-up
    }
    for (let block = 0; block < 3; block++) {
      for (const p of names) {
        const s = sessions[p];
        if (s) echo[p].push(...(await echoSamples(s, ECHO_SAMPLES / 3)));
      }
    }
    for (const p of names) sessions[p]?.close();
    for (const p of names) {
      rows.push({
        name: `keystroke echo ${p}`,
        p50Ms: percentile(echo[p], 50),
        p99Ms: percentile(echo[p], 99),
      });
    }

    // 1,000 tunnelled agents: the rest of the fleet, then the proxy's CPU over a quiet window in
    // which every tunnel exchanges heartbeats (h2 PING both ways every 10 s).
    const fleetStart = performance.now();
    await fleet.grow(FLEET - fleet.size());
    await until(async () => (await proxy.tunnels()) >= FLEET + 1, `${FLEET} tunnels`, 180_000);
    const fleetSeconds = (performance.now() - fleetStart) / 1000;
    await new Promise((r) => setTimeout(r, 2000));
    const c0 = await proxy.cpu();
    await new Promise((r) => setTimeout(r, CPU_WINDOW_MS));
    const c1 = await proxy.cpu();
    const cpuPercent = ((c1.cpuMicros - c0.cpuMicros) / 1000 / (c1.wallMs - c0.wallMs)) * 100;
    const held = await proxy.tunnels();
    const loaded = await proxy.memory();
    rows.push({
      name: `proxy with ${FLEET} tunnelled agents (+1 real)`,
      note: `CPU ${cpuPercent.toFixed(2)} % of one core over ${CPU_WINDOW_MS / 1000} s idle with heartbeats; RSS ${(loaded.rss / MiB).toFixed(0)} MiB (fresh ${(base.rss / MiB).toFixed(0)}), V8 heap ${(loaded.heapUsed / MiB).toFixed(0)} MiB (fresh ${(base.heapUsed / MiB).toFixed(0)}); ${held} tunnels still up after the window; the last ${FLEET - IDLE_TUNNELS} connected in ${fleetSeconds.toFixed(1)} s`,
    });

    return {
      title:
        "reverse tunnels (terminal via tunnel vs direct TCP, same agent build; idle tunnels; 1,000 agents)",
      rows,
      ratios: [
        // Issue 15 sets no targets: ratios are reported; goals only for keeping every tunnel and
        // for memory, held to issue 6's bar for an idle terminal session (256 KiB).
        { name: "throughput tunnel / direct", ratio: median(rates.tunnel) / median(rates.direct) },
        {
          name: "keystroke p50 tunnel / direct",
          ratio: percentile(echo.tunnel, 50) / percentile(echo.direct, 50),
          lowerIsBetter: true,
        },
        {
          name: "keystroke p99 added by the tunnel (ms)",
          ratio: percentile(echo.tunnel, 99) - percentile(echo.direct, 99),
          lowerIsBetter: true,
        },
        // The larger of the two views, so neither a pre-reserved heap nor native buffers hide cost.
        {
          name: "proxy memory per idle tunnel (KiB)",
          ratio: Math.max(rssKiB, jsKiB),
          goal: 256,
          lowerIsBetter: true,
        },
        { name: `proxy CPU % with ${FLEET} idle tunnels`, ratio: cpuPercent, lowerIsBetter: true },
        { name: `tunnels up after the window / ${FLEET + 1}`, ratio: held / (FLEET + 1), goal: 1 },
      ],
    };
  } finally {
    for (const c of cleanups.reverse()) {
      try {
        await c();
      } catch {
        // keep cleaning
      }
    }
  }
}
