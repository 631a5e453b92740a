// The feed's own bookkeeping, with a stand-in for grpc-js's server stream (write/end + events):
// coalescing of changes, a change during an in-flight build, keepalives and dropping a stream.
// test/locks.test.ts covers the same over real gRPC.
import { EventEmitter } from "node:events";
import type { ServerWritableStream } from "@grpc/grpc-js";
import pino from "pino";
import { afterEach, describe, expect, it, vi } from "vitest";
import { systemClock } from "../../core/clock.ts";
import type { LockRecord } from "../../core/locks/lock.ts";
import type { PublicKeys } from "../../proto/generated/svc/v1/PublicKeys.ts";
import type { TrustSnapshot } from "../../proto/generated/svc/v1/TrustSnapshot.ts";
import type { WatchTrustRequest__Output } from "../../proto/generated/svc/v1/WatchTrustRequest.ts";
import { TrustFeed, type TrustFeedSources } from "./trust-feed.ts";

class Stream extends EventEmitter {
  written: TrustSnapshot[] = [];
  ended = false;
  write(s: TrustSnapshot): boolean {
    this.written.push(s);
    return true;
  }
  end(): void {
    this.ended = true;
  }
}

function sources() {
  let locks: LockRecord[] = [];
  let keys: () => Promise<PublicKeys> = async () => ({ user_ca_ssh_public_keys: ["k1"] });
  const listeners = new Set<() => void>();
  const s: TrustFeedSources = {
    locks: () => locks,
    publicKeys: () => keys(),
    authorities: () => [],
    onChange: (fn) => {
      listeners.add(fn);
      return () => listeners.delete(fn);
    },
  };
  return {
    s,
    listeners,
    setLocks(l: LockRecord[]) {
      locks = l;
      for (const fn of listeners) fn();
    },
    setKeys(k: () => Promise<PublicKeys>) {
      keys = k;
    },
  };
}

const lock = (name: string): LockRecord => ({
  name,
  target: { user: name },
  message: "",
  createdBy: "t",
  createdAt: new Date(0),
});
const agent = { kind: "agent", agentId: "node-1" } as const;
const asCall = (s: Stream) => s as unknown as ServerWritableStream<WatchTrustRequest__Output, TrustSnapshot>;

let feed: TrustFeed | undefined;
afterEach(() => {
  feed?.close();
  vi.useRealTimers();
});

describe("TrustFeed", () => {
  it("sends a snapshot at once, one per burst of changes, none for a change that changes nothing", async () => {
    const src = sources();
    feed = new TrustFeed({
      sources: src.s,
      clock: systemClock,
      logger: pino({ level: "silent" }),
      debounceMs: 20,
    });
    const st = new Stream();
    feed.serve(asCall(st), agent);
    await vi.waitFor(() => expect(st.written).toHaveLength(1));
    expect(st.written[0]?.keepalive_seconds).toBe(15);
    src.setLocks([lock("a")]);
    src.setLocks([lock("a"), lock("b")]);
    await vi.waitFor(() => expect(st.written).toHaveLength(2));
    expect(st.written[1]?.locks?.map((l) => l.name)).toEqual(["a", "b"]);
    src.setLocks([lock("a"), lock("b")]);
    await new Promise((r) => setTimeout(r, 60));
    expect(st.written).toHaveLength(2);
  });

  it("a change while a snapshot is being built is not lost", async () => {
    const src = sources();
    let release: (() => void) | undefined;
    src.setKeys(
      () => new Promise<PublicKeys>((r) => (release = () => r({ user_ca_ssh_public_keys: ["k1"] }))),
    );
    feed = new TrustFeed({
      sources: src.s,
      clock: systemClock,
      logger: pino({ level: "silent" }),
      debounceMs: 1,
    });
    const st = new Stream();
    feed.serve(asCall(st), agent);
    await vi.waitFor(() => expect(release).toBeDefined());
    // The lock arrives after the build read the (empty) locks, before it finished.
    src.setKeys(async () => ({ user_ca_ssh_public_keys: ["k1"] }));
    src.setLocks([lock("late")]);
    release?.();
    await vi.waitFor(() => expect(st.written.at(-1)?.locks?.map((l) => l.name)).toEqual(["late"]));
  });

  it("repeats the current snapshot every keepalive, refuses other services, drops a closed stream", async () => {
    vi.useFakeTimers({ toFake: ["setInterval", "clearInterval"] });
    const src = sources();
    feed = new TrustFeed({
      sources: src.s,
      clock: systemClock,
      logger: pino({ level: "silent" }),
      keepaliveSeconds: 2,
    });
    const st = new Stream();
    feed.serve(asCall(st), { kind: "agent", agentId: "proxy:web" });
    await vi.waitFor(() => expect(st.written).toHaveLength(1));
    await vi.advanceTimersByTimeAsync(2000);
    await vi.waitFor(() => expect(st.written).toHaveLength(2));
    expect(st.written[1]?.digest).toBe(st.written[0]?.digest);
    expect(src.listeners.size).toBe(1);
    st.emit("cancelled");
    expect(feed.watchers).toBe(0);
    expect(src.listeners.size).toBe(0);

    const other = new Stream();
    const errors: unknown[] = [];
    other.on("error", (e) => errors.push(e));
    feed.serve(asCall(other), { kind: "agent", agentId: "operator:x" });
    expect(errors).toHaveLength(1);
    expect(other.written).toEqual([]);
  });
});
