// The inventory feed takes node changes from the backend's notifications (server/auth/
// node-changes.ts), not from scanning every record: a node written or removed through another
// replica's NodeStore (a second backend on the same SQLite file, as a second auth process would
// hold it) reaches a proxy's WatchInventory stream at once, with no full scan in between; a node
// that stops beating turns offline on the feed's timer; a burst of announcements is read, not
// scanned. Real auth over gRPC/TLS, a real stream client with the proxy's certificate. On
// PostgreSQL, two backends on one schema (two replicas): a write on one reaches the other's feed.
import type { ClientReadableStream } from "@grpc/grpc-js";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PostgresBackend } from "../core/backend/postgres.ts";
import { openSqliteBackend, type SqliteBackend } from "../core/backend/sqlite.ts";
import { type Clock, systemClock } from "../core/clock.ts";
import type { InventoryEvent, InventoryEvent__Output } from "../proto/generated/svc/v1/InventoryEvent.ts";
import { type AuthServiceClient, agentMetadata, createAuthClient } from "../server/auth/client.ts";
import { InventoryNodes } from "../server/auth/inventory-nodes.ts";
import { NODE_CHANGES_CHANNEL, nodeChangePayloads, parseNodeChanges } from "../server/auth/node-changes.ts";
import { HEARTBEAT_INTERVAL_SECONDS, NodeStore } from "../server/auth/nodes.ts";
import { proxyCallerId } from "../server/proxy/tunnel/registration.ts";
import { dropSchema, testPostgresUrl, uniqueSchemaName } from "./harness/postgres.ts";
import { type AuthSide, startAuthSide } from "./proxy-fixture.ts";

let side: AuthSide;
let other: SqliteBackend;
let otherNodes: NodeStore;
let client: AuthServiceClient;
let stream: ClientReadableStream<InventoryEvent__Output>;
const events: InventoryEvent__Output[] = [];

const beat = (hostname: string, labels: Record<string, string> = { env: "dev" }) => ({
  hostname,
  addresses: ["10.0.0.1:3022"],
  labels,
  version: "1.0.0",
});

