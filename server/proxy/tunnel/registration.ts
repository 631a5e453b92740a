// The proxy asks auth whether a node is still registered before it admits the node's reverse
// tunnel (CheckNodeRegistered). The proxy calls as the service it is: x-agent-id "proxy:<name>",
// the name its client certificate carries (svc://proxy/<name>).
import { X509Certificate } from "node:crypto";
import { BadParameterError } from "../../../core/errors.ts";
import { type AuthServiceClient, agentMetadata, callUnary, createAuthClient } from "../../auth/client.ts";

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

export class GrpcNodeRegistrations {
  readonly #client: AuthServiceClient;
  readonly #callerId: string | Error;
  readonly #timeoutMs: number;

  constructor(o: NodeRegistrationsOptions) {
    // A certificate without the name fails each check (tunnels refused), not the proxy's start.
    try {
      this.#callerId = proxyCallerId(o.certPem);
    } catch (err) {
      this.#callerId = err instanceof Error ? err : new Error(String(err));
    }
    this.#client = createAuthClient({
      address: o.address,
      caPems: [...o.caPems],
      certPem: o.certPem,
      keyPem: o.keyPem,
      ...(o.serverName ? { serverName: o.serverName } : {}),
    });
    this.#timeoutMs = o.timeoutMs ?? 10_000;
  }

  /** Auth's answer; throws (typed) when auth cannot be asked, so the caller refuses. */
  async isRegistered(agentId: string): Promise<boolean> {
    if (this.#callerId instanceof Error) throw this.#callerId;
    const res = await callUnary(
      this.#client,
      "CheckNodeRegistered",
      { agent_id: agentId },
      agentMetadata(this.#callerId),
      { deadline: Date.now() + this.#timeoutMs },
    );
    return res.registered === true;
  }

  close(): void {
    this.#client.close();
  }
}
