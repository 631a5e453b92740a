// NodeDialer: the one way the proxy reaches a node's SSH port, as a byte stream. A node with a
// tunnel to this proxy is reached through it; then a peer proxy holding its tunnel (hook); then the
// addresses the node advertises, over TCP. Whoever answers, SSH runs end to end over the stream and
// the node's host certificate is checked by the caller as before.
import { connect } from "node:net";
import type { Duplex } from "node:stream";
import { UnavailableError } from "../../../core/errors.ts";
import type { NodeInfo } from "../auth-client.ts";
import type { TunnelRegistry } from "./registry.ts";

/** Reaches a node through another proxy replica; undefined when no peer holds its tunnel. */
export type PeerDial = (node: NodeInfo) => Promise<Duplex | undefined>;

export interface NodeDialerOptions {
  registry?: TunnelRegistry;
  peer?: PeerDial;
  /** TCP connect / tunnel answer budget per attempt; default 10 s */
  timeoutMs?: number;
}

/** "host:port" or "[v6]:port" -> parts; undefined when it is neither. */
function hostPort(address: string): { host: string; port: number } | undefined {
  const m = /^\[([^\]]+)\]:(\d{1,5})$/.exec(address) ?? /^([^:]+):(\d{1,5})$/.exec(address);
  const port = Number(m?.[2]);
  return m?.[1] && port >= 1 && port <= 65535 ? { host: m[1], port } : undefined;
}

async function dialTcp(host: string, port: number, timeoutMs: number): Promise<Duplex> {
  return new Promise<Duplex>((resolve, reject) => {
    const socket = connect({ host, port });
    const timer = setTimeout(() => socket.destroy(new Error("connect timed out")), timeoutMs);
    socket.once("connect", () => {
      clearTimeout(timer);
      socket.removeAllListeners("error");
      // Keystrokes are tiny writes: without TCP_NODELAY, Nagle holds one back until the previous
      // one is acknowledged (OpenSSH's client sets it for interactive sessions too).
      socket.setNoDelay(true);
      resolve(socket);
    });
    socket.once("error", (err) => {
      clearTimeout(timer);
      reject(err);
    });
  });
}

export class NodeDialer {
  readonly #o: NodeDialerOptions;

  constructor(o: NodeDialerOptions = {}) {
    this.#o = o;
  }

  get registry(): TunnelRegistry | undefined {
    return this.#o.registry;
  }

  async dial(node: NodeInfo): Promise<Duplex> {
    const timeoutMs = this.#o.timeoutMs ?? 10_000;
    const why: string[] = [];
    if (this.#o.registry?.has(node.id)) {
      try {
        return await this.#o.registry.open(node.id, timeoutMs);
      } catch (err) {
        why.push(err instanceof Error ? err.message : String(err));
      }
    }
    if (this.#o.peer) {
      try {
        const s = await this.#o.peer(node);
        if (s) return s;
      } catch (err) {
        why.push(`through a peer proxy: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    for (const address of node.addresses) {
      const hp = hostPort(address);
      if (!hp) {
        why.push(`${address}: not host:port`);
        continue;
      }
      try {
        return await dialTcp(hp.host, hp.port, timeoutMs);
      } catch (err) {
        why.push(`${address}: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    if (why.length === 0) why.push("it has no tunnel and advertises no address");
    throw new UnavailableError(`node ${JSON.stringify(node.hostname)} is unreachable: ${why.join("; ")}`);
  }
}
