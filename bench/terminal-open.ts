// Opening terminals (issue 17), a part of the terminal benchmark, in two phases on the same paths:
// direct `ssh` with a user certificate to OpenSSH sshd (the baseline), the proxy's terminal
// WebSocket to that sshd (what the proxy adds), and the WebSocket to our agent (our whole path).
// - latency (bench/terminal-latency.ts): SVC_BENCH_TERMINAL_LATENCY_OPENS opens per path, one in
//   flight, paths interleaved: p50/p99 per path, the differences to OpenSSH, and the proxy's stage
//   stamps ("platform open");
// - rate: SVC_BENCH_TERMINAL_SESSIONS idle sessions per path, SVC_BENCH_TERMINAL_IN_FLIGHT opening
//   at a time, kept open until all are: new sessions/s, CPU per open of the proxy and the agent.
// Each open is timed until its shell has run a command. Where the time goes comes from stage
// timestamps taken in the proxy (TerminalOpenTimings) and in the agent (SessionOpenTimings); the
// proxy's memory per idle session is read at the very end (its forced GCs stay out of the timed
// parts), with the agent's sessions all open and again once they closed.
import { join } from "node:path";
import type { SessionOpenTimings } from "../server/agent/ssh-server.ts";
import type { TerminalOpenTimings } from "../server/proxy/terminal-route.ts";
import type { AgentAuthEnv } from "../test/agent-fixture.ts";
import { type BenchRatio, type BenchRow, percentile } from "./report.ts";
import { startBenchAgent } from "./terminal-agent-process.ts";
import { latencyPhase, type PathLatency } from "./terminal-latency.ts";
import type { Session } from "./terminal-session.ts";
import type { ProxyMemory, ProxyProcess } from "./tunnel-proxy-process.ts";

const SESSIONS = Number(process.env["SVC_BENCH_TERMINAL_SESSIONS"] ?? 200);
const IN_FLIGHT = Number(process.env["SVC_BENCH_TERMINAL_IN_FLIGHT"] ?? 8);
const LATENCY_OPENS = Number(process.env["SVC_BENCH_TERMINAL_LATENCY_OPENS"] ?? 200);
const OPENED_MARK = "OPEN-42";

interface Opened {
  sessions: Session[];
  /** ms from starting to open each session to its shell's answer to a command */
  latencies: number[];
  seconds: number;
  failure?: string;
}

/**
 * Opens `n` sessions with `inFlight` opening at a time and keeps them open (idle). Each counts as
 * open once its shell has run `echo` (the marker is assembled by the shell, so the echoed command
 * line never matches it).
 */
