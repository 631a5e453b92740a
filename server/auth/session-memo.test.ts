// Sessions auth keeps for a few seconds (session-memo.ts), alone and inside the SessionStore on a
// real SQLite backend: what is kept, for how long, and every way it is dropped.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SqliteBackend } from "../../core/backend/sqlite.ts";
import { ManualClock } from "../../core/clock.ts";
import { NotAuthenticatedError } from "../../core/errors.ts";
import { SessionMemo } from "./session-memo.ts";
import { SessionStore, type WebSession } from "./sessions.ts";

const session = (username: string, expires: number): WebSession => ({
  username,
  hash: `h-${username}`,
  created: new Date(0),
  expires: new Date(expires),
  mfa: false,
  scope: "full",
});

describe("SessionMemo", () => {
  let now = 1_000;
  const memo = (o: { maxAgeMs?: number; maxEntries?: number } = {}) => {
    const m = new SessionMemo({ now: () => now, ...o });
    m.setTrusted(true);
    return m;
  };
  beforeEach(() => {
    now = 1_000;
  });

  it("keeps a session read while trusted, until its max age", () => {
    const m = memo({ maxAgeMs: 5_000 });
    const s = session("bob", 1_000_000);
    m.keep("a", s, m.begin());
    expect(m.get("a")).toBe(s);
    now += 4_999;
    expect(m.get("a")).toBe(s);
    now += 1;
    expect(m.get("a")).toBeUndefined();
    expect(m.size).toBe(0);
  });

  it("never answers past the session's own expiry", () => {
    const m = memo({ maxAgeMs: 60_000 });
    m.keep("a", session("bob", 2_000), m.begin());
    now = 1_999;
    expect(m.get("a")).toBeDefined();
    now = 2_000;
    expect(m.get("a")).toBeUndefined();
  });

  it("keeps nothing while not trusted, and drops everything when trust changes", () => {
    const m = new SessionMemo({ now: () => now });
    m.keep("a", session("bob", 1_000_000), m.begin());
    expect(m.get("a")).toBeUndefined();
    m.setTrusted(true);
    m.keep("a", session("bob", 1_000_000), m.begin());
    expect(m.get("a")).toBeDefined();
    m.setTrusted(false);
    expect(m.get("a")).toBeUndefined();
    m.setTrusted(true);
    expect(m.get("a")).toBeUndefined();
  });

  it("drops revoked sessions, by hash and by user", () => {
    const m = memo();
    m.keep("a", session("bob", 1_000_000), m.begin());
    m.keep("b", session("bob", 1_000_000), m.begin());
    m.keep("c", session("alice", 1_000_000), m.begin());
    m.forget(["a"]);
    expect([m.get("a"), m.get("b"), m.get("c")].map((s) => s?.username)).toEqual([undefined, "bob", "alice"]);
    m.forgetUser("bob");
    expect([m.get("b"), m.get("c")].map((s) => s?.username)).toEqual([undefined, "alice"]);
  });

  it("does not keep a read that was under way when any revocation or trust change came", () => {
    const m = memo();
    for (const interrupt of [() => m.forget(["other"]), () => m.forgetUser("x"), () => m.setTrusted(true)]) {
      const begun = m.begin();
      interrupt();
      m.keep("a", session("bob", 1_000_000), begun);
      expect(m.get("a")).toBeUndefined();
    }
  });

  it("holds at most maxEntries, dropping the oldest; max age 0 keeps nothing", () => {
    const m = memo({ maxEntries: 2 });
    for (const h of ["a", "b", "c"]) m.keep(h, session(h, 1_000_000), m.begin());
    expect([m.get("a"), m.get("b"), m.get("c")].map((s) => s?.username)).toEqual([undefined, "b", "c"]);
    const none = memo({ maxAgeMs: 0 });
    none.keep("a", session("bob", 1_000_000), none.begin());
    expect(none.get("a")).toBeUndefined();
  });
});

describe("SessionStore with a memo", () => {
  let clock: ManualClock;
  let backend: SqliteBackend;
  let memo: SessionMemo;
  let store: SessionStore;
  beforeEach(() => {
    clock = new ManualClock();
    backend = new SqliteBackend({ path: ":memory:", clock, sweepIntervalMs: 0 });
    memo = new SessionMemo({ now: () => clock.now().getTime(), maxAgeMs: 5_000 });
    memo.setTrusted(true);
    store = new SessionStore({ backend, clock, memo });
  });
  afterEach(async () => {
    await backend.close();
  });

  it("reads the backend once per max age for one session", async () => {
    const { id, session: made } = await store.create("bob");
    const first = await store.validate(id);
    expect(first).toMatchObject({ username: "bob", hash: made.hash });
    // Removed behind the store's back (no revocation told): answered from memory until max age.
    await backend.delete(`web-sessions/${made.hash}`);
    expect((await store.validate(id)).username).toBe("bob");
    clock.advance(5_000);
    await expect(store.validate(id)).rejects.toBeInstanceOf(NotAuthenticatedError);
  });

  it("a logout here refuses the session on the next call", async () => {
    const { id, session: made } = await store.create("bob");
    await store.validate(id);
    await store.revoke("bob", made.hash);
    await expect(store.validate(id)).rejects.toBeInstanceOf(NotAuthenticatedError);
  });

  it("revoking every session of a user refuses all of them on the next call", async () => {
    const a = await store.create("bob");
    const b = await store.create("bob");
    const other = await store.create("alice");
    for (const s of [a, b, other]) await store.validate(s.id);
    expect(await store.revokeAll("bob")).toBe(2);
    await expect(store.validate(a.id)).rejects.toBeInstanceOf(NotAuthenticatedError);
    await expect(store.validate(b.id)).rejects.toBeInstanceOf(NotAuthenticatedError);
    expect((await store.validate(other.id)).username).toBe("alice");
  });

  it("without trust every call reads the backend", async () => {
    const { id, session: made } = await store.create("bob");
    memo.setTrusted(false);
    await store.validate(id);
    await backend.delete(`web-sessions/${made.hash}`);
    await expect(store.validate(id)).rejects.toBeInstanceOf(NotAuthenticatedError);
  });
});
