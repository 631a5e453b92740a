// Auth restarts without users noticing (issue 17): two `svcd auth` processes on PostgreSQL, two
// `svcd proxy` processes listing both in proxy.auth_addr, a node agent that lists both too, and a
// load of authenticated reads, logins, open browser terminals and new ones on both proxies while
// each auth is restarted in turn with SIGTERM (it drains), then one with kill -9. Counts failures,
// no timings: zero failed reads, logins and new terminals, zero broken open terminals.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RestartWorld, startRestartWorld, USER } from "./auth-restart-kit.ts";
import { runRestartScenario } from "./auth-restart-load.ts";
import { testPostgresUrl } from "./harness/postgres.ts";

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
    const r = await runRestartScenario(world, sessionId, { steadyMs: 1_500 });
    console.log(
      `auth restart: ${JSON.stringify({
        reads: r.reads.length,
        readsDuringRestart: r.reads.filter((s) => s.phase === "restart").length,
        logins: r.logins.length,
        newTerminals: r.newTerminals.length,
        echoRounds: r.echoRounds.length,
        openTerminals: r.openTerminals,
      })}`,
    );
    // A drained auth exits cleanly (it finished its calls and closed its connections).
    expect(r.drainedExitCodes).toEqual([0, 0]);
    // The load really ran through the restarts (a stalled generator would pass vacuously).
    expect(r.reads.filter((s) => s.phase === "restart").length).toBeGreaterThan(50);
    expect(r.logins.length).toBeGreaterThan(3);
    expect(r.newTerminals.length).toBeGreaterThan(3);
    expect(r.echoRounds.length).toBeGreaterThan(3);
    expect(r.reads.filter((s) => !s.ok).map((s) => s.detail)).toEqual([]);
    expect(r.logins.filter((o) => !o.ok).map((o) => o.detail)).toEqual([]);
    expect(r.newTerminals.filter((o) => !o.ok).map((o) => o.detail)).toEqual([]);
    expect(r.echoRounds.filter((o) => !o.ok).map((o) => o.detail)).toEqual([]);
    expect(r.brokenTerminals).toEqual([]);
    // Still alive after it all.
    expect(r.aliveAfter).toBe(r.openTerminals);
  }, 300_000);
});
