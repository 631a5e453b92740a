// WatchInventory (docs/proxy-cache.md): what a proxy needs to list nodes and decide a per-node
// login without asking auth: every Role and User resource, and every node as ListNodes shows it.
// Proxies only ("proxy:<name>"); a node or any other agent is refused.
//
// A stream gets a "snapshot" at once, then "roles" (the whole role and user set) when a Role or
// User changes, "node" / "node_removed" when a node's listed content changes, and a "keepalive"
// at least every keepalive so the proxy can tell a quiet stream from a dead one.
//
// Nodes: heartbeats land in the shared state backend from any auth replica. Every node record
// write or delete is announced on the backend's publish/subscribe channel (node-changes.ts), and
// this feed (only while a proxy listens) reads just the announced records and diffs them against
// what it last sent. A node going offline writes nothing: a once-a-second timer reads the nodes
// whose status is due to turn (in memory, no scan). A full scan of every record runs at the start,
// every resyncMs as the safety net for a lost notification and a record's expiry, and once a
// second as before while notifications may be missed (the backend said it is not listening).
// A heartbeat that changes nothing a decision or the list shows (same hostname, addresses,
// labels, version, status, tunnel) is not sent; its last_heartbeat is sent again only once it
// moved by heartbeatRefreshMs, so a fleet of heartbeating nodes costs the streams a trickle, not
// one message per heartbeat.
import type { ServerWritableStream } from "@grpc/grpc-js";
import type { Logger } from "pino";
import type { Backend } from "../../core/backend/backend.ts";
import type { Clock } from "../../core/clock.ts";
import { AccessDeniedError, LimitExceededError } from "../../core/errors.ts";
import type { ResourceSource } from "../../core/sources/source.ts";
import type { InventoryEvent } from "../../proto/generated/svc/v1/InventoryEvent.ts";
import type { Node } from "../../proto/generated/svc/v1/Node.ts";
import type { WatchInventoryRequest__Output } from "../../proto/generated/svc/v1/WatchInventoryRequest.ts";
import { type Caller, callerLabel } from "./caller.ts";
import {
  admit,
  assertProxyCaller,
  type FeedStream,
  FeedStreams,
  MAX_STREAMS_PER_CALLER,
} from "./feed-streams.ts";
import { NODE_CHANGES_CHANNEL, parseNodeChanges } from "./node-changes.ts";
import { nodeView } from "./node-query.ts";
import type { HeartbeatInput, NodeRecord, NodeStore } from "./nodes.ts";

export const INVENTORY_KEEPALIVE_SECONDS = 5;
export const INVENTORY_SCAN_MS = 1_000;
/** Full scans while change notifications are heard: the safety net for a lost one, and expiry. */
export const INVENTORY_RESYNC_MS = 60_000;
/**
 * A pass is followed by a pause of at least 20 times its own duration (at most MAX_SCAN_MS), so
 * scanning a large fleet while notifications are not heard costs auth about 5 % of a core at
 * most: 10,000 nodes took ~40 ms of CPU per scan on SQLite, which still scans every second.
 */
const SCAN_PAUSE_FACTOR = 20;
export const MAX_SCAN_MS = 5_000;
/** last_heartbeat alone is re-sent at most this often per node (the list shows it; nothing decides on it). */
export const HEARTBEAT_REFRESH_MS = 5 * 60_000;
const ROLES_DEBOUNCE_MS = 20;

type Stream = ServerWritableStream<WatchInventoryRequest__Output, InventoryEvent>;

interface Watcher extends FeedStream<Stream> {
  /** write() said the buffer is full; still full at the next keepalive ends the stream */
  blocked: boolean;
}

export interface InventoryFeedOptions {
  source: Pick<ResourceSource, "list" | "subscribe">;
  nodes: Pick<NodeStore, "list" | "get">;
  /** Where node writes are announced (node-changes.ts); without it every pass is a full scan. */
  changes?: Pick<Backend, "subscribe">;
  clock: Clock;
  logger: Logger;
  keepaliveSeconds?: number;
  scanMs?: number;
  resyncMs?: number;
  heartbeatRefreshMs?: number;
}

