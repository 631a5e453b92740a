// Node heartbeats: the last report of each agent, kept in the state backend so every auth replica
// lists the same nodes. A node is "online" while its last heartbeat is younger than three
// intervals; older ones stay listed as "offline" until the node record expires (7 days).
// An agent's Heartbeat (beat()) that changes nothing but the time is not written while this
// store's last write of it is younger than WRITE_SKIP_INTERVALS intervals (the record write was
// the largest part of a heartbeat's cost): a node beating every interval is written every other
// beat. Its stored time then lags the last heartbeat by less than that window, which the record
// carries (skip_ms) and its status allows for: such a node goes offline between 3 and 4.5
// intervals after its last heartbeat (docs/agent.md). Joins and the agentless probe always write.
import type { Backend } from "../../core/backend/backend.ts";
import type { Clock } from "../../core/clock.ts";
import { BadParameterError, isNotFound } from "../../core/errors.ts";
import type { JsonObject } from "../../core/json.ts";
import { announceNodeChange } from "./node-changes.ts";

const NODE_PREFIX = "nodes/";
export const HEARTBEAT_INTERVAL_SECONDS = 30;
const NODE_RECORD_TTL_MS = 7 * 24 * 3600 * 1000;
const MAX_LABELS = 64;
/** How long (in intervals) a stored heartbeat may stand for later ones that changed nothing else. */
export const WRITE_SKIP_INTERVALS = 1.5;

export interface NodeRecord {
  id: string;
  hostname: string;
  addresses: string[];
  labels: Record<string, string>;
  version: string;
  lastHeartbeat: Date;
  online: boolean;
  /** When the record's status turns offline without a newer write (the inventory feed's timer). */
  offlineAt?: Date;
  /** the proxy holding the node's reverse tunnel, as the agent last reported it */
  tunnel?: TunnelLocation;
}

/** Where a node's reverse tunnel ends (the agent's claim; see docs/tunnels.md). */
export interface TunnelLocation {
  proxyId: string;
  /** host:port other proxy replicas dial to relay into that tunnel */
  peerAddr: string;
}

export interface HeartbeatInput {
  hostname: string;
  addresses: string[];
  labels: Record<string, string>;
  version: string;
  tunnel?: TunnelLocation;
}

export function checkHeartbeat(h: HeartbeatInput): void {
  if (!/^[A-Za-z0-9]([A-Za-z0-9.-]{0,252})$/.test(h.hostname))
    throw new BadParameterError("hostname is invalid");
  if (h.addresses.length > 16 || h.addresses.some((a) => a.length > 300 || !/^[^\s/]+:\d{1,5}$/.test(a))) {
    throw new BadParameterError("addresses must be host:port entries (at most 16)");
  }
  const entries = Object.entries(h.labels);
  if (entries.length > MAX_LABELS) throw new BadParameterError(`at most ${MAX_LABELS} labels`);
  for (const [k, v] of entries) {
    if (!/^[A-Za-z0-9._/-]{1,253}$/.test(k) || v.length > 1024)
      throw new BadParameterError(`label ${JSON.stringify(k.slice(0, 64))} is invalid`);
  }
  if (h.version.length > 64) throw new BadParameterError("version is too long");
  if (h.tunnel) {
    if (!/^[A-Za-z0-9._-]{1,253}$/.test(h.tunnel.proxyId))
      throw new BadParameterError("tunnel proxy id is invalid");
    if (h.tunnel.peerAddr.length > 300 || !/^[^\s/]+:\d{1,5}$/.test(h.tunnel.peerAddr))
      throw new BadParameterError("tunnel peer address must be host:port");
  }
}

function nodeContent(agentId: string, h: HeartbeatInput): JsonObject {
  return {
    id: agentId,
    hostname: h.hostname,
    addresses: h.addresses,
    labels: h.labels,
    version: h.version,
    ...(h.tunnel ? { tunnel: { proxy_id: h.tunnel.proxyId, peer_addr: h.tunnel.peerAddr } } : {}),
  };
}

export class NodeStore {
  readonly #backend: Backend;
  readonly #clock: Clock;
  readonly #intervalSeconds: number;
  /** What beat() last wrote per node (content, time): the skip decision's memory. */
  readonly #written = new Map<string, { key: string; atMs: number }>();
  #prunedAtMs = 0;

  constructor(deps: { backend: Backend; clock: Clock; intervalSeconds?: number }) {
    this.#backend = deps.backend;
    this.#clock = deps.clock;
    this.#intervalSeconds = deps.intervalSeconds ?? HEARTBEAT_INTERVAL_SECONDS;
  }

