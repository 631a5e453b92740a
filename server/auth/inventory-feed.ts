// WatchInventory (docs/proxy-cache.md): what a proxy needs to list nodes and decide a per-node
// login without asking auth: every Role and User resource, and every node as ListNodes shows it.
// Proxies only ("proxy:<name>"); a node or any other agent is refused.
//
// A stream gets a "snapshot" at once, then "roles" (the whole role and user set) when a Role or
// User changes, "node" / "node_removed" when a node's listed content changes, and a "keepalive"
// at least every keepalive so the proxy can tell a quiet stream from a dead one. The nodes are
// kept in step with the backend by inventory-nodes.ts (change notifications, a slow resync).
import type { ServerWritableStream } from "@grpc/grpc-js";
import type { Logger } from "pino";
import type { Backend } from "../../core/backend/backend.ts";
import type { Clock } from "../../core/clock.ts";
import { AccessDeniedError, LimitExceededError } from "../../core/errors.ts";
import type { ResourceSource } from "../../core/sources/source.ts";
import type { InventoryEvent } from "../../proto/generated/svc/v1/InventoryEvent.ts";
import type { WatchInventoryRequest__Output } from "../../proto/generated/svc/v1/WatchInventoryRequest.ts";
import { type Caller, callerLabel } from "./caller.ts";
import {
  admit,
  assertProxyCaller,
  type FeedStream,
  FeedStreams,
  MAX_STREAMS_PER_CALLER,
} from "./feed-streams.ts";
import { InventoryNodes, MAX_SCAN_MS } from "./inventory-nodes.ts";
import type { HeartbeatInput, NodeStore } from "./nodes.ts";

export const INVENTORY_KEEPALIVE_SECONDS = 5;
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

export class InventoryFeed {
  readonly #o: InventoryFeedOptions;
  // Bounded per proxy identity like the other feeds: one certificate cannot hold streams open without end.
  readonly #watchers = new FeedStreams<Watcher>({
    maxPerCaller: MAX_STREAMS_PER_CALLER,
    onEmpty: () => this.#stop(),
  });
  readonly #keepaliveSeconds: number;
  readonly #nodes: InventoryNodes;
  #rolesTimer: NodeJS.Timeout | undefined;
  #unsubscribe: (() => void) | undefined;
  #closed = false;

  constructor(o: InventoryFeedOptions) {
    this.#o = o;
    this.#keepaliveSeconds = Math.max(1, Math.round(o.keepaliveSeconds ?? INVENTORY_KEEPALIVE_SECONDS));
    this.#nodes = new InventoryNodes({
      nodes: o.nodes,
      ...(o.changes ? { changes: o.changes } : {}),
      clock: o.clock,
      logger: o.logger,
      ...(o.scanMs !== undefined ? { scanMs: o.scanMs } : {}),
      ...(o.resyncMs !== undefined ? { resyncMs: o.resyncMs } : {}),
      ...(o.heartbeatRefreshMs !== undefined ? { heartbeatRefreshMs: o.heartbeatRefreshMs } : {}),
      broadcast: (event) => this.#broadcast(event),
    });
  }

  /** Streams open now (diagnostics, tests). */
  get watchers(): number {
    return this.#watchers.size;
  }

  /** Full node scans completed while proxies listened (diagnostics, tests). */
  get scans(): number {
    return this.#nodes.scans;
  }

  /** Single node records read for announced changes and due status changes (diagnostics, tests). */
  get reads(): number {
    return this.#nodes.reads;
  }

  /** Node changes are taken from notifications now, not from once-a-second scans (diagnostics, tests). */
  get notified(): boolean {
    return this.#nodes.notified;
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
    void this.#nodes.ready().then(
      () => {
        if (!this.#watchers.has(w)) return;
        this.#write(w, {
          kind: "snapshot",
          ...this.#rolesAndUsers(),
          nodes: this.#nodes.snapshot(),
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

  /**
   * A full node scan now instead of at the next tick. Resolves once what it found is sent; at
   * once when no proxy listens. Never rejects: a failed scan is logged, and the next tick tries again.
   */
  refresh(): Promise<void> {
    return this.#nodes.refresh();
  }

  /**
   * Node changes this auth just wrote (RegisterAgent, DeleteNode): their records are read now, so
   * its own proxies list them at once (a `svcctl nodes rm` followed by `svc ls` must not show the
   * node). Resolves once the changes are sent (also everything announced before this call); at
   * once when no proxy listens. Never rejects, as refresh().
   */
  refreshNodes(ids: readonly string[]): Promise<void> {
    return this.#nodes.refreshNodes(ids);
  }

  /**
   * A heartbeat this auth just stored: when it is a node the streams do not have, or it changes
   * what they show, its record is read now (a joining node is listed at once). Costs one lookup
   * otherwise.
   */
  noteHeartbeat(agentId: string, h: HeartbeatInput): void {
    this.#nodes.noteHeartbeat(agentId, h);
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
    this.#nodes.start();
  }

  #stop(): void {
    this.#unsubscribe?.();
    this.#unsubscribe = undefined;
    clearTimeout(this.#rolesTimer);
    this.#rolesTimer = undefined;
    this.#nodes.stop();
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

  #keepalive(w: Watcher): void {
    if (w.blocked) {
      // A proxy that cannot keep up would fall ever further behind: it reconnects and resyncs.
      this.#watchers.fail(w, new LimitExceededError("inventory stream fell behind"));
      return;
    }
    // Keepalives vouch for the nodes: none once the last good pass is older than two of the
    // longest pauses, so the proxy's bound on staleness (docs/proxy-cache.md) holds and it asks
    // auth instead while the backend reads fail.
    if (!this.#nodes.fresh(2 * MAX_SCAN_MS)) return;
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
