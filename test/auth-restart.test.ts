// Auth restarts without users noticing (issue 17): two `svcd auth` processes on PostgreSQL, two
// `svcd proxy` processes listing both in proxy.auth_addr, a node agent that lists both too, and a
// load of authenticated reads, logins, open browser terminals and new ones on both proxies while
// each auth is restarted in turn with SIGTERM (it drains), then one with kill -9. Counts failures,
// no timings: zero failed reads, logins and new terminals, zero broken open terminals.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  echo,
  type RestartWorld,
  readLoad,
  type Sample,
  startRestartWorld,
  USER,
} from "./auth-restart-kit.ts";
import { testPostgresUrl } from "./harness/postgres.ts";
import type { TerminalConnection } from "./terminal-client.ts";

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Runs `step` until stopped, recording each outcome (failure text kept). */
function repeat(step: (n: number) => Promise<void>, pauseMs: number) {
  const outcomes: Array<{ ok: boolean; detail: string }> = [];
  let running = true;
  const done = (async () => {
    let n = 0;
    while (running) {
      try {
        await step(n++);
        outcomes.push({ ok: true, detail: "" });
      } catch (err) {
        outcomes.push({ ok: false, detail: err instanceof Error ? err.message : String(err) });
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

describe("auth restarts under load (2 auths on PostgreSQL, 2 proxies)", () => {
  let world: RestartWorld;
  let sessionId = "";

  beforeAll(async () => {
    world = await startRestartWorld(testPostgresUrl());
    const first = world.clients[0];
    if (!first) throw new Error("no proxy");
    const login = await world.login(first);
    expect(login.status, login.text).toBe(200);
    sessionId = login.sessionId;
  }, 240_000);

  afterAll(async () => {
    await world?.close();
  }, 60_000);

  it("the proxies list both auths and serve a session and a terminal from either", async () => {
    expect(world.auths).toHaveLength(2);
    expect(world.proxies).toHaveLength(2);
    for (const [i, client] of world.clients.entries()) {
      const res = await client.send({
        path: "/v1/webapi/session",
        headers: { authorization: `Bearer ${sessionId}` },
      });
      expect(res.status, res.text).toBe(200);
      expect((res.json as { username: string }).username).toBe(USER);
      const t = await world.terminal(i, sessionId);
      t.ws.close();
    }
  }, 60_000);

  it("no read, login or new terminal fails and no open terminal breaks while each auth restarts (SIGTERM in turn, then kill -9)", async () => {
    let phase: Sample["phase"] = "steady";
    const load = readLoad(world.clients, sessionId, 4, () => phase);
    // Terminals open before the restarts, two per proxy, each typed into all along.
    const open: TerminalConnection[] = [];
    for (const i of [0, 1, 0, 1]) open.push(await world.terminal(i, sessionId));
    const closedEarly: string[] = [];
    for (const [k, t] of open.entries())
      void t.closed.then((c) => closedEarly.push(`terminal ${k} closed: ${c.code} ${c.reason}`));
    const typing = repeat(async (n) => {
      await Promise.all(open.map((t, k) => echo(t, `open${k}x${n}`)));
    }, 500);
    // Logins (each followed by a read with the new session), alternating proxies; under the
    // proxy's per-address login limit (20 a minute per replica).
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
    // New terminals, alternating proxies: open, answer an echo, close.
    const terminals = repeat(async (n) => {
      const t = await world.terminal(n % 2, sessionId);
      t.ws.close();
      await t.closed;
    }, 500);
    try {
      await sleep(1_500);
      phase = "restart";
      const drained = [await world.restartAuth(0, "SIGTERM"), await world.restartAuth(1, "SIGTERM")];
      // A drained auth exits cleanly (it finished its calls and closed its connections).
      expect(drained.map((d) => d.code)).toEqual([0, 0]);
      await world.restartAuth(0, "SIGKILL");
      phase = "steady";
      await sleep(1_500);
    } finally {
      await Promise.all([load.stop(), typing.stop(), logins.stop(), terminals.stop()]);
    }
    console.log(
      `auth restart: ${JSON.stringify({
        reads: load.samples.length,
        readsDuringRestart: load.samples.filter((s) => s.phase === "restart").length,
        logins: logins.outcomes.length,
        newTerminals: terminals.outcomes.length,
        echoRounds: typing.outcomes.length,
        openTerminals: open.length,
      })}`,
    );
    // The load really ran through the restarts (a stalled generator would pass vacuously).
    expect(load.samples.filter((s) => s.phase === "restart").length).toBeGreaterThan(50);
    expect(logins.outcomes.length).toBeGreaterThan(3);
    expect(terminals.outcomes.length).toBeGreaterThan(3);
    expect(typing.outcomes.length).toBeGreaterThan(3);
    expect(load.samples.filter((s) => !s.ok).map((s) => s.detail)).toEqual([]);
    expect(logins.failures()).toEqual([]);
    expect(terminals.failures()).toEqual([]);
    expect(typing.failures()).toEqual([]);
    expect(closedEarly).toEqual([]);
    // Still alive after it all.
    await Promise.all(open.map((t, k) => echo(t, `after${k}`)));
    for (const t of open) t.ws.close();
  }, 300_000);
});