  /** The window in which an unchanged heartbeat is not written again. */
  get skipWindowMs(): number {
    return WRITE_SKIP_INTERVALS * this.#intervalSeconds * 1000;
  }

  get intervalSeconds(): number {
    return this.#intervalSeconds;
  }

  /**
   * Records a heartbeat. False when nothing was written: the same content was written by this
   * process less than the skip window ago (the stored time stands for this beat).
   */
  /** Writes a node's record now (a join, the agentless probe): no skip, exact status rule. */
  async heartbeat(agentId: string, h: HeartbeatInput): Promise<void> {
    checkHeartbeat(h);
    this.#written.delete(agentId);
    await this.#put(agentId, nodeContent(agentId, h), this.#clock.now().getTime());
  }

  /**
   * An agent's Heartbeat. False when nothing was written: this store wrote the same content less
   * than the skip window ago, and that stored time stands for this beat. The record says so
   * (skip_ms), so its status allows for the lag.
   */
  async beat(agentId: string, h: HeartbeatInput, connection = ""): Promise<boolean> {
    checkHeartbeat(h);
    const nowMs = this.#clock.now().getTime();
    const content = nodeContent(agentId, h);
    // A beat over another connection (the agent restarted or reconnected) is always written.
    const key = `${connection}\n${JSON.stringify(content)}`;
    const window = this.skipWindowMs;
    const prev = this.#written.get(agentId);
    if (prev && prev.key === key && nowMs - prev.atMs >= 0 && nowMs - prev.atMs < window) return false;
    this.#prune(nowMs, window);
    // Forgotten before the write: a failed or concurrent write is never taken for a stored one.
    this.#written.delete(agentId);
    await this.#put(agentId, { ...content, skip_ms: window }, nowMs);
    this.#written.set(agentId, { key, atMs: nowMs });
    return true;
  }

  async #put(agentId: string, content: JsonObject, atMs: number): Promise<void> {
    const value: JsonObject = { ...content, last: new Date(atMs).toISOString() };
    // Batched: the heartbeats of one event-loop turn share a commit (the write was most of a
    // heartbeat's cost); each caller still settles only after the commit holding its record.
    await this.#backend.put(NODE_PREFIX + encodeURIComponent(agentId), value, {
      ttlMs: NODE_RECORD_TTL_MS,
      batch: true,
    });
    // Every replica's inventory feed reads this record now instead of at its next scan.
    await announceNodeChange(this.#backend, agentId);
  }

  /** Drops what is past the window (nodes that stopped or went to another replica), once per window. */
  #prune(nowMs: number, window: number): void {
    if (nowMs - this.#prunedAtMs < window) return;
    this.#prunedAtMs = nowMs;
    for (const [id, w] of this.#written) if (nowMs - w.atMs >= window) this.#written.delete(id);
  }

  /** Forgets a node's record (DeleteNode); absent is fine. */
  async remove(agentId: string): Promise<void> {
    this.#written.delete(agentId);
    await this.#backend.delete(NODE_PREFIX + encodeURIComponent(agentId)).then(
      () => announceNodeChange(this.#backend, agentId),
      (err: unknown) => {
        if (!isNotFound(err)) throw err;
      },
    );
  }

  async list(): Promise<NodeRecord[]> {
    const now = this.#clock.now().getTime();
    const items = await this.#backend.range(NODE_PREFIX);
    return items.map((item) => this.#record(item.value as JsonObject, now));
  }

  /** One node's record by ID (one backend read; the node-side login decision uses it). */
  async get(agentId: string): Promise<NodeRecord | undefined> {
    try {
      const item = await this.#backend.get(NODE_PREFIX + encodeURIComponent(agentId));
      return this.#record(item.value as JsonObject, this.#clock.now().getTime());
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  #record(v: JsonObject, now: number): NodeRecord {
    const last = new Date(String(v["last"]));
    // A record written by beat() may lag the last heartbeat by up to its skip window.
    const offlineAt = last.getTime() + 3 * this.#intervalSeconds * 1000 + (Number(v["skip_ms"]) || 0);
    const tunnel = v["tunnel"] as { proxy_id?: string; peer_addr?: string } | undefined;
    return {
      id: String(v["id"]),
      hostname: String(v["hostname"]),
      addresses: (v["addresses"] as string[]) ?? [],
      labels: (v["labels"] as Record<string, string>) ?? {},
      version: String(v["version"] ?? ""),
      lastHeartbeat: last,
      online: now < offlineAt,
      offlineAt: new Date(offlineAt),
      ...(tunnel?.proxy_id && tunnel.peer_addr
        ? { tunnel: { proxyId: tunnel.proxy_id, peerAddr: tunnel.peer_addr } }
        : {}),
    };
  }
}
