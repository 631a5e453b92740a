// The inventory stream's watchdog, against a stand-in for auth's WatchInventory call: a stream
// that opened but never sent its snapshot (a half-open connection, an auth stuck before its first
// scan answered) must be given up and opened again, as a synced stream that goes silent is.
import { EventEmitter } from "node:events";
import type { ClientReadableStream } from "@grpc/grpc-js";
import { Metadata } from "@grpc/grpc-js";
import pino from "pino";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { systemClock } from "../../core/clock.ts";
import type { AuthServiceClient } from "../../proto/generated/svc/v1/AuthService.ts";
import type { InventoryEvent__Output } from "../../proto/generated/svc/v1/InventoryEvent.ts";
import { InventoryCache } from "./inventory-cache.ts";

class FakeCall extends EventEmitter {
  cancelled = false;
  cancel(): void {
    this.cancelled = true;
  }
}

const snapshot = {
  kind: "snapshot",
  roles: [],
  users: [],
  nodes: [],
  deleting_roles: [],
  removed_node_ids: [],
  keepalive_seconds: 5,
} as unknown as InventoryEvent__Output;

describe("InventoryCache stream watchdog", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("gives up a stream that never sent its snapshot and opens another", async () => {
    const calls: FakeCall[] = [];
    const client = {
      WatchInventory: () => {
        const call = new FakeCall();
        calls.push(call);
        return call as unknown as ClientReadableStream<InventoryEvent__Output>;
      },
    } as unknown as AuthServiceClient;
    const cache = new InventoryCache({
      connection: () => ({ client, metadata: () => new Metadata() }),
      clock: systemClock,
      logger: pino({ level: "silent" }),
      locks: () => [],
      backoff: { initialMs: 10, maxMs: 10 },
    });
    cache.start();
    expect(calls).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(25_000);
    expect(calls[0]?.cancelled).toBe(true);
    expect(calls.length).toBeGreaterThanOrEqual(2);
    expect(cache.fresh()).toBe(false);
    calls.at(-1)?.emit("data", snapshot);
    expect(cache.fresh()).toBe(true);
    cache.close();
  });
});