/** Only proxies watch the inventory: it holds every node and every role. */
export function assertProxy(caller: Caller): void {
  assertProxyCaller(caller, "WatchInventory");
}

/** What a node change is judged on: everything ListNodes shows but the heartbeat time. */
function contentKey(n: Node): string {
  return JSON.stringify([n.hostname, n.addresses, n.labels, n.version, n.status, n.tunnel ?? null]);
}

interface SentNode {
  node: Node;
  key: string;
  /** When an online node's status turns offline unless it is written again (ms); else Infinity. */
  offlineAtMs: number;
}

export class InventoryFeed {
  readonly #o: InventoryFeedOptions;
  // Bounded per proxy identity like the other feeds: one certificate cannot hold streams open without end.
  readonly #watchers = new FeedStreams<Watcher>({
    maxPerCaller: MAX_STREAMS_PER_CALLER,
    onEmpty: () => this.#stop(),
  });
  readonly #keepaliveSeconds: number;
  /** Every node as last sent to the streams (what a new stream's snapshot holds). */
  #sent = new Map<string, SentNode>();
  /** Time of the last full scan that read the backend (0: none since the first stream). */
  #lastScanAt = 0;
  /** Time of the last pass that left the streams in step with the backend; keepalives need it. */
  #goodAt = 0;
  /** Nodes announced as changed and not read yet. */
  #dirty = new Set<string>();
  /** The backend says notifications are heard; bumped on every change of that. */
  #listening = false;
  #listenEpoch = 0;
  /** A full scan started while listening (same epoch) has completed: notifications suffice. */
  #synced = false;
  /** The pass running now, and the one queued after it (every caller meanwhile shares it). */
  #busy: Promise<void> | undefined;
  #queued: Promise<void> | undefined;
  #wantFull = false;
  #wantDue = false;
  #kick: NodeJS.Immediate | undefined;
  #scanTimer: NodeJS.Timeout | undefined;
  #rolesTimer: NodeJS.Timeout | undefined;
  #unsubscribe: (() => void) | undefined;
  #unsubscribeChanges: (() => Promise<void>) | undefined;
  /** Bumped per start: a scan loop of an earlier start ends instead of running beside the new one. */
  #loop = 0;
  #closed = false;
  #scans = 0;
  #reads = 0;

  constructor(o: InventoryFeedOptions) {
    this.#o = o;
    this.#keepaliveSeconds = Math.max(1, Math.round(o.keepaliveSeconds ?? INVENTORY_KEEPALIVE_SECONDS));
  }

  /** Streams open now (diagnostics, tests). */
  get watchers(): number {
    return this.#watchers.size;
  }

  /** Full node scans completed since this auth started (diagnostics, tests). */
  get scans(): number {
    return this.#scans;
  }

  /** Single node records read for announced changes and due status changes (diagnostics, tests). */
  get reads(): number {
    return this.#reads;
  }

  /** Node changes are taken from notifications now, not from once-a-second scans (diagnostics, tests). */
  get notified(): boolean {
    return this.#listening && this.#synced;
  }

  serve(call: Stream, caller: Caller): void {
    const admitted = admit(call, () => {
      if (this.#closed) throw new AccessDeniedError("auth is shutting down");
      assertProxy(caller);
    });
    if (!admitted) return;
    const w: Watcher = { call, who: callerLabel(caller), blocked: false };
    this.#watchers.add(w, this.#keepaliveSeconds * 1000, (x) => this.#keepalive(x));
    call.on("drain", () => {
      w.blocked = false;
    });
    this.#start();
    // Streams share the state the others were sent, so a snapshot of it plus the diffs that
    // follow is the inventory; only the first stream waits for the first scan.
    void (this.#lastScanAt > 0 ? Promise.resolve() : this.#pass(true)).then(
      () => {
        if (!this.#watchers.has(w)) return;
        this.#write(w, {
          kind: "snapshot",
          ...this.#rolesAndUsers(),
          nodes: [...this.#sent.values()].map((s) => s.node),
          keepalive_seconds: this.#keepaliveSeconds,
        });
      },
      (err: unknown) => {
        this.#o.logger.error({ err }, "inventory snapshot failed");
        this.#watchers.fail(w, err);
      },
    );
  }

  /** Ends every stream (OK status): auth is shutting down. */
  close(): void {
    this.#closed = true;
    this.#watchers.endAll();
    this.#stop();
  }

  #start(): void {
    if (this.#unsubscribe) return;
    this.#unsubscribe = this.#o.source.subscribe((event) => {
      const kind = event.resource.kind;
      if (kind !== "Role" && kind !== "User") return;
      // Edits arriving together (a folder reload, an informer resync) go out as one event.
      if (this.#rolesTimer) return;
      this.#rolesTimer = setTimeout(() => {
        this.#rolesTimer = undefined;
        this.#broadcast({ kind: "roles", ...this.#rolesAndUsers() });
      }, ROLES_DEBOUNCE_MS);
    });
    const loop = ++this.#loop;
    this.#subscribeChanges(loop);
    const tick = (lastMs: number): void => {
      const pause = Math.min(
        MAX_SCAN_MS,
        Math.max(this.#o.scanMs ?? INVENTORY_SCAN_MS, SCAN_PAUSE_FACTOR * lastMs),
      );
      this.#scanTimer = setTimeout(() => {
        const started = performance.now();
        const resyncMs = this.#o.resyncMs ?? INVENTORY_RESYNC_MS;
        const full = !this.notified || this.#o.clock.now().getTime() - this.#lastScanAt >= resyncMs;
        void this.#pass(full, true)
          .catch((err: unknown) => this.#o.logger.warn({ err }, "inventory node scan failed"))
          .finally(() => {
            if (this.#loop === loop && this.#unsubscribe) tick(performance.now() - started);
          });
      }, pause);
      this.#scanTimer.unref();
    };
    tick(0);
  }

  #subscribeChanges(loop: number): void {
    const changes = this.#o.changes;
    if (!changes) return;
    const current = (): boolean => this.#loop === loop && this.#unsubscribe !== undefined;
    changes
      .subscribe(NODE_CHANGES_CHANNEL, {
        message: (payload) => {
          if (!current()) return;
          for (const id of parseNodeChanges(payload)) this.#dirty.add(id);
          // Announcements of one turn are read together, at once (not at the next tick).
          this.#kick ??= setImmediate(() => {
            this.#kick = undefined;
            if (current()) this.#pass(false).catch((err: unknown) => this.#failed(err));
          });
        },
        listening: (on) => {
          if (!current() || on === this.#listening) return;
          this.#listening = on;
          this.#listenEpoch++;
          this.#synced = false;
          if (on) this.#pass(true).catch((err: unknown) => this.#failed(err));
          else this.#o.logger.warn("node change notifications may be missed: inventory scans every second");
        },
      })
      .then(
        (off) => {
          if (current()) this.#unsubscribeChanges = off;
          else void off().catch(() => undefined);
        },
        (err: unknown) =>
          this.#o.logger.warn({ err }, "subscribing to node changes failed; inventory scans every second"),
      );
  }

  #stop(): void {
    this.#unsubscribe?.();
    this.#unsubscribe = undefined;
    void this.#unsubscribeChanges?.().catch(() => undefined);
    this.#unsubscribeChanges = undefined;
    this.#listening = false;
    this.#synced = false;
    clearTimeout(this.#scanTimer);
    if (this.#kick) clearImmediate(this.#kick);
    this.#kick = undefined;
    this.#loop++;
    clearTimeout(this.#rolesTimer);
    this.#rolesTimer = undefined;
    // Nobody listens: the next stream must not be diffed against what nobody received.
    this.#sent = new Map();
    this.#dirty = new Set();
    this.#lastScanAt = 0;
    this.#goodAt = 0;
  }

  #rolesAndUsers(): Pick<InventoryEvent, "roles" | "users" | "deleting_roles"> {
    // Roles being deleted are sent (ListRoles lists them) and named, so the proxy's checker
    // leaves them out as accessForUser does. A User being deleted is left out: its requests go
    // to auth, which answers them with its own rules.
    const roles = this.#o.source.list("Role");
    return {
      roles: roles.map((r) => ({ name: r.metadata.name, spec_json: JSON.stringify(r.spec) })),
      deleting_roles: roles.filter((r) => r.metadata.deletionTimestamp).map((r) => r.metadata.name),
      users: this.#o.source
        .list("User")
        .filter((u) => !u.metadata.deletionTimestamp)
        .map((u) => ({ name: u.metadata.name, spec_json: JSON.stringify(u.spec) })),
    };
  }

  #failed(err: unknown): void {
    this.#o.logger.warn({ err }, "inventory node scan failed");
  }

  /**
   * A full scan now instead of at the next tick. Resolves once what it found is sent; at once
   * when no proxy listens. Never rejects: a failed scan is logged, and the next tick tries again.
   */
  refresh(): Promise<void> {
    if (!this.#unsubscribe) return Promise.resolve();
    return this.#pass(true).catch((err: unknown) => this.#failed(err));
  }

  /**
   * Node changes this auth just wrote (RegisterAgent, DeleteNode): their records are read now, so
   * its own proxies list them at once (a `svcctl nodes rm` followed by `svc ls` must not show the
   * node). Resolves once the changes are sent (also everything announced before this call); at
   * once when no proxy listens. Never rejects, as refresh().
   */
  refreshNodes(ids: readonly string[]): Promise<void> {
    if (!this.#unsubscribe) return Promise.resolve();
    for (const id of ids) this.#dirty.add(id);
    return this.#pass(false).catch((err: unknown) => this.#failed(err));
  }

  /**
   * A heartbeat this auth just stored: when it is a node the streams do not have, or it changes
   * what they show, its record is read now (a joining node is listed at once). Costs one lookup
   * otherwise.
   */
  noteHeartbeat(agentId: string, h: HeartbeatInput): void {
    if (!this.#unsubscribe) return;
    const key = contentKey({
      hostname: h.hostname,
      addresses: h.addresses,
      labels: h.labels,
      version: h.version,
      status: "online",
      ...(h.tunnel ? { tunnel: { proxy_id: h.tunnel.proxyId, peer_addr: h.tunnel.peerAddr } } : {}),
    });
    if (this.#sent.get(agentId)?.key === key) return;
    void this.refreshNodes([agentId]);
  }

  /**
   * One pass over the backend at a time. A caller arriving while one runs gets the pass queued
   * after it (shared by every caller meanwhile): the running one may have read before the change.
   */
  #pass(full: boolean, due = false): Promise<void> {
    if (full) this.#wantFull = true;
    if (due) this.#wantDue = true;
    if (this.#busy === undefined) return this.#run();
    this.#queued ??= this.#busy
      .catch(() => undefined)
      .then(() => {
        this.#queued = undefined;
        return this.#run();
      });
    return this.#queued;
  }

  #run(): Promise<void> {
    const full = this.#wantFull;
    const due = this.#wantDue;
    this.#wantFull = false;
    this.#wantDue = false;
    const run = (full ? this.#scanOnce() : this.#readChanged(due)).finally(() => {
      if (this.#busy === run) this.#busy = undefined;
    });
    this.#busy = run;
    return run;
  }

  async #scanOnce(): Promise<void> {
    const loop = this.#loop;
    const epoch = this.#listenEpoch;
    const listening = this.#listening;
    // What is announced from here on is read again after this scan: it may have read before it.
    this.#dirty.clear();
    const records = await this.#o.nodes.list();
    if (this.#loop !== loop || !this.#unsubscribe) return; // everyone left while the backend answered
    const changed: Node[] = [];
    const seen = new Set<string>();
    for (const r of records) {
      seen.add(r.id);
      const node = this.#diff(r);
      if (node) changed.push(node);
    }
    const removed = [...this.#sent.keys()].filter((id) => !seen.has(id));
    for (const id of removed) this.#sent.delete(id);
    const now = this.#o.clock.now().getTime();
    this.#lastScanAt = now;
    this.#goodAt = now;
    if (listening && epoch === this.#listenEpoch) this.#synced = true;
    this.#scans++;
    if (changed.length > 0) this.#broadcast({ kind: "node", nodes: changed });
    if (removed.length > 0) this.#broadcast({ kind: "node_removed", removed_node_ids: removed });
  }

  /**
   * Reads the announced nodes, and with `due` (the once-a-second tick, not every announcement)
   * those whose status is due to turn offline; sends what changed.
   */
  async #readChanged(due: boolean): Promise<void> {
    const loop = this.#loop;
    const now = this.#o.clock.now().getTime();
    const ids = this.#dirty;
    this.#dirty = new Set();
    if (due) for (const [id, s] of this.#sent) if (s.offlineAtMs <= now) ids.add(id);
    let records: Array<NodeRecord | undefined>;
    try {
      records = await Promise.all([...ids].map((id) => this.#o.nodes.get(id)));
    } catch (err) {
      // Read again on the next pass; keepalives stop if the backend keeps failing.
      if (this.#loop === loop) for (const id of ids) this.#dirty.add(id);
      throw err;
    }
    if (this.#loop !== loop || !this.#unsubscribe) return;
    this.#reads += ids.size;
    const changed: Node[] = [];
    const removed: string[] = [];
    [...ids].forEach((id, i) => {
      const r = records[i];
      if (r === undefined) {
        if (this.#sent.delete(id)) removed.push(id);
        return;
      }
      const node = this.#diff(r);
      if (node) changed.push(node);
    });
    // Only notifications vouch for the nodes no pass read: while they may be missed, the scans do.
    if (this.notified) this.#goodAt = this.#o.clock.now().getTime();
    if (changed.length > 0) this.#broadcast({ kind: "node", nodes: changed });
    if (removed.length > 0) this.#broadcast({ kind: "node_removed", removed_node_ids: removed });
  }

  /** Records a node as read; returns it when the streams must be sent it. */
  #diff(r: NodeRecord): Node | undefined {
    const refreshMs = this.#o.heartbeatRefreshMs ?? HEARTBEAT_REFRESH_MS;
    const node = nodeView(r);
    const key = contentKey(node);
    const old = this.#sent.get(r.id);
    const offlineAtMs = r.online
      ? (r.offlineAt?.getTime() ?? Number.POSITIVE_INFINITY)
      : Number.POSITIVE_INFINITY;
    const stale =
      old !== undefined &&
      Number(node.last_heartbeat_unix_ms) - Number(old.node.last_heartbeat_unix_ms) >= refreshMs;
    if (old?.key === key && !stale) {
      old.offlineAtMs = offlineAtMs;
      return undefined;
    }
    this.#sent.set(r.id, { node, key, offlineAtMs });
    return node;
  }

  #keepalive(w: Watcher): void {
    if (w.blocked) {
      // A proxy that cannot keep up would fall ever further behind: it reconnects and resyncs.
      this.#watchers.fail(w, new LimitExceededError("inventory stream fell behind"));
      return;
    }
    // Keepalives vouch for the nodes: none once the last good pass is older than two of the
    // longest pauses, so the proxy's bound on staleness (docs/proxy-cache.md) holds and it asks
    // auth instead while the backend reads fail.
    const goodAgeMs = this.#o.clock.now().getTime() - this.#goodAt;
    if (goodAgeMs > 2 * MAX_SCAN_MS) return;
    this.#write(w, { kind: "keepalive", keepalive_seconds: this.#keepaliveSeconds });
  }

  #broadcast(event: InventoryEvent): void {
    for (const w of this.#watchers.list()) this.#write(w, event);
  }

  #write(w: Watcher, event: InventoryEvent): void {
    try {
      if (!w.call.write(event)) w.blocked = true;
    } catch (err) {
      this.#o.logger.debug({ err }, "an inventory stream write failed");
      this.#watchers.drop(w);
    }
  }
}
