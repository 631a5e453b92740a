// The app-session cache on its own (docs/apps.md): answered from memory for REFRESH_MS, then one
// GetAppSession per session however many requests wait; a session auth says is gone ends here;
// through an auth outage the cached grant serves until its assertion expires, then 503.
import { describe, expect, it } from "vitest";
import { ManualClock } from "../../../core/clock.ts";
import { AccessDeniedError, NotFoundError, UnavailableError } from "../../../core/errors.ts";
import type { AppAuthApi, AppGrant } from "./auth-api.ts";
import { AppGrants, REFRESH_MS } from "./grants.ts";

const HOST = "grafana.proxy.example.com";
const ID = "s".repeat(43);
const CODE = "c".repeat(43);

function grant(now: number, o: Partial<AppGrant> = {}): AppGrant {
  return {
    sessionId: "",
    username: "alice",
    roles: ["dev"],
    traits: {},
    appName: "grafana",
    appUri: "http://10.0.0.5:3000",
    publicAddr: HOST,
    insecureSkipVerify: false,
    headers: [],
    redirectHosts: [],
    expiresMs: now + 3_600_000,
    assertion: `jwt-${now}`,
    assertionExpiresMs: now + 120_000,
    webSessionHash: "w".repeat(64),
    ...o,
  };
}

/** A fake auth: counts calls; `answer` decides each GetAppSession. */
function fakeAuth(clock: ManualClock) {
  const calls = { get: 0, exchange: 0, del: 0 };
  let answer: () => Promise<AppGrant> = async () => grant(clock.now().getTime());
  let release: (() => void) | undefined;
  const api: AppAuthApi = {
    async exchangeAppSession(code, host) {
      calls.exchange++;
      if (code !== CODE || host !== HOST) throw new NotFoundError("unknown or used code");
      return grant(clock.now().getTime(), { sessionId: ID });
    },
    async getAppSession() {
      calls.get++;
      if (release === undefined) return answer();
      await new Promise<void>((r) => {
        const done = release;
        release = () => {
          done?.();
          r();
        };
      });
      return answer();
    },
    async deleteAppSession() {
      calls.del++;
    },
  };
  return {
    api,
    calls,
    answers: (f: () => Promise<AppGrant>) => {
      answer = f;
    },
    /** Holds GetAppSession answers until the returned function is called. */
    hold: () => {
      release = () => {};
      return () => {
        const r = release;
        release = undefined;
        r?.();
      };
    },
  };
}

