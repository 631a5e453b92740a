// Which nodes hold a live reverse tunnel to this proxy: node id -> its h2 session (the proxy is the
// h2 client). The newest tunnel of a node wins: an agent that reconnects before the proxy noticed
// the old connection die must not be shadowed by it.
import type { ClientHttp2Session } from "node:http2";
import type { Duplex } from "node:stream";
import { UnavailableError } from "../../../core/errors.ts";
import { TUNNEL_AUTHORITY } from "../../tunnel/protocol.ts";

export interface TunnelEntry {
  nodeId: string;
  session: ClientHttp2Session;
  /** the agent's address as this proxy sees it */
  remoteAddress: string;
  since: Date;
}

export class TunnelRegistry {
  readonly #byNode = new Map<string, TunnelEntry>();
  readonly #listeners = new Set<(nodeId: string, up: boolean) => void>();

  /** Adds a tunnel; an older one of the same node is closed. Removed again when it closes. */
  add(entry: TunnelEntry): void {
    const old = this.#byNode.get(entry.nodeId);
    this.#byNode.set(entry.nodeId, entry);
    entry.session.once("close", () => {
      if (this.#byNode.get(entry.nodeId) !== entry) return;
      this.#byNode.delete(entry.nodeId);
      for (const l of this.#listeners) l(entry.nodeId, false);
    });
    if (old && old.session !== entry.session) old.session.destroy();
    for (const l of this.#listeners) l(entry.nodeId, true);
  }

  get(nodeId: string): TunnelEntry | undefined {
    const e = this.#byNode.get(nodeId);
    return e && !e.session.closed && !e.session.destroyed ? e : undefined;
  }

  has(nodeId: string): boolean {
    return this.get(nodeId) !== undefined;
  }

  get size(): number {
    return this.#byNode.size;
  }

  nodeIds(): string[] {
    return [...this.#byNode.keys()];
  }

  /** Told when a node's tunnel comes up (true) or goes away (false). */
  onChange(listener: (nodeId: string, up: boolean) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Closes every tunnel (proxy shutdown). */
  closeAll(): void {
    for (const e of this.#byNode.values()) e.session.destroy();
    this.#byNode.clear();
  }

  /**
   * Opens a byte stream to the node's SSH server through its tunnel. Rejects (unavailable) when
   * the node has no tunnel here, the agent refuses, or no answer comes within `timeoutMs`.
   */
  async open(nodeId: string, timeoutMs = 10_000): Promise<Duplex> {
    const e = this.get(nodeId);
    if (!e) throw new UnavailableError("the node has no tunnel to this proxy");
    const stream = e.session.request({ ":method": "CONNECT", ":authority": TUNNEL_AUTHORITY });
    return new Promise<Duplex>((resolve, reject) => {
      const timer = setTimeout(() => {
        stream.destroy();
        reject(new UnavailableError("the node did not answer through its tunnel"));
      }, timeoutMs);
      stream.once("response", (headers) => {
        clearTimeout(timer);
        if (headers[":status"] === 200) resolve(stream);
        else {
          stream.destroy();
          reject(new UnavailableError(`the node refused the tunnel stream (${String(headers[":status"])})`));
        }
      });
      stream.on("error", (err) => {
        clearTimeout(timer);
        reject(new UnavailableError(`tunnel stream failed: ${err.message}`));
      });
      stream.once("close", () => {
        clearTimeout(timer);
        reject(new UnavailableError("the tunnel closed before the node answered"));
      });
    });
  }
}
