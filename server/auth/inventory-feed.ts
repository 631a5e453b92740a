// WatchInventory (docs/proxy-cache.md): what a proxy needs to list nodes and decide a per-node
// login without asking auth: every Role and User resource, and every node as ListNodes shows it.
// Proxies only ("proxy:<name>"); a node or any other agent is refused.
//
// A stream gets a "snapshot" at once, then "roles" (the whole role and user set) when a Role or
// User changes, "node" / "node_removed" when a node's listed content changes, and a "keepalive"
// at least every keepalive so the proxy can tell a quiet stream from a dead one.
//
// Nodes: heartbeats land in the shared state backend from any auth replica, and the backend has no
// change notification, so one scan per auth (only while a proxy listens) reads the node records
// every scanMs and diffs them against what it last sent. A heartbeat that changes nothing a
// decision or the list shows (same hostname, addresses, labels, version, status, tunnel) is not
// sent; its last_heartbeat is sent again only once it moved by heartbeatRefreshMs, so a fleet of
// heartbeating nodes costs the streams a trickle, not one message per heartbeat.
import type { ServerWritableStream } from "@grpc/grpc-js";
import type { Logger } from "pino";
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
import { nodeView } from "./node-query.ts";
import type { HeartbeatInput, NodeStore } from "./nodes.ts";

