// The streams a feed holds, with stand-ins for grpc-js server calls (an emitter that records the
// status it was ended with): the per-identity bound ends the oldest, the feed hears "empty" only
// when the last stream goes, a refused admission is the call's status, shutdown ends them all.
import { EventEmitter } from "node:events";
import { status } from "@grpc/grpc-js";
import { afterEach, describe, expect, it } from "vitest";
import { AccessDeniedError } from "../../core/errors.ts";
import { admit, assertProxyCaller, type FeedStream, FeedStreams } from "./feed-streams.ts";

class Call extends EventEmitter {
  status: { code: number; details: string } | undefined;
  ended = false;
  constructor() {
    super();
    // What grpc-js does with an emitted error: it becomes the call's status.
    this.on("error", (err: { code: number; details: string }) => {
      this.status = err;
    });
  }
  end(): void {
    this.ended = true;
  }
}

type W = FeedStream<Call>;
const opened: FeedStreams<W>[] = [];

function streams(o: ConstructorParameters<typeof FeedStreams<W>>[0] = {}): FeedStreams<W> {
  const s = new FeedStreams<W>(o);
  opened.push(s);
  return s;
}

afterEach(() => {
  for (const s of opened.splice(0)) s.endAll();
});

describe("FeedStreams", () => {
  it("ends an identity's oldest stream past the bound, with the limit's status; other identities keep theirs", () => {
    const s = streams({ maxPerCaller: 2, limitMessage: (max) => `at most ${max} here` });
    const mine = [new Call(), new Call(), new Call()];
    const other = new Call();
    s.add({ call: other, who: "proxy:b" }, 60_000, () => undefined);
    for (const call of mine) s.add({ call, who: "proxy:a" }, 60_000, () => undefined);
    expect(mine[0]?.status).toEqual(
      expect.objectContaining({ code: status.RESOURCE_EXHAUSTED, details: "at most 2 here" }),
    );
    expect(mine[1]?.status).toBeUndefined();
    expect(mine[2]?.status).toBeUndefined();
    expect(other.status).toBeUndefined();
    expect(s.size).toBe(3);
  });

  it("has no bound when none is given", () => {
    const s = streams();
    const calls = Array.from({ length: 40 }, () => new Call());
    for (const call of calls) s.add({ call, who: "proxy:a" }, 60_000, () => undefined);
    expect(s.size).toBe(40);
    expect(calls.every((c) => c.status === undefined)).toBe(true);
  });

  it("tells the feed it is empty when the last stream goes, not while the bound replaces one", () => {
    let empty = 0;
    const s = streams({ maxPerCaller: 1, onEmpty: () => empty++ });
    const first = new Call();
    const second = new Call();
    s.add({ call: first, who: "proxy:a" }, 60_000, () => undefined);
    s.add({ call: second, who: "proxy:a" }, 60_000, () => undefined);
    expect(first.status?.code).toBe(status.RESOURCE_EXHAUSTED);
    expect(empty).toBe(0);
    second.emit("cancelled");
    expect(s.size).toBe(0);
    expect(empty).toBe(1);
    second.emit("close"); // a second end of the same stream changes nothing
    expect(empty).toBe(1);
  });

  it("runs each stream's keepalive until the stream goes", async () => {
    const s = streams();
    const call = new Call();
    const ticks: W[] = [];
    const w: W = { call, who: "proxy:a" };
    s.add(w, 5, (x) => ticks.push(x));
    await new Promise((r) => setTimeout(r, 40));
    expect(ticks.length).toBeGreaterThan(1);
    expect(ticks[0]).toBe(w);
    call.emit("error", { code: status.CANCELLED, details: "" });
    const seen = ticks.length;
    await new Promise((r) => setTimeout(r, 30));
    expect(ticks.length).toBe(seen);
  });

  it("ends every stream with OK at shutdown", () => {
    const s = streams();
    const calls = [new Call(), new Call()];
    for (const call of calls) s.add({ call, who: "proxy:a" }, 60_000, () => undefined);
    s.endAll();
    expect(calls.every((c) => c.ended && c.status === undefined)).toBe(true);
    expect(s.size).toBe(0);
  });

  it("makes a refused admission the call's status", () => {
    const call = new Call();
    expect(admit(call, () => assertProxyCaller({ kind: "agent", agentId: "node-1" }, "WatchX"))).toBe(false);
    expect(call.status).toEqual(
      expect.objectContaining({ code: status.PERMISSION_DENIED, details: "WatchX serves proxies only" }),
    );
    const ok = new Call();
    expect(admit(ok, () => assertProxyCaller({ kind: "agent", agentId: "proxy:a" }, "WatchX"))).toBe(true);
    expect(ok.status).toBeUndefined();
    expect(() => assertProxyCaller({ kind: "agent", agentId: "proxy:a" }, "WatchX")).not.toThrow();
    expect(() => assertProxyCaller({ kind: "bot", botName: "x" }, "WatchX")).toThrow(AccessDeniedError);
  });
});