describe("AppGrants", () => {
  it("remembers an exchanged session and answers from memory until the refresh is due", async () => {
    const clock = new ManualClock(new Date("2030-01-01T00:00:00Z"));
    const auth = fakeAuth(clock);
    const grants = new AppGrants({ api: auth.api, clock });
    const g = await grants.exchange(CODE, HOST);
    expect(g.sessionId).toBe(ID);
    expect(await grants.lookup(ID, HOST)).toMatchObject({ username: "alice", sessionId: "" });
    clock.advance(REFRESH_MS - 1);
    await grants.lookup(ID, HOST);
    expect(auth.calls.get).toBe(0);
    clock.advance(1);
    const refreshed = await grants.lookup(ID, HOST);
    expect(auth.calls.get).toBe(1);
    expect(refreshed?.assertion).toBe(`jwt-${clock.now().getTime()}`);
  });

  it("asks auth on the next use of the grants a user or role change selects (recheck), not after the refresh", async () => {
    const clock = new ManualClock(new Date("2030-01-01T00:00:00Z"));
    const auth = fakeAuth(clock);
    const grants = new AppGrants({ api: auth.api, clock });
    await grants.exchange(CODE, HOST);
    grants.recheck((g) => g.username === "bob");
    await grants.lookup(ID, HOST);
    expect(auth.calls.get).toBe(0);
    grants.recheck((g) => g.username === "alice");
    auth.answers(async () => {
      throw new NotFoundError("no such app session");
    });
    expect(await grants.lookup(ID, HOST)).toBeUndefined();
    expect(auth.calls.get).toBe(1);
    expect(grants.size).toBe(0);
  });

  it("answers a session auth said is gone from memory for the refresh period (a stale cookie costs one call)", async () => {
    const clock = new ManualClock(new Date("2030-01-01T00:00:00Z"));
    const auth = fakeAuth(clock);
    const grants = new AppGrants({ api: auth.api, clock });
    auth.answers(async () => {
      throw new NotFoundError("no such app session");
    });
    const stale = "t".repeat(43);
    for (let i = 0; i < 5; i++) expect(await grants.lookup(stale, HOST)).toBeUndefined();
    expect(auth.calls.get).toBe(1);
    // then asked again: a session refused for lost access comes back with the access
    clock.advance(REFRESH_MS);
    auth.answers(async () => grant(clock.now().getTime()));
    expect(await grants.lookup(stale, HOST)).toMatchObject({ username: "alice" });
    expect(auth.calls.get).toBe(2);
    // and one ended here (logout) is not asked for either
    await grants.exchange(CODE, HOST);
    await grants.end(ID);
    expect(await grants.lookup(ID, HOST)).toBeUndefined();
    expect(auth.calls.get).toBe(2);
  });

  it("asks auth once for a session many requests wait on (single flight)", async () => {
    const clock = new ManualClock(new Date("2030-01-01T00:00:00Z"));
    const auth = fakeAuth(clock);
    const grants = new AppGrants({ api: auth.api, clock });
    const release = auth.hold();
    const waiting = Promise.all(Array.from({ length: 20 }, () => grants.lookup(ID, HOST)));
    release();
    const answers = await waiting;
    expect(auth.calls.get).toBe(1);
    expect(answers.every((a) => a?.username === "alice")).toBe(true);
  });

  it("does not answer a session on another host, nor a malformed id, and asks auth for neither", async () => {
    const clock = new ManualClock(new Date("2030-01-01T00:00:00Z"));
    const auth = fakeAuth(clock);
    const grants = new AppGrants({ api: auth.api, clock });
    await grants.exchange(CODE, HOST);
    expect(await grants.lookup(ID, "wiki.proxy.example.com")).toBeUndefined();
    expect(await grants.lookup("short", HOST)).toBeUndefined();
    expect(auth.calls.get).toBe(0);
    await expect(grants.exchange(CODE, "wiki.proxy.example.com")).rejects.toBeInstanceOf(NotFoundError);
  });

  it("ends a session auth says is gone, and passes a refusal on", async () => {
    const clock = new ManualClock(new Date("2030-01-01T00:00:00Z"));
    const auth = fakeAuth(clock);
    const grants = new AppGrants({ api: auth.api, clock });
    await grants.exchange(CODE, HOST);
    clock.advance(REFRESH_MS);
    auth.answers(async () => {
      throw new NotFoundError("unknown or expired app session");
    });
    expect(await grants.lookup(ID, HOST)).toBeUndefined();
    expect(grants.size).toBe(0);
    auth.answers(async () => {
      throw new AccessDeniedError("locked: investigating");
    });
    // (another session: the ended one is not asked about again)
    await expect(grants.lookup("u".repeat(43), HOST)).rejects.toBeInstanceOf(AccessDeniedError);
  });

  it("serves the cached grant through an auth outage until its assertion expires, then 503", async () => {
    const clock = new ManualClock(new Date("2030-01-01T00:00:00Z"));
    const auth = fakeAuth(clock);
    const grants = new AppGrants({ api: auth.api, clock });
    const first = await grants.exchange(CODE, HOST);
    auth.answers(async () => {
      throw new UnavailableError("auth service unavailable");
    });
    clock.advance(REFRESH_MS);
    expect((await grants.lookup(ID, HOST))?.assertion).toBe(first.assertion);
    clock.advance(120_000 - REFRESH_MS - 1);
    expect((await grants.lookup(ID, HOST))?.assertion).toBe(first.assertion);
    clock.advance(1);
    await expect(grants.lookup(ID, HOST)).rejects.toBeInstanceOf(UnavailableError);
    // auth back: a fresh assertion, and the session goes on
    auth.answers(async () => grant(clock.now().getTime()));
    expect((await grants.lookup(ID, HOST))?.assertion).toBe(`jwt-${clock.now().getTime()}`);
  });

  it("forgets a session at logout before auth answers, and never brings back an answer that raced it", async () => {
    const clock = new ManualClock(new Date("2030-01-01T00:00:00Z"));
    const auth = fakeAuth(clock);
    const grants = new AppGrants({ api: auth.api, clock });
    await grants.exchange(CODE, HOST);
    clock.advance(REFRESH_MS);
    const release = auth.hold();
    const racing = grants.lookup(ID, HOST);
    await grants.end(ID);
    release();
    await racing;
    expect(auth.calls.del).toBe(1);
    expect(grants.size).toBe(0);
  });

  it("drops a session past its expiry without asking auth", async () => {
    const clock = new ManualClock(new Date("2030-01-01T00:00:00Z"));
    const auth = fakeAuth(clock);
    const grants = new AppGrants({ api: auth.api, clock, refreshMs: 10 * 3_600_000 });
    await grants.exchange(CODE, HOST);
    clock.advance(3_600_000);
    auth.answers(async () => {
      throw new NotFoundError("gone");
    });
    expect(await grants.lookup(ID, HOST)).toBeUndefined();
  });
});
