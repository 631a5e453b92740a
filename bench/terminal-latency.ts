// Open latency with one open in flight (issue 17), a part of the terminal benchmark: `n` opens per
// path, one at a time, the paths interleaved (ssh, ws -> sshd, ws -> agent, ssh, ...) so each
// path sees the same machine. Each open is timed from its start until its shell has run `echo`,
// then closed. With nothing else opening, the proxy's and agent's stage stamps are their own
// work and their waits on each other, not a queue behind other opens' CPU.
import type { SessionOpenTimings } from "../server/agent/ssh-server.ts";
import type { TerminalOpenTimings } from "../server/proxy/terminal-route.ts";
import type { Session } from "./terminal-session.ts";
import type { ProxyProcess } from "./tunnel-proxy-process.ts";

const OPENED_MARK = "OPEN-42";

export interface PathLatency {
  /** ms from starting each open to its shell's answer */
  latencies: number[];
  /** the proxy's stage stamps of this path's opens (WebSocket paths only) */
  proxy: TerminalOpenTimings[];
  /** opens that reused their session's certificate */
  certsReused: number;
}

/** Opens one session, waits for its shell to run a command, closes it; ms. */
export async function timeOneOpen(open: () => Promise<Session>): Promise<number> {
  const t0 = performance.now();
  const s = await open();
  try {
    // The marker is assembled by the shell, so the echoed command line never matches it.
    const seen = s.until(OPENED_MARK, 60_000);
    s.write("echo OP''EN-$((40+2))\r");
    await seen;
    return performance.now() - t0;
  } finally {
    s.close();
  }
}

export async function latencyPhase<P extends string>(o: {
  paths: Record<P, () => Promise<Session>>;
  /** which paths go through the proxy (their stamps are collected) */
  viaProxy: ReadonlySet<P>;
  n: number;
  proxy: ProxyProcess;
  agent: { opens(): Promise<SessionOpenTimings[]> };
}): Promise<{ byPath: Record<P, PathLatency>; agent: SessionOpenTimings[]; seconds: number }> {
  const names = Object.keys(o.paths) as P[];
  const byPath = {} as Record<P, PathLatency>;
  for (const p of names) byPath[p] = { latencies: [], proxy: [], certsReused: 0 };
  await o.proxy.opens();
  await o.agent.opens();
  const started = performance.now();
  for (let i = 0; i < o.n; i++) {
    for (const p of names) {
      const r = byPath[p];
      r.latencies.push(await timeOneOpen(o.paths[p]));
      // Stamps are collected between opens (outside the timed part), so they sort by path.
      if (o.viaProxy.has(p)) {
        const got = await o.proxy.opensReused();
        r.proxy.push(...got.opens);
        r.certsReused += got.reused;
      }
    }
  }
  return { byPath, agent: await o.agent.opens(), seconds: (performance.now() - started) / 1000 };
}
