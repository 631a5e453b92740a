// InventoryNodes (the node half of WatchInventory) on a real SQLite backend: while the backend's
// change notifications are heard it does not scan (a write nobody announced stays unseen until
// the resync), when they may be missed it scans once per scanMs again and takes notifications
// back after a resync; a backend that stops answering stops vouching for the nodes (fresh false).
import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import type { Backend, NotificationHandler } from "../../core/backend/backend.ts";
import { openSqliteBackend, type SqliteBackend } from "../../core/backend/sqlite.ts";
import { systemClock } from "../../core/clock.ts";
import type { InventoryEvent } from "../../proto/generated/svc/v1/InventoryEvent.ts";
import { InventoryNodes } from "./inventory-nodes.ts";
import { NodeStore } from "./nodes.ts";

const logger = pino({ level: "silent" });
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function until(what: string, check: () => boolean, ms = 3_000): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (check()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** The backend, with the feed's notification handler kept so a test can say "not listening". */
function listenedTo(backend: SqliteBackend): {
  changes: Pick<Backend, "subscribe">;
  handler: () => NotificationHandler;
} {
  let held: NotificationHandler | undefined;
  return {
    changes: {
      subscribe: (channel, handler) => {
        held = handler;
        return backend.subscribe(channel, handler);
      },
    },
    handler: () => {
      if (!held) throw new Error("not subscribed");
      return held;
    },
  };
}

/** A record written behind the store's back: no announcement. */
const unannounced = (backend: SqliteBackend, id: string) =>
  backend.put(`nodes/${id}`, {
    id,
    hostname: id,
    addresses: [],
    labels: {},
    version: "1",
    last: new Date().toISOString(),
  });

async function setup() {
  const backend = await openSqliteBackend({ path: ":memory:", clock: systemClock, sweepIntervalMs: 0 });
  cleanups.push(() => backend.close());
  const store = new NodeStore({ backend, clock: systemClock });
  const events: InventoryEvent[] = [];
  const { changes, handler } = listenedTo(backend);
  const nodes = new InventoryNodes({
    nodes: store,
    changes,
    clock: systemClock,
    logger,
    scanMs: 30,
    broadcast: (e) => events.push(e),
  });
  cleanups.push(() => nodes.stop());
  nodes.start();
  await nodes.ready();
  await until("notifications heard", () => nodes.notified);
  const ids = () => new Set(events.flatMap((e) => (e.nodes ?? []).map((n) => n.id)));
  return { backend, store, nodes, events, handler, ids };
}

describe("InventoryNodes", () => {
  it("while notifications are heard: announced writes are read, nothing is scanned", async () => {
    const { backend, store, nodes, ids } = await setup();
    const scans = nodes.scans;
    await store.heartbeat("announced", { hostname: "a", addresses: [], labels: {}, version: "1" });
    await until("the announced node", () => ids().has("announced"));
    await unannounced(backend, "silent");
    // Ten scan periods: a scanning feed would have found it.
    await new Promise((r) => setTimeout(r, 300));
    expect(ids().has("silent")).toBe(false);
    expect(nodes.scans).toBe(scans);
  });

  it("when notifications may be missed it scans again, and takes them back after a resync", async () => {
    const { backend, nodes, handler, ids } = await setup();
    handler().listening?.(false);
    expect(nodes.notified).toBe(false);
    await unannounced(backend, "silent");
    await until("the unannounced node, by a scan", () => ids().has("silent"));
    const scans = nodes.scans;
    handler().listening?.(true);
    await until("a resync, then notifications again", () => nodes.notified);
    expect(nodes.scans).toBeGreaterThan(scans);
    const after = nodes.scans;
    await new Promise((r) => setTimeout(r, 300));
    expect(nodes.scans).toBe(after);
    expect(nodes.fresh(1_000)).toBe(true);
  });

  it("stops vouching for the nodes when the backend stops answering", async () => {
    const { backend, nodes, handler } = await setup();
    expect(nodes.fresh(1_000)).toBe(true);
    // Scanning (not heard) against a closed backend: every scan fails.
    handler().listening?.(false);
    await backend.close();
    await new Promise((r) => setTimeout(r, 300));
    expect(nodes.fresh(200)).toBe(false);
  });
});
