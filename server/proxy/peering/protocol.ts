// The proxy-to-proxy relay protocol (docs/tunnels.md, "Several proxies"): a replica that does not
// hold a node's reverse tunnel opens TLS to the holder's peer address with ALPN `svc-peer`
// (mutual TLS, both sides proxy identities from the host CA), speaks HTTP/2 over it, and asks for
// one CONNECT stream per node dial; the holder relays the stream into its local tunnel.
import type { Duplex } from "node:stream";
import { BadParameterError } from "../../../core/errors.ts";

export const PEER_ALPN = "svc-peer";

/** Header on a refused CONNECT saying why (no secrets: "no-tunnel", "bad-request"). */
export const PEER_REASON_HEADER = "svc-peer-reason";

/**
 * CONNECT's :authority names the node. nghttp2 insists on authority characters, so the id is
 * percent-encoded; the port is meaningless here (0: "the node's SSH server").
 */
export function peerAuthority(nodeId: string): string {
  return `${encodeURIComponent(nodeId)}:0`;
}

export function nodeIdOfAuthority(authority: string | undefined): string | undefined {
  if (!authority?.endsWith(":0")) return undefined;
  try {
    const id = decodeURIComponent(authority.slice(0, -2));
    return id.length > 0 && id.length <= 253 ? id : undefined;
  } catch {
    return undefined;
  }
}

/** Pipes two duplexes into each other; either side ending or failing ends both. */
export function splice(a: Duplex, b: Duplex): void {
  let done = false;
  const finish = (): void => {
    if (done) return;
    done = true;
    a.destroy();
    b.destroy();
  };
  for (const s of [a, b]) {
    s.once("close", finish);
    s.once("error", finish);
  }
  a.pipe(b);
  b.pipe(a);
}

/** host:port (also [v6]:port) split; throws on anything else. */
export function splitPeerAddr(addr: string): { host: string; port: number } {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^\s:/[\]]+)):(\d{1,5})$/.exec(addr);
  const port = m ? Number(m[3]) : 0;
  if (!m || port < 1 || port > 65535)
    throw new BadParameterError(`peer address ${JSON.stringify(addr)} is not host:port`);
  return { host: m[1] ?? m[2] ?? "", port };
}
