// Node heartbeats: the last report of each agent, kept in the state backend so every auth replica
// lists the same nodes. A node is "online" while its last heartbeat is younger than three
// intervals; older ones stay listed as "offline" until the node record expires (7 days).
import type { Backend } from "../../core/backend/backend.ts";
import type { Clock } from "../../core/clock.ts";
import { BadParameterError, isNotFound } from "../../core/errors.ts";
import type { JsonObject } from "../../core/json.ts";

const NODE_PREFIX = "nodes/";
export const HEARTBEAT_INTERVAL_SECONDS = 30;
const NODE_RECORD_TTL_MS = 7 * 24 * 3600 * 1000;
const MAX_LABELS = 64;

export interface NodeRecord {
  id: string;
  hostname: string;
  addresses: string[];
  labels: Record<string, string>;
  version: string;
  lastHeartbeat: Date;
  online: boolean;
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

export class NodeStore {
  readonly #backend: Backend;
  readonly #clock: Clock;
  readonly #intervalSeconds: number;

  constructor(deps: { backend: Backend; clock: Clock; intervalSeconds?: number }) {
    this.#backend = deps.backend;
    this.#clock = deps.clock;
    this.#intervalSeconds = deps.intervalSeconds ?? HEARTBEAT_INTERVAL_SECONDS;
  }

  get intervalSeconds(): number {
    return this.#intervalSeconds;
  }

  async heartbeat(agentId: string, h: HeartbeatInput): Promise<void> {
    checkHeartbeat(h);
    const value: JsonObject = {
      id: agentId,
      hostname: h.hostname,
      addresses: h.addresses,
      labels: h.labels,
      version: h.version,
      last: this.#clock.now().toISOString(),
      ...(h.tunnel ? { tunnel: { proxy_id: h.tunnel.proxyId, peer_addr: h.tunnel.peerAddr } } : {}),
    };
    await this.#backend.put(NODE_PREFIX + encodeURIComponent(agentId), value, { ttlMs: NODE_RECORD_TTL_MS });
  }

  /** Forgets a node's record (DeleteNode); absent is fine. */
  async remove(agentId: string): Promise<void> {
    await this.#backend.delete(NODE_PREFIX + encodeURIComponent(agentId)).catch((err: unknown) => {
      if (!isNotFound(err)) throw err;
    });
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
    const tunnel = v["tunnel"] as { proxy_id?: string; peer_addr?: string } | undefined;
    return {
      id: String(v["id"]),
      hostname: String(v["hostname"]),
      addresses: (v["addresses"] as string[]) ?? [],
      labels: (v["labels"] as Record<string, string>) ?? {},
      version: String(v["version"] ?? ""),
      lastHeartbeat: last,
      online: now - last.getTime() < 3 * this.#intervalSeconds * 1000,
      ...(tunnel?.proxy_id && tunnel.peer_addr
        ? { tunnel: { proxyId: tunnel.proxy_id, peerAddr: tunnel.peer_addr } }
        : {}),
    };
  }
}