export const INVENTORY_KEEPALIVE_SECONDS = 5;
export const INVENTORY_SCAN_MS = 1_000;
/**
 * A scan is followed by a pause of at least 20 times its own duration (at most MAX_SCAN_MS), so
 * a large fleet costs auth about 5 % of a core at most: 10,000 nodes took ~40 ms of CPU per scan
 * on SQLite, which still scans every second.
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
  nodes: Pick<NodeStore, "list">;
  clock: Clock;
  logger: Logger;
  keepaliveSeconds?: number;
  scanMs?: number;
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
}

export class InventoryFeed {
  readonly #o: InventoryFeedOptions;
  // No bound per identity: only proxies are admitted.
  // Bounded per proxy identity like the other feeds: one certificate cannot hold streams open without end.
  readonly #watchers = new FeedStreams<Watcher>({
    maxPerCaller: MAX_STREAMS_PER_CALLER,
    onEmpty: () => this.#stop(),
  });
  readonly #keepaliveSeconds: number;
  /** Every node as last sent to the streams (what a new stream's snapshot holds). */
  #sent = new Map<string, SentNode>();
  /** Time of the last scan that read the backend; keepalives stop when it is too old. */
  #lastScanAt = 0;
  #scanning: Promise<void> | undefined;
  #rescan: Promise<void> | undefined;
  #scanTimer: NodeJS.Timeout | undefined;
  #rolesTimer: NodeJS.Timeout | undefined;
  #unsubscribe: (() => void) | undefined;
  /** Bumped per start: a scan loop of an earlier start ends instead of running beside the new one. */
  #loop = 0;
  #closed = false;
  #scans = 0;

  constructor(o: InventoryFeedOptions) {
    this.#o = o;
    this.#keepaliveSeconds = Math.max(1, Math.round(o.keepaliveSeconds ?? INVENTORY_KEEPALIVE_SECONDS));
  }

  /** Streams open now (diagnostics, tests). */
  get watchers(): number {
    return this.#watchers.size;
  }

  /** Node scans completed since this auth started (diagnostics, tests). */
  get scans(): number {
    return this.#scans;
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
    void (this.#lastScanAt > 0 ? Promise.resolve() : this.#scan()).then(
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
    const tick = (lastMs: number): void => {
      const pause = Math.min(
        MAX_SCAN_MS,
        Math.max(this.#o.scanMs ?? INVENTORY_SCAN_MS, SCAN_PAUSE_FACTOR * lastMs),
      );
      this.#scanTimer = setTimeout(() => {
        const started = performance.now();
        void this.#scan()
          .catch((err: unknown) => this.#o.logger.warn({ err }, "inventory node scan failed"))
          .finally(() => {
            if (this.#loop === loop && this.#unsubscribe) tick(performance.now() - started);
          });
      }, pause);
      this.#scanTimer.unref();
    };
    tick(0);
  }

  #stop(): void {
    this.#unsubscribe?.();
    this.#unsubscribe = undefined;
    clearTimeout(this.#scanTimer);
    this.#loop++;
    clearTimeout(this.#rolesTimer);
    this.#rolesTimer = undefined;
    // Nobody listens: the next stream must not be diffed against what nobody received.
    this.#sent = new Map();
    this.#lastScanAt = 0;
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

  /**
   * A node change this auth just wrote (DeleteNode): scan now instead of at the next tick, so its
   * own proxies list it at once (a `svcctl nodes rm` followed by `svc ls` must not show the node).
   * Resolves once the change is sent; at once when no proxy listens. Never rejects: a failed
   * scan is logged, and the next tick tries again.
   */
  refresh(): Promise<void> {
    if (!this.#unsubscribe) return Promise.resolve();
    // A scan already running may have read the backend before the change: one more after it.
    const running = this.#scanning;
    const failed = (err: unknown): void => this.#o.logger.warn({ err }, "inventory node scan failed");
    if (running === undefined) return this.#scan().catch(failed);
    this.#rescan ??= running
      .catch(() => undefined)
      .then(() => {
        this.#rescan = undefined;
        return this.#scan();
      });
    return this.#rescan.catch(failed);
  }

  /**
   * A heartbeat this auth just stored: when it is a node the streams do not have, or it changes
   * what they show, scan now (a joining node is listed at once). Costs one lookup otherwise.
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
    void this.refresh();
  }

  /** One backend scan at a time: a caller arriving meanwhile shares the running one. */
  #scan(): Promise<void> {
    if (!this.#scanning) {
      this.#scanning = this.#scanOnce().finally(() => {
        this.#scanning = undefined;
      });
    }
    return this.#scanning;
  }

  async #scanOnce(): Promise<void> {
    const records = await this.#o.nodes.list();
    if (!this.#unsubscribe) return; // everyone left while the backend answered
    const refreshMs = this.#o.heartbeatRefreshMs ?? HEARTBEAT_REFRESH_MS;
    const changed: Node[] = [];
    const seen = new Set<string>();
    for (const r of records) {
      seen.add(r.id);
      const node = nodeView(r);
      const key = contentKey(node);
      const old = this.#sent.get(r.id);
      const stale =
        old !== undefined &&
        Number(node.last_heartbeat_unix_ms) - Number(old.node.last_heartbeat_unix_ms) >= refreshMs;
      if (old?.key === key && !stale) continue;
      this.#sent.set(r.id, { node, key });
      changed.push(node);
    }
    const removed = [...this.#sent.keys()].filter((id) => !seen.has(id));
    for (const id of removed) this.#sent.delete(id);
    this.#lastScanAt = this.#o.clock.now().getTime();
    this.#scans++;
    if (changed.length > 0) this.#broadcast({ kind: "node", nodes: changed });
    if (removed.length > 0) this.#broadcast({ kind: "node_removed", removed_node_ids: removed });
  }

  #keepalive(w: Watcher): void {
    if (w.blocked) {
      // A proxy that cannot keep up would fall ever further behind: it reconnects and resyncs.
      this.#watchers.fail(w, new LimitExceededError("inventory stream fell behind"));
      return;
    }
    // Keepalives vouch for the nodes: none once the last good scan is older than two of the
    // longest pauses, so the proxy's bound on staleness (docs/proxy-cache.md) holds and it asks
    // auth instead while the backend scans fail.
    const scanAgeMs = this.#o.clock.now().getTime() - this.#lastScanAt;
    if (scanAgeMs > 2 * MAX_SCAN_MS) return;
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
