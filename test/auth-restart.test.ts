// Auth restarts without users noticing (issue 17): two `svcd auth` processes on PostgreSQL, two
// `svcd proxy` processes listing both in proxy.auth_addr, and a load of authenticated reads and
// logins on both proxies while each auth is restarted in turn with SIGTERM (it drains), then one
// with kill -9. Counts failures, no timings: zero failed reads, zero failed logins.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RestartWorld, readLoad, type Sample, startRestartWorld, USER } from "./auth-restart-kit.ts";
import { testPostgresUrl } from "./harness/postgres.ts";

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

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

  it("the proxies list both auths and serve a session from either", async () => {
    expect(world.auths).toHaveLength(2);
    expect(world.proxies).toHaveLength(2);
    for (const client of world.clients) {
      const res = await client.send({
        path: "/v1/webapi/session",
        headers: { authorization: `Bearer ${sessionId}` },
      });
      expect(res.status, res.text).toBe(200);
      expect((res.json as { username: string }).username).toBe(USER);
    }
  });

  it("no read and no login fails while each auth restarts (SIGTERM in turn, then kill -9)", async () => {
    let phase: Sample["phase"] = "steady";
    const load = readLoad(world.clients, sessionId, 4, () => phase);
    // Logins (and a read with the new session) meanwhile, alternating proxies; under the proxy's
    // per-address login limit (20 a minute per replica).
    const logins: Array<{ ok: boolean; detail: string }> = [];
    let loggingIn = true;
    const loginLoop = (async () => {
      let n = 0;
      while (loggingIn) {
        const client = world.clients[n++ % world.clients.length];
        if (!client) break;
        try {
          const l = await world.login(client);
          const check =
            l.status === 200
              ? await client.send({
                  path: "/v1/webapi/session",
                  headers: { authorization: `Bearer ${l.sessionId}` },
                })
              : undefined;
          logins.push({ ok: check?.status === 200, detail: `${l.status} ${l.text} ${check?.status ?? ""}` });
        } catch (err) {
          logins.push({ ok: false, detail: String(err) });
        }
        await sleep(1_500);
      }
    })();
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
      loggingIn = false;
      await load.stop();
      await loginLoop;
    }
    const during = load.samples.filter((s) => s.phase === "restart");
    // The load really ran through the restarts (a stalled generator would pass vacuously).
    expect(during.length).toBeGreaterThan(50);
    expect(logins.length).toBeGreaterThan(3);
    expect(load.samples.filter((s) => !s.ok).map((s) => s.detail)).toEqual([]);
    expect(logins.filter((l) => !l.ok).map((l) => l.detail)).toEqual([]);
  }, 300_000);
});