async function openMany(open: () => Promise<Session>, n: number, inFlight: number): Promise<Opened> {
  const out: Opened = { sessions: [], latencies: [], seconds: 0 };
  let next = 0;
  const started = performance.now();
  const worker = async (): Promise<void> => {
    while (next < n && out.failure === undefined) {
      next++;
      const t0 = performance.now();
      try {
        const s = await open();
        out.sessions.push(s);
        const seen = s.until(OPENED_MARK, 60_000);
        s.write("echo OP''EN-$((40+2))\r");
        await seen;
        out.latencies.push(performance.now() - t0);
      } catch (err) {
        out.failure = err instanceof Error ? err.message : String(err);
      }
    }
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
  out.seconds = (performance.now() - started) / 1000;
  return out;
}

const pause = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function stageRows<T extends object>(label: string, samples: readonly T[]): BenchRow[] {
  return (Object.keys(samples[0] ?? {}) as (keyof T)[]).map((k) => {
    const xs = samples.map((x) => Number(x[k]));
    return { name: `  ${label}: ${String(k)}`, p50Ms: percentile(xs, 50), p99Ms: percentile(xs, 99) };
  });
}

export async function openBench(o: {
  env: AgentAuthEnv;
  dir: string;
  proxy: ProxyProcess;
  cleanups: Array<() => Promise<unknown> | unknown>;
  /** a direct ssh session to the agentless sshd */
  ssh: () => Promise<Session>;
  /** a terminal WebSocket through the proxy to a node */
  openWs: (node: string) => Promise<Session>;
}): Promise<{ rows: BenchRow[]; ratios: BenchRatio[] }> {
  const { env, proxy } = o;
  const rows: BenchRow[] = [];
  const agent = await startBenchAgent({
    authAddress: env.address,
    authServerName: env.serverName,
    caPin: env.pin,
    token: await env.addToken("bench-agent-token"),
    dataDir: join(o.dir, "agent"),
    listen: "127.0.0.1:0",
    hostname: "bench-agent",
    heartbeatIntervalSeconds: 3600,
  });
  o.cleanups.push(() => agent.stop());
  // One warm-up session per path (code loaded, connections to auth up), not timed.
  const paths = {
    "ssh -> sshd": o.ssh,
    "ws -> sshd": () => o.openWs("bench-sshd"),
    "ws -> agent": () => o.openWs("bench-agent"),
  };
  type OpenPath = keyof typeof paths;
  const names = Object.keys(paths) as OpenPath[];
  for (const p of names) {
    // The proxy's inventory copy learns of the agent that just joined from auth's feed: until
    // then the node is unknown to it (30 s at most here).
    for (let attempt = 1; ; attempt++) {
      const w = await openMany(paths[p], 1, 1);
      for (const s of w.sessions) s.close();
      if (!w.failure) break;
      if (attempt >= 30 || !w.failure.includes("unknown node")) throw new Error(`${p}: ${w.failure}`);
      await pause(1000);
    }
  }
  await pause(1000);

  // Latency: one open in flight.
  const lat1 = await latencyPhase({
    paths,
    viaProxy: new Set<OpenPath>(["ws -> sshd", "ws -> agent"]),
    n: LATENCY_OPENS,
    proxy,
    agent,
  });
  rows.push(...latencyRows(lat1.byPath, lat1.agent, lat1.seconds));
  await pause(3000);
  await proxy.opens();
  await agent.opens();

  const opened: Partial<Record<OpenPath, Opened>> = {};
  const proxyStages: Partial<Record<OpenPath, TerminalOpenTimings[]>> = {};
  let after: ProxyMemory | undefined;
  let loaded: ProxyMemory | undefined;
  // CPU per opened session: the proxy's and the agent's own processes; this process holds auth
  // and the clients (ssh processes for the direct path are not counted here).
  const cpuRows: BenchRow[] = [];
  for (const p of names) {
    const cpu0 = {
      proxy: (await proxy.cpu()).cpuMicros,
      agent: await agent.cpuMicros(),
      self: process.cpuUsage(),
    };
    const r = await openMany(paths[p], SESSIONS, IN_FLIGHT);
    const n = Math.max(1, r.latencies.length);
    const self = process.cpuUsage(cpu0.self);
    cpuRows.push({
      name: `  CPU per open ${p}`,
      note: [
        `proxy ${(((await proxy.cpu()).cpuMicros - cpu0.proxy) / n / 1000).toFixed(2)} ms`,
        `agent ${(((await agent.cpuMicros()) - cpu0.agent) / n / 1000).toFixed(2)} ms`,
        `auth + clients ${((self.user + self.system) / n / 1000).toFixed(2)} ms`,
      ].join(", "),
    });
    o.cleanups.push(() => {
      for (const s of r.sessions) s.close();
    });
    opened[p] = r;
    proxyStages[p] = await proxy.opens();
    // The last path: memory with its sessions open, then once they closed (both after every
    // timed part, so the forced GCs of the reads are in none).
    const last = p === names[names.length - 1];
    if (last) {
      await pause(3000);
      loaded = await proxy.memory();
    }
    for (const s of r.sessions) s.close();
    r.sessions.length = 0;
    // The closed sessions' processes exit before the next path is timed.
    await pause(3000);
    if (last) after = await proxy.memory();
    rows.push({
      name: `open ${p} (${r.latencies.length} idle, ${IN_FLIGHT} in flight)`,
      perSecond: r.latencies.length / r.seconds,
      unit: "sessions",
      p50Ms: percentile(r.latencies, 50),
      p99Ms: percentile(r.latencies, 99),
      note: `${(r.latencies.length / r.seconds).toFixed(2)}/s, ${r.seconds.toFixed(1)} s${r.failure ? `; stopped early: ${r.failure}` : ""}`,
    });
  }
  rows.push(...cpuRows);
  const agentStages: SessionOpenTimings[] = await agent.opens();
  rows.push(...stageRows(`${IN_FLIGHT} in flight: proxy ws -> sshd`, proxyStages["ws -> sshd"] ?? []));
  rows.push(...stageRows(`${IN_FLIGHT} in flight: proxy ws -> agent`, proxyStages["ws -> agent"] ?? []));
  rows.push(...stageRows(`${IN_FLIGHT} in flight: agent`, agentStages));

  const lat = (p: OpenPath, q: number): number => percentile(opened[p]?.latencies ?? [], q);
  const rate = (p: OpenPath): number => {
    const r = opened[p];
    return r ? r.latencies.length / r.seconds : 0;
  };
  rows.push({
    name: `open added over OpenSSH (ws -> agent minus ssh), ${IN_FLIGHT} in flight`,
    p50Ms: lat("ws -> agent", 50) - lat("ssh -> sshd", 50),
    p99Ms: lat("ws -> agent", 99) - lat("ssh -> sshd", 99),
  });
  // Per session, from the proxy's stamps: request received -> shell channel ready is all the
  // platform adds in front of the shell; without the proxy's own RPCs to auth (session check,
  // per-node decision, certificate) it is the proxy's and the agent's work plus the agent's
  // AuthorizeSshLogin.
  for (const p of ["ws -> sshd", "ws -> agent"] as const) {
    const t = proxyStages[p] ?? [];
    const own = platformOwn(t);
    rows.push({
      name: `platform open ${p}, ${IN_FLIGHT} in flight, without session, node decision, cert`,
      p50Ms: percentile(own, 50),
      p99Ms: percentile(own, 99),
    });
  }
  const count = opened["ws -> agent"]?.latencies.length ?? 0;
  const perSession = (k: keyof ProxyMemory): number =>
    after && loaded ? (loaded[k] - after[k]) / Math.max(1, count) : Number.NaN;
  const rssKiB = perSession("rss") / 1024;
  const jsKiB = (perSession("heapUsed") + perSession("external")) / 1024;
  rows.push({
    name: `proxy memory per idle session (${count} open)`,
    note: `RSS +${rssKiB.toFixed(1)} KiB, V8 heap+external +${jsKiB.toFixed(1)} KiB`,
  });
  return {
    rows,
    ratios: [
      {
        name: "new sessions/s ws -> agent / ssh -> sshd",
        ratio: rate("ws -> agent") / rate("ssh -> sshd"),
        goal: 0.5,
      },
      {
        name: "open p99 added over OpenSSH, 1 in flight (ms)",
        ratio:
          percentile(lat1.byPath["ws -> agent"].latencies, 99) -
          percentile(lat1.byPath["ssh -> sshd"].latencies, 99),
        goal: 20,
        lowerIsBetter: true,
      },
      {
        name: "platform open ws -> agent p99, 1 in flight (ms, stamps)",
        ratio: percentile(platformOwn(lat1.byPath["ws -> agent"].proxy), 99),
        goal: 20,
        lowerIsBetter: true,
      },
      // The larger of the two views, so neither a pre-reserved heap nor native buffers hide cost.
      {
        name: "proxy memory per idle session (KiB)",
        ratio: Math.max(rssKiB, jsKiB),
        goal: 256,
        lowerIsBetter: true,
      },
    ],
  };
}

/** Per open, from the proxy's stamps: request received -> shell channel ready, without the three stages that are (or were) RPCs to auth: session check, per-node decision, certificate. */
function platformOwn(t: readonly TerminalOpenTimings[]): number[] {
  return t.map((x) => x.totalMs - x.sessionMs - x.authorizeMs - x.certMs);
}

function latencyRows(
  byPath: Record<"ssh -> sshd" | "ws -> sshd" | "ws -> agent", PathLatency>,
  agent: readonly SessionOpenTimings[],
  seconds: number,
): BenchRow[] {
  const rows: BenchRow[] = [];
  const q = (xs: readonly number[], p: number): number => percentile([...xs], p);
  for (const [p, r] of Object.entries(byPath) as [keyof typeof byPath, PathLatency][]) {
    rows.push({
      name: `open latency ${p} (1 in flight, ${r.latencies.length} opens)`,
      p50Ms: q(r.latencies, 50),
      p99Ms: q(r.latencies, 99),
      ...(p === "ssh -> sshd" ? {} : { note: `certificate reused on ${r.certsReused} of ${r.proxy.length}` }),
    });
  }
  const base = byPath["ssh -> sshd"].latencies;
  for (const p of ["ws -> sshd", "ws -> agent"] as const) {
    const xs = byPath[p].latencies;
    rows.push({
      name: `open latency added: ${p} minus ssh -> sshd (1 in flight)`,
      p50Ms: q(xs, 50) - q(base, 50),
      p99Ms: q(xs, 99) - q(base, 99),
    });
  }
  for (const p of ["ws -> sshd", "ws -> agent"] as const) {
    const t = byPath[p].proxy;
    rows.push({
      name: `platform open ${p}, 1 in flight, without session, node decision, cert`,
      p50Ms: q(platformOwn(t), 50),
      p99Ms: q(platformOwn(t), 99),
    });
    rows.push({
      name: `platform open ${p}, 1 in flight, request -> shell ready (all stages)`,
      p50Ms: q(
        t.map((x) => x.totalMs),
        50,
      ),
      p99Ms: q(
        t.map((x) => x.totalMs),
        99,
      ),
    });
  }
  rows.push(...stageRows("1 in flight: proxy ws -> sshd", byPath["ws -> sshd"].proxy));
  rows.push(...stageRows("1 in flight: proxy ws -> agent", byPath["ws -> agent"].proxy));
  rows.push(...stageRows("1 in flight: agent", agent));
  rows.push({ name: "latency phase", note: `${seconds.toFixed(1)} s` });
  return rows;
}
