// The proxy asks auth whether a node is still registered before it admits the node's reverse
// tunnel (CheckNodeRegistered). The proxy calls as the service it is: x-agent-id "proxy:<name>",
// the name its client certificate carries (svc://proxy/<name>).
import { X509Certificate } from "node:crypto";
import { BadParameterError } from "../../../core/errors.ts";
import {
  type AuthConnection,
  type AuthSource,
  callUnary,
  connectionOf,
  createAuthConnection,
  waitForReady,
} from "../../auth/client.ts";

export interface NodeRegistrationsOptions {
  address: string;
  caPems: readonly string[];
  certPem: string;
  keyPem: string;
  serverName?: string;
  timeoutMs?: number;
}

/** "proxy:<name>" from a proxy client certificate's URI SAN svc://proxy/<name>. */
export function proxyCallerId(certPem: string): string {
  const san = new X509Certificate(certPem).subjectAltName ?? "";
  const m = /(?:^|,\s*)URI:svc:\/\/proxy\/([^,\s]+)/.exec(san);
  if (!m?.[1]) throw new BadParameterError("the proxy's client certificate names no svc://proxy/<name>");
  return `proxy:${decodeURIComponent(m[1])}`;
}

/**
 * The proxy's one connection to auth for its identity: the channel every proxy-side wrapper and
 * stream shares, calling as "proxy:<name>" from the client certificate. A certificate without
 * that name still connects; only calls made as the proxy fail (tunnels refused), not the start.
 */
export function proxyAuthConnection(o: NodeRegistrationsOptions): AuthConnection {
  let callerId: string | Error;
  try {
    callerId = proxyCallerId(o.certPem);
  } catch (err) {
    callerId = err instanceof Error ? err : new Error(String(err));
  }
  return createAuthConnection({
    address: o.address,
    caPems: [...o.caPems],
    certPem: o.certPem,
    keyPem: o.keyPem,
    ...(o.serverName ? { serverName: o.serverName } : {}),
    callerId,
  });
}

export class GrpcNodeRegistrations {
  readonly #connection: AuthConnection;
  readonly #owned: boolean;
  readonly #timeoutMs: number;

  /** Takes the process's shared connection to auth (or options for a private one). */
  constructor(source: AuthSource | NodeRegistrationsOptions) {
    const c = connectionOf(source, () => {
      try {
        return proxyCallerId((source as NodeRegistrationsOptions).certPem);
      } catch (err) {
        return err instanceof Error ? err : new Error(String(err));
      }
    });
    this.#connection = c.connection;
    this.#owned = c.owned;
    this.#timeoutMs = c.timeoutMs;
  }

  /** Auth's answer; throws (typed) when auth cannot be asked, so the caller refuses. */
  async isRegistered(agentId: string): Promise<boolean> {
    const res = await callUnary(
      this.#connection.client,
      "CheckNodeRegistered",
      { agent_id: agentId },
      // Wait-for-ready and retried on UNAVAILABLE (a read): a tunnel opened while auth restarts
      // waits for it instead of being refused.
      waitForReady(this.#connection.metadata()),
      { deadline: Date.now() + this.#timeoutMs },
    );
    return res.registered === true;
  }

  close(): void {
    if (this.#owned) this.#connection.close();
  }
}
