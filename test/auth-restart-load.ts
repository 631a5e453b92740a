// The load of the auth restart scenario (test/auth-restart.test.ts, bench/auth-restart.bench.ts):
// authenticated reads, logins, open and new browser terminals on the proxies of a RestartWorld
// (auth-restart-kit.ts) while its auths restart, each outcome counted.
import type { RestartWorld } from "./auth-restart-kit.ts";
import type { HttpsClient } from "./proxy-https-client.ts";
import type { TerminalConnection } from "./terminal-client.ts";

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** One request's outcome, tagged with what was happening meanwhile. */
export interface Sample {
  ok: boolean;
  ms: number;
  phase: "steady" | "restart";
  detail?: string;
}

/**
 * Authenticated reads (GET /v1/webapi/session with the session as bearer) on both proxies from
 * `workers` loops until stopped; `phase()` tags each sample.
 */
export function readLoad(
  clients: HttpsClient[],
  sessionId: string,
  /** whose session it is (each answer must name them) */
  username: string,
  workers: number,
  phase: () => Sample["phase"],
): { samples: Sample[]; stop(): Promise<void> } {
  const samples: Sample[] = [];
  let running = true;
  const loop = async (w: number) => {
    let n = w;
    while (running) {
      const client = clients[n++ % clients.length];
      if (!client) return;
      const p = phase();
      const t0 = performance.now();
      try {
        const res = await client.send({
          path: "/v1/webapi/session",
          headers: { authorization: `Bearer ${sessionId}` },
        });
        const ok = res.status === 200 && (res.json as { username?: string }).username === username;
        samples.push({
          ok,
          ms: performance.now() - t0,
          phase: p,
          ...(ok ? {} : { detail: `${res.status} ${res.text}` }),
        });
      } catch (err) {
        samples.push({ ok: false, ms: performance.now() - t0, phase: p, detail: String(err) });
      }
    }
  };
  const loops = Array.from({ length: workers }, (_, w) => loop(w));
  return {
    samples,
    async stop() {
      running = false;
      await Promise.all(loops);
    },
  };
}

/** p-th percentile (0..100) of the values, nearest rank. */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return (
    sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? Number.NaN
  );
}

let echoes = 0;
/** Types an echo of a fresh marker and waits for it to come back (the shell is alive end to end). */
export async function echo(conn: TerminalConnection, tag: string, timeoutMs = 20_000): Promise<void> {
  const marker = `${tag}-${++echoes}`;
  const from = conn.received();
  // Quoted in the middle so the typed command line (echoed by the tty) does not match.
  conn.type(`echo ${marker.slice(0, 3)}''${marker.slice(3)}\r`);
  await conn.waitFor(marker, timeoutMs, from);
}

/** Runs `step` until stopped, recording each outcome (failure text kept) and its duration. */
export function repeat(step: (n: number) => Promise<void>, pauseMs: number) {
  const outcomes: Array<{ ok: boolean; ms: number; detail: string }> = [];
  let running = true;
  const done = (async () => {
    let n = 0;
    while (running) {
      const t0 = performance.now();
      try {
        await step(n++);
        outcomes.push({ ok: true, ms: performance.now() - t0, detail: "" });
      } catch (err) {
        outcomes.push({
          ok: false,
          ms: performance.now() - t0,
          detail: err instanceof Error ? err.message : String(err),
        });
      }
      await sleep(pauseMs);
    }
  })();
  return {
    outcomes,
    failures: () => outcomes.filter((o) => !o.ok).map((o) => o.detail),
    async stop() {
      running = false;
      await done;
    },
  };
}

export interface ScenarioResult {
  reads: Sample[];
  logins: ReturnType<typeof repeat>["outcomes"];
  newTerminals: ReturnType<typeof repeat>["outcomes"];
  echoRounds: ReturnType<typeof repeat>["outcomes"];
  /** open terminals that closed before the end, with their close code and reason */
  brokenTerminals: string[];
  openTerminals: number;
  /** exit codes of the two SIGTERM'd auths */
  drainedExitCodes: Array<number | null>;
  /** open terminals still answering an echo after it all */
  aliveAfter: number;
}

/**
 * The restart scenario: reads (4 loops, both proxies), four browser terminals kept open and typed
 * into, logins (each followed by a read with the new session) and new terminals, while auth 0
 * then auth 1 restart with SIGTERM and auth 0 again with kill -9; `steadyMs` of load before and
 * after (tagged "steady").
 */
export async function runRestartScenario(
  world: RestartWorld,
  sessionId: string,
  o: { steadyMs: number },
): Promise<ScenarioResult> {
  let phase: Sample["phase"] = "steady";
  const load = readLoad(world.clients, sessionId, world.user, 4, () => phase);
  const open: TerminalConnection[] = [];
  for (const i of [0, 1, 0, 1]) open.push(await world.terminal(i, sessionId));
  const broken: string[] = [];
  let ending = false;
  for (const [k, t] of open.entries())
    void t.closed.then((c) => {
      if (!ending) broken.push(`terminal ${k} closed: ${c.code} ${c.reason}`);
    });
  const typing = repeat(async (n) => {
    await Promise.all(open.map((t, k) => echo(t, `open${k}x${n}`)));
  }, 500);
  // Under the proxy's per-address login limit (20 a minute per replica).
  const logins = repeat(async (n) => {
    const client = world.clients[n % world.clients.length];
    if (!client) throw new Error("no proxy");
    const l = await world.login(client);
    if (l.status !== 200) throw new Error(`login: ${l.status} ${l.text}`);
    const check = await client.send({
      path: "/v1/webapi/session",
      headers: { authorization: `Bearer ${l.sessionId}` },
    });
    if (check.status !== 200) throw new Error(`new session: ${check.status} ${check.text}`);
  }, 1_500);
  const terminals = repeat(async (n) => {
    const t = await world.terminal(n % 2, sessionId);
    t.ws.close();
    await t.closed;
  }, 500);
  const drained: Array<number | null> = [];
  try {
    await sleep(o.steadyMs);
    phase = "restart";
    drained.push((await world.restartAuth(0, "SIGTERM")).code);
    drained.push((await world.restartAuth(1, "SIGTERM")).code);
    await world.restartAuth(0, "SIGKILL");
    phase = "steady";
    await sleep(o.steadyMs);
  } finally {
    await Promise.all([load.stop(), typing.stop(), logins.stop(), terminals.stop()]);
  }
  let alive = 0;
  await Promise.all(
    open.map(async (t, k) => {
      await echo(t, `after${k}`).then(
        () => alive++,
        () => undefined,
      );
    }),
  );
  ending = true;
  for (const t of open) t.ws.close();
  return {
    reads: load.samples,
    logins: logins.outcomes,
    newTerminals: terminals.outcomes,
    echoRounds: typing.outcomes,
    brokenTerminals: broken,
    openTerminals: open.length,
    drainedExitCodes: drained,
    aliveAfter: alive,
  };
}
