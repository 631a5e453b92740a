// A client's stream to a feed, against stand-ins for grpc-js client calls: every way a stream is
// lost (an error, an end, a throwing open, the watchdog) reports it down once and opens a new call
// after the backoff; a reconnect waiting is cut short by reconnectNow; stop ends everything.
import { EventEmitter } from "node:events";
import type { ClientReadableStream } from "@grpc/grpc-js";
import { status } from "@grpc/grpc-js";
import pino from "pino";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { UnavailableError } from "../../core/errors.ts";
import { FeedSubscription, type FeedSubscriptionOptions } from "./feed-subscription.ts";

class Call extends EventEmitter {
  cancelled = false;
  cancel(): void {
    this.cancelled = true;
  }
}

interface World {
  calls: Call[];
  messages: string[];
  downs: Error[];
  sub: FeedSubscription<string>;
}

const subs: FeedSubscription<string>[] = [];

function world(o: Partial<FeedSubscriptionOptions<string>> & { failOpens?: number } = {}): World {
  const w: Omit<World, "sub"> = { calls: [], messages: [], downs: [] };
  let failOpens = o.failOpens ?? 0;
  const sub = new FeedSubscription<string>({
    what: "test stream",
    open: () => {
      if (failOpens-- > 0) throw new Error("no channel");
      const call = new Call();
      w.calls.push(call);
      return call as unknown as ClientReadableStream<string>;
    },
    message: (m) => w.messages.push(m),
    down: (err) => w.downs.push(err),
    backoff: { initialMs: 100, maxMs: 100 },
    logger: pino({ level: "silent" }),
    watchdog: { periodMs: () => 60_000, check: () => undefined },
    ...o,
  });
  subs.push(sub);
  return { ...w, sub };
}

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  for (const s of subs.splice(0)) s.stop();
  vi.useRealTimers();
});

describe("FeedSubscription", () => {
  it("hands on messages of the current call only; a failed call is reported as its typed error and reopened after the backoff", async () => {
    const { calls, messages, downs, sub } = world();
    sub.start();
    expect(calls).toHaveLength(1);
    expect(sub.open).toBe(true);
    calls[0]?.emit("data", "one");
    calls[0]?.emit("error", { code: status.UNAVAILABLE, details: "auth went away", message: "" });
    expect(downs).toHaveLength(1);
    expect(downs[0]).toBeInstanceOf(UnavailableError);
    expect(downs[0]?.message).toBe("auth went away");
    expect(calls[0]?.cancelled).toBe(true);
    calls[0]?.emit("data", "late"); // the old call's listeners are gone
    expect(sub.open).toBe(false);
    await vi.advanceTimersByTimeAsync(49); // a random point in the upper half of 100 ms
    expect(calls).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(51);
    expect(calls).toHaveLength(2);
    calls[1]?.emit("data", "two");
    expect(messages).toEqual(["one", "two"]);
  });

  it("an end from auth and a throwing open are losses too", async () => {
    const { calls, downs, sub } = world({ failOpens: 1 });
    sub.start();
    expect(calls).toHaveLength(0);
    expect(downs.map((e) => e.message)).toEqual(["no channel"]);
    await vi.advanceTimersByTimeAsync(100);
    expect(calls).toHaveLength(1);
    calls[0]?.emit("end");
    expect(downs.map((e) => e.message)).toEqual(["no channel", "auth ended the test stream"]);
    await vi.advanceTimersByTimeAsync(100);
    expect(calls).toHaveLength(2);
  });

  it("gives up a call its watchdog finds dead, with the period it was armed with", async () => {
    const periods: number[] = [];
    let dead = false;
    const { calls, downs, sub } = world({
      watchdog: {
        periodMs: () => 1_000,
        check: (every) => {
          periods.push(every);
          return dead ? new Error("silent") : undefined;
        },
      },
    });
    sub.start();
    await vi.advanceTimersByTimeAsync(1_000);
    expect(periods).toEqual([1_000]);
    expect(downs).toHaveLength(0);
    dead = true;
    await vi.advanceTimersByTimeAsync(1_000);
    expect(downs.map((e) => e.message)).toEqual(["silent"]);
    expect(calls[0]?.cancelled).toBe(true);
    dead = false;
    await vi.advanceTimersByTimeAsync(100);
    expect(calls).toHaveLength(2);
  });

  it("reconnectNow opens at once while a reconnect waits, and does nothing while a call is open", async () => {
    const { calls, sub } = world({ backoff: { initialMs: 60_000, maxMs: 60_000 } });
    sub.start();
    sub.reconnectNow();
    expect(calls).toHaveLength(1);
    calls[0]?.emit("end");
    sub.reconnectNow();
    expect(calls).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(calls).toHaveLength(2); // the waiting reconnect was used, not run again
  });

  it("backs off exponentially up to the cap, and from the start again once healthy", async () => {
    const { calls, sub } = world({ backoff: { initialMs: 100, maxMs: 400 } });
    const openedAfter = async (ms: number): Promise<boolean> => {
      const before = calls.length;
      await vi.advanceTimersByTimeAsync(ms);
      return calls.length > before;
    };
    sub.start();
    calls.at(-1)?.emit("end"); // next wait in [50, 100]
    expect(await openedAfter(100)).toBe(true);
    calls.at(-1)?.emit("end"); // [100, 200]
    expect(await openedAfter(99)).toBe(false);
    expect(await openedAfter(101)).toBe(true);
    calls.at(-1)?.emit("end"); // [200, 400]
    expect(await openedAfter(199)).toBe(false);
    expect(await openedAfter(201)).toBe(true);
    calls.at(-1)?.emit("end"); // capped: [200, 400]
    expect(await openedAfter(199)).toBe(false);
    expect(await openedAfter(201)).toBe(true);
    sub.healthy();
    calls.at(-1)?.emit("end"); // [50, 100] again
    expect(await openedAfter(100)).toBe(true);
  });

  it("stop cancels the call and any waiting reconnect; a later loss reports down but opens nothing", async () => {
    const { calls, downs, sub } = world();
    sub.start();
    const first = calls[0];
    sub.stop();
    expect(first?.cancelled).toBe(true);
    expect(sub.stopped).toBe(true);
    sub.lost(new Error("after stop"));
    expect(downs.map((e) => e.message)).toEqual(["after stop"]);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(calls).toHaveLength(1);
  });
});
