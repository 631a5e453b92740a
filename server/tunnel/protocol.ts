// The reverse-tunnel wire protocol (docs/tunnels.md), shared by the agent and the proxy. An agent
// dials the proxy's public port with TLS 1.3 offering ALPN `svc-tunnel` and its X.509 client
// certificate; inside that TLS connection runs HTTP/2 with the roles reversed: the proxy is the
// h2 client and opens one CONNECT stream per dial, the agent is the h2 server and hands each stream
// to its SSH server. node:http2 does the multiplexing and flow control; only the liveness rule
// (PINGs, misses) and the reconnect backoff are ours.
import type { Http2Session } from "node:http2";

export const TUNNEL_ALPN = "svc-tunnel";
/** :authority of every CONNECT stream (h2 requires one; the node is the whole peer). */
export const TUNNEL_AUTHORITY = "ssh.svc-tunnel";

export interface HeartbeatOptions {
  /** how often each side sends an h2 PING */
  intervalMs: number;
  /** a peer whose PINGs go unanswered this many intervals in a row is closed */
  maxMissed: number;
}

export const DEFAULT_HEARTBEAT: HeartbeatOptions = { intervalMs: 10_000, maxMissed: 3 };

export interface BackoffOptions {
  minMs: number;
  maxMs: number;
}

export const DEFAULT_BACKOFF: BackoffOptions = { minMs: 1_000, maxMs: 30_000 };

/**
 * Delay before reconnect attempt `attempt` (0 = first): exponential from minMs, capped at maxMs,
 * with "equal jitter" (half fixed, half random) so a proxy restart does not get every agent back
 * in the same instant, while no agent waits less than half its step.
 */
export function backoffDelay(attempt: number, o: BackoffOptions, random: () => number = Math.random): number {
  const step = Math.min(o.maxMs, o.minMs * 2 ** Math.min(attempt, 30));
  return Math.round(step / 2 + (step / 2) * random());
}

/**
 * Sends an h2 PING every interval; after `maxMissed` PINGs in a row without an answer the session
 * is destroyed (`onDead` is told first). Stops by itself when the session closes; the returned
 * function stops it early.
 */
export function keepAlive(session: Http2Session, o: HeartbeatOptions, onDead: () => void): () => void {
  let unanswered = 0;
  const timer = setInterval(() => {
    if (session.closed || session.destroyed) return;
    if (unanswered >= o.maxMissed) {
      clearInterval(timer);
      onDead();
      session.destroy(new Error(`tunnel peer missed ${unanswered} heartbeats`));
      return;
    }
    unanswered++;
    try {
      session.ping((err) => {
        if (!err) unanswered = 0;
      });
    } catch {
      // Too many PINGs outstanding: counted as missed like any other.
    }
  }, o.intervalMs);
  timer.unref();
  const stop = (): void => clearInterval(timer);
  session.once("close", stop);
  return stop;
}
