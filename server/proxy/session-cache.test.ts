// The session stream's watchdog, against a stand-in for auth's WatchSessions call: a stream that
// opened but never says anything (a half-open connection during the connect, an auth stuck before
// its first event) must be given up and opened again, as a live stream that goes silent is.
import { EventEmitter } from "node:events";
import type { ClientReadableStream } from "@grpc/grpc-js";
import { Metadata } from "@grpc/grpc-js";
import pino from "pino";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ManualClock, systemClock } from "../../core/clock.ts";
import { NotAuthenticatedError } from "../../core/errors.ts";
import type { AuthServiceClient } from "../../proto/generated/svc/v1/AuthService.ts";
import type { SessionEvent__Output } from "../../proto/generated/svc/v1/SessionEvent.ts";
import type { SessionInfo } from "./auth-client.ts";
import { SESSION_MAX_AGE_MS, SessionCache } from "./session-cache.ts";

class FakeCall extends EventEmitter {
  cancelled = false;
  cancel(): void {
    this.cancelled = true;
  }
}

function fakeAuth(): { calls: FakeCall[]; client: AuthServiceClient } {
  const calls: FakeCall[] = [];
  const client = {
    WatchSessions: () => {
      const call = new FakeCall();
      calls.push(call);
      return call as unknown as ClientReadableStream<SessionEvent__Output>;
    },
  } as unknown as AuthServiceClient;
  return { calls, client };
}

describe("SessionCache stream watchdog", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("gives up a stream that never sent its first event and opens another", async () => {
    const { calls, client } = fakeAuth();
    const cache = new SessionCache({
      connection: () => ({ client, metadata: () => new Metadata() }),
      clock: systemClock,
      logger: pino({ level: "silent" }),
      backoff: { initialMs: 10, maxMs: 10 },
    });
    cache.start();
    expect(calls).toHaveLength(1);
    // 3 keepalives (5 s each) of silence, then a check, then the backoff.
    await vi.advanceTimersByTimeAsync(25_000);
    expect(calls[0]?.cancelled).toBe(true);
    expect(calls.length).toBeGreaterThanOrEqual(2);
    expect(cache.live).toBe(false);
    // The new stream works: its reset makes the cache live.
    calls.at(-1)?.emit("data", { kind: "reset", position: "e:1", keepalive_seconds: 5 });
    expect(cache.live).toBe(true);
    await cache.close();
  });

  it("keeps a live stream that hears keepalives", async () => {
    const { calls, client } = fakeAuth();
    const cache = new SessionCache({
      connection: () => ({ client, metadata: () => new Metadata() }),
      clock: systemClock,
      logger: pino({ level: "silent" }),
    });
    cache.start();
    calls[0]?.emit("data", { kind: "reset", position: "e:1", keepalive_seconds: 5 });
    for (let i = 0; i < 10; i++) {
      await vi.advanceTimersByTimeAsync(5_000);
      calls[0]?.emit("data", { kind: "keepalive", position: "e:1", keepalive_seconds: 5 });
    }
    expect(calls).toHaveLength(1);
    expect(cache.live).toBe(true);
    await cache.close();
  });
});

describe("SessionCache answers", () => {
  it("checks a cached session with auth again once its answer is older than the bound", async () => {
    // A revocation whose notification never reached this proxy's auth replica (a publish that
    // failed) must not be answered from memory until the session expires.
    const { calls, client } = fakeAuth();
    const clock = new ManualClock();
    const cache = new SessionCache({
      connection: () => ({ client, metadata: () => new Metadata() }),
      clock,
      logger: pino({ level: "silent" }),
    });
    cache.start();
    calls[0]?.emit("data", { kind: "reset", position: "e:1", keepalive_seconds: 5 });
    const info: SessionInfo = {
      username: "alice",
      roles: ["dev"],
      expires: new Date(clock.now().getTime() + 12 * 3600_000),
      mfaVerified: false,
      scope: "full",
      allowed: [],
    };
    let asked = 0;
    let revoked = false;
    const api = {
      getSession: async () => {
        asked++;
        if (revoked) throw new NotAuthenticatedError("invalid or expired session");
        return info;
      },
    };
    const sid = "A".repeat(43);
    await cache.getSession(api, sid);
    await cache.getSession(api, sid);
    expect(asked).toBe(1); // answered from memory
    revoked = true; // gone at auth; no event comes
    clock.advance(SESSION_MAX_AGE_MS - 1);
    calls[0]?.emit("data", { kind: "keepalive", position: "e:1", keepalive_seconds: 5 });
    await cache.getSession(api, sid);
    expect(asked).toBe(1);
    clock.advance(1);
    await expect(cache.getSession(api, sid)).rejects.toBeInstanceOf(NotAuthenticatedError);
    expect(asked).toBe(2);
    await cache.close();
  });
});