async function until(what: string, check: () => boolean, ms = 5_000): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (check()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** The first event after `from` carrying node `id` (a "node" event) or naming it removed. */
function nodeEvent(from: number, id: string): InventoryEvent__Output | undefined {
  return events.slice(from).find((e) => e.nodes.some((n) => n.id === id) || e.removed_node_ids.includes(id));
}

beforeAll(async () => {
  side = await startAuthSide();
  for (let i = 0; i < 20; i++) await side.auth.service.nodes.heartbeat(`seed-${i}`, beat(`seed-${i}`));
  // Another replica: its own backend on the same file, its own NodeStore (as another auth holds).
  other = await openSqliteBackend({ path: side.backend.path, clock: systemClock, sweepIntervalMs: 0 });
  otherNodes = new NodeStore({ backend: other, clock: systemClock });
  client = createAuthClient({
    address: side.auth.address,
    caPems: [side.hostCaPem],
    certPem: side.proxyClient.certPem,
    keyPem: side.proxyClient.keyPem,
  });
  stream = client.WatchInventory({}, agentMetadata(proxyCallerId(side.proxyClient.certPem)));
  stream.on("data", (e: InventoryEvent__Output) => events.push(e));
  stream.on("error", () => undefined); // cancelled in afterAll
  await until("the snapshot", () => events.some((e) => e.kind === "snapshot"), 15_000);
  // The feed leaves the once-a-second scans after its first scan while notifications are heard.
  await until("the feed on notifications", () => side.auth.service.inventoryFeed.notified, 15_000);
}, 60_000);

afterAll(async () => {
  stream?.cancel();
  client?.close();
  await other?.close();
  await side?.close();
});

describe("node changes reach the inventory stream from notifications", () => {
  it("the snapshot holds the nodes written before the stream", () => {
    const snapshot = events.find((e) => e.kind === "snapshot");
    expect(snapshot?.nodes.map((n) => n.id).sort()).toEqual(
      Array.from({ length: 20 }, (_, i) => `seed-${i}`).sort(),
    );
  });

  it("a node joining on another replica is sent at once, read alone, no scan", async () => {
    const feed = side.auth.service.inventoryFeed;
    const scans = feed.scans;
    const reads = feed.reads;
    const from = events.length;
    await otherNodes.heartbeat("remote-1", beat("remote-1", { env: "prod" }));
    await until("the remote node on the stream", () => nodeEvent(from, "remote-1") !== undefined, 2_000);
    const sent = nodeEvent(from, "remote-1")?.nodes.find((n) => n.id === "remote-1");
    expect(sent).toMatchObject({ hostname: "remote-1", status: "online", labels: { env: "prod" } });
    expect(feed.scans).toBe(scans);
    expect(feed.reads).toBeGreaterThan(reads);
  });

  it("a label change on another replica is sent; an unchanged rewrite is not", async () => {
    const feed = side.auth.service.inventoryFeed;
    const from = events.length;
    await otherNodes.heartbeat("remote-1", beat("remote-1", { env: "prod" }));
    const reads = feed.reads;
    await until("the unchanged rewrite read", () => feed.reads > reads, 2_000);
    expect(nodeEvent(from, "remote-1")).toBeUndefined();
    await otherNodes.heartbeat("remote-1", beat("remote-1", { env: "prod", rack: "r7" }));
    await until("the label change", () => nodeEvent(from, "remote-1") !== undefined, 2_000);
    expect(nodeEvent(from, "remote-1")?.nodes.find((n) => n.id === "remote-1")?.labels).toEqual({
      env: "prod",
      rack: "r7",
    });
  });

  it("a node removed on another replica is sent as node_removed at once, no scan", async () => {
    const scans = side.auth.service.inventoryFeed.scans;
    const from = events.length;
    await otherNodes.remove("remote-1");
    await until("the removal", () => nodeEvent(from, "remote-1") !== undefined, 2_000);
    expect(nodeEvent(from, "remote-1")).toMatchObject({
      kind: "node_removed",
      removed_node_ids: ["remote-1"],
    });
    expect(side.auth.service.inventoryFeed.scans).toBe(scans);
  });

  it("a node that stops beating turns offline on the feed's timer (nothing is written)", async () => {
    const scans = side.auth.service.inventoryFeed.scans;
    // Its last heartbeat was 3 intervals ago less 1.5 s: online now, offline in 1.5 s.
    const offlineInMs = 1_500;
    const past: Clock = {
      now: () => new Date(Date.now() - 3 * HEARTBEAT_INTERVAL_SECONDS * 1000 + offlineInMs),
    };
    const from = events.length;
    await new NodeStore({ backend: other, clock: past }).heartbeat("fading", beat("fading"));
    await until("the node, online", () => nodeEvent(from, "fading") !== undefined, 2_000);
    expect(nodeEvent(from, "fading")?.nodes.find((n) => n.id === "fading")?.status).toBe("online");
    const next = events.length;
    await until("the node, offline", () => nodeEvent(next, "fading") !== undefined, 5_000);
    expect(nodeEvent(next, "fading")?.nodes.find((n) => n.id === "fading")?.status).toBe("offline");
    expect(side.auth.service.inventoryFeed.scans).toBe(scans);
  });

  it("200 nodes written in one burst on another replica arrive in few events, no scan", async () => {
    const scans = side.auth.service.inventoryFeed.scans;
    const from = events.length;
    const ids = Array.from({ length: 200 }, (_, i) => `burst-${i}`);
    await Promise.all(ids.map((id) => otherNodes.heartbeat(id, beat(id))));
    const got = (): Set<string> => new Set(events.slice(from).flatMap((e) => e.nodes.map((n) => n.id)));
    await until("every burst node", () => ids.every((id) => got().has(id)), 5_000);
    const nodeEvents = events.slice(from).filter((e) => e.kind === "node").length;
    // One notification (and one read pass) per event-loop turn of writes, not one per node.
    expect(nodeEvents).toBeLessThan(50);
    expect(side.auth.service.inventoryFeed.scans).toBe(scans);
  });
});

describe("node change payloads", () => {
  it("split under the backend's bound and read back whole", () => {
    const ids = Array.from({ length: 1_000 }, (_, i) => `agent-${"x".repeat(30)}-${i}`);
    const payloads = nodeChangePayloads(ids);
    expect(payloads.length).toBeGreaterThan(1);
    for (const p of payloads) expect(Buffer.byteLength(p)).toBeLessThanOrEqual(7_900);
    expect(payloads.flatMap(parseNodeChanges)).toEqual(ids);
    expect(NODE_CHANGES_CHANNEL).toMatch(/^[a-z][a-z0-9_]{0,39}$/);
  });

  it("a malformed payload names no node (a receiver never throws)", () => {
    expect(parseNodeChanges("{not json")).toEqual([]);
    expect(parseNodeChanges('{"a":1}')).toEqual([]);
    expect(parseNodeChanges('["ok", 3, null, ""]')).toEqual(["ok"]);
  });
});

describe("on PostgreSQL: a write on one replica reaches the other's feed by NOTIFY", () => {
  it("joins, changes and removals arrive without a scan", async () => {
    const url = testPostgresUrl();
    const schema = uniqueSchemaName("invnotify");
    const open = () =>
      PostgresBackend.open({
        connectionString: url,
        clock: systemClock,
        schema,
        poolSize: 2,
        sweepIntervalMs: 0,
      });
    const a = await open();
    const b = await open();
    const got: InventoryEvent[] = [];
    const feed = new InventoryNodes({
      nodes: new NodeStore({ backend: a, clock: systemClock }),
      changes: a,
      clock: systemClock,
      logger: pino({ level: "silent" }),
      broadcast: (e) => got.push(e),
    });
    try {
      feed.start();
      await feed.ready();
      await until("the LISTEN connection", () => feed.notified, 10_000);
      const scans = feed.scans;
      const writer = new NodeStore({ backend: b, clock: systemClock });
      await writer.heartbeat("pg-1", beat("pg-1", { env: "prod" }));
      const has = (pred: (e: InventoryEvent) => boolean) => got.some(pred);
      await until("the join", () => has((e) => (e.nodes ?? []).some((n) => n.id === "pg-1")), 5_000);
      await writer.heartbeat("pg-1", beat("pg-1", { env: "staging" }));
      await until(
        "the label change",
        () => has((e) => (e.nodes ?? []).some((n) => n.id === "pg-1" && n.labels?.["env"] === "staging")),
        5_000,
      );
      await writer.remove("pg-1");
      await until("the removal", () => has((e) => (e.removed_node_ids ?? []).includes("pg-1")), 5_000);
      expect(feed.scans).toBe(scans);
    } finally {
      feed.stop();
      await a.close();
      await b.close();
      await dropSchema(url, schema);
    }
  }, 30_000);
});
