// The node half of WatchInventory (inventory-feed.ts): every node as last sent to the streams,
// kept in step with the state backend while a proxy listens. Every node record write or delete
// is announced on the backend's publish/subscribe channel (node-changes.ts): the announced
// records are read alone and diffed against what was sent. A node going offline writes nothing,
// so a once-a-second timer reads the nodes whose status is due to turn (found in memory, no
// scan). A full scan of every record runs at the start, every resyncMs as the safety net for a
// lost notification and a record's expiry, and once a second as before while notifications may
// be missed (the backend said it is not listening). A read that changes nothing a decision or the
// list shows (hostname, addresses, labels, version, status, tunnel) sends nothing; last_heartbeat
// alone is sent again only once it moved by heartbeatRefreshMs.
import type { Logger } from "pino";
import type { Backend } from "../../core/backend/backend.ts";
import type { Clock } from "../../core/clock.ts";
import type { InventoryEvent } from "../../proto/generated/svc/v1/InventoryEvent.ts";
import type { Node } from "../../proto/generated/svc/v1/Node.ts";
import { NODE_CHANGES_CHANNEL, parseNodeChanges } from "./node-changes.ts";
import { nodeView } from "./node-query.ts";
import type { HeartbeatInput, NodeRecord, NodeStore } from "./nodes.ts";

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

export interface InventoryNodesOptions {
  nodes: Pick<NodeStore, "list" | "get">;
  /** Where node writes are announced (node-changes.ts); without it every pass is a full scan. */
  changes?: Pick<Backend, "subscribe">;
  clock: Clock;
  logger: Logger;
  scanMs?: number;
  resyncMs?: number;
  heartbeatRefreshMs?: number;
  /** Sends a node change to every stream. */
  broadcast: (event: InventoryEvent) => void;
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

export class InventoryNodes {
  readonly #o: InventoryNodesOptions;
  /** Every node as last sent to the streams (what a new stream's snapshot holds). */
  #sent = new Map<string, SentNode>();
  /** Time of the last full scan that read the backend (0: none since start). */
  #lastScanAt = 0;
  /** Time of the last pass that left the streams in step with the backend. */
  #goodAt = 0;
  /** Nodes announced as changed and not read yet. */
  #dirty = new Set<string>();
  /** The backend says notifications are heard; the epoch is bumped on every change of that. */
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
  #unsubscribe: (() => Promise<void>) | undefined;
  #running = false;
  /** Bumped per start and stop: work of an earlier start ends instead of running beside the new one. */
  #loop = 0;
  #scans = 0;
  #reads = 0;

  constructor(o: InventoryNodesOptions) {
    this.#o = o;
  }

  /** Full node scans completed (diagnostics, tests). */
  get scans(): number {
    return this.#scans;
  }

  /** Single node records read for announced changes and due status changes (diagnostics, tests). */
  get reads(): number {
    return this.#reads;
  }

  /** Node changes are taken from notifications now, not from once-a-second scans. */
  get notified(): boolean {
    return this.#listening && this.#synced;
  }

  /** Every node as last sent. */
  snapshot(): Node[] {
    return [...this.#sent.values()].map((s) => s.node);
  }

  /** Resolves once a first full scan is done (at once when one is). */
  ready(): Promise<void> {
    return this.#lastScanAt > 0 ? Promise.resolve() : this.#pass(true);
  }

  /** The last good pass is at most `maxAgeMs` old: the streams may be told the nodes are current. */
  fresh(maxAgeMs: number): boolean {
    return this.#o.clock.now().getTime() - this.#goodAt <= maxAgeMs;
  }

  start(): void {
    if (this.#running) return;
    this.#running = true;
    const loop = ++this.#loop;
    this.#subscribe(loop);
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
          .catch((err: unknown) => this.#failed(err))
          .finally(() => {
            if (this.#loop === loop) tick(performance.now() - started);
          });
      }, pause);
      this.#scanTimer.unref();
    };
    tick(0);
  }

  /** Nobody listens: the next stream must not be diffed against what nobody received. */
  stop(): void {
    this.#running = false;
    this.#loop++;
    void this.#unsubscribe?.().catch(() => undefined);
    this.#unsubscribe = undefined;
    this.#listening = false;
    this.#synced = false;
    clearTimeout(this.#scanTimer);
    if (this.#kick) clearImmediate(this.#kick);
    this.#kick = undefined;
    this.#sent = new Map();
    this.#dirty = new Set();
    this.#lastScanAt = 0;
    this.#goodAt = 0;
  }

  /** A full scan now; resolves once what it found is sent. Never rejects (logged). */
  refresh(): Promise<void> {
    if (!this.#running) return Promise.resolve();
    return this.#pass(true).catch((err: unknown) => this.#failed(err));
  }

  /** These records read now (and everything announced before); resolves once sent. Never rejects. */
  refreshNodes(ids: readonly string[]): Promise<void> {
    if (!this.#running) return Promise.resolve();
    for (const id of ids) this.#dirty.add(id);
    return this.#pass(false).catch((err: unknown) => this.#failed(err));
  }

  /** A heartbeat this auth stored: read now when it is new or changes what is shown. */
  noteHeartbeat(agentId: string, h: HeartbeatInput): void {
    if (!this.#running) return;
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

  #failed(err: unknown): void {
    this.#o.logger.warn({ err }, "inventory node scan failed");
  }

  #subscribe(loop: number): void {
    const changes = this.#o.changes;
    if (!changes) return;
    const current = (): boolean => this.#loop === loop;
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
          if (current()) this.#unsubscribe = off;
          else void off().catch(() => undefined);
        },
        (err: unknown) =>
          this.#o.logger.warn({ err }, "subscribing to node changes failed; inventory scans every second"),
      );
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
    if (this.#loop !== loop) return; // everyone left while the backend answered
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
    if (changed.length > 0) this.#o.broadcast({ kind: "node", nodes: changed });
    if (removed.length > 0) this.#o.broadcast({ kind: "node_removed", removed_node_ids: removed });
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
    if (this.#loop !== loop) return;
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
    if (changed.length > 0) this.#o.broadcast({ kind: "node", nodes: changed });
    if (removed.length > 0) this.#o.broadcast({ kind: "node_removed", removed_node_ids: removed });
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
}
