// The agent's live identity: what is on disk (identity.ts) plus the gRPC client built from it.
// A renewal (RenewNodeCredentials) makes fresh keys, has auth certify them, writes the new identity
// atomically and only then swaps it in: later calls, tunnels and SSH connections use the new
// certificates, calls and sessions already open keep theirs. Every failure before the swap leaves
// the old identity in force (in memory and on disk) until it expires.

import { X509Certificate } from "node:crypto";
import { EventEmitter } from "node:events";
import type { Metadata } from "@grpc/grpc-js";
import type { Logger } from "pino";
import { parseSshCertificate } from "../../core/certs/ssh-cert.ts";
import { generateSshKeyPair } from "../../core/certs/ssh-keys.ts";
import { generateEcdsaP256, privateKeyToPem } from "../../core/certs/x509.ts";
import { type Clock, systemClock } from "../../core/clock.ts";
import { BadParameterError } from "../../core/errors.ts";
import { type AuthServiceClient, agentMetadata, callUnary, createAuthClient } from "../auth/client.ts";
import { type AgentIdentity, IDENTITY_FILE, saveIdentity } from "./identity.ts";

/** How the agent reaches auth (auth-target.ts decides it at start). */
export interface CredentialsRoute {
  address: string;
  serverName?: string;
}

export interface AgentCredentialsOptions {
  identity: AgentIdentity;
  route: CredentialsRoute;
  dataDir: string;
  logger: Logger;
  clock?: Clock;
  /** writes the identity (default identity.ts saveIdentity: temp file + rename); tests inject failures */
  save?: (dataDir: string, id: AgentIdentity) => Promise<void>;
  /** a retired client is closed this long after a renewal (calls in flight on it finish); default 60 s */
  retireAfterMs?: number;
}

/** When the identity's certificates are valid: the later start and the earlier end of the two. */
export function identityValidity(id: Pick<AgentIdentity, "hostCertificate" | "tlsCertificatePem">): {
  validAfter: Date;
  validBefore: Date;
} {
  const ssh = parseSshCertificate(id.hostCertificate);
  const tls = new X509Certificate(id.tlsCertificatePem);
  return {
    validAfter: new Date(Math.max(ssh.validAfter.getTime(), tls.validFromDate.getTime())),
    validBefore: new Date(Math.min(ssh.validBefore.getTime(), tls.validToDate.getTime())),
  };
}

/** The message for an agent whose certificates have expired: only a new join brings it back. */
export function expiredIdentityMessage(dataDir: string, expired: Date): string {
  return `this node's certificates expired at ${expired.toISOString()}: it was offline too long to renew them; join again with a new token (svcd agent --token ...), which replaces ${IDENTITY_FILE} in ${dataDir}`;
}

export class AgentCredentials extends EventEmitter<{ renewed: [AgentIdentity] }> {
  readonly #o: AgentCredentialsOptions;
  readonly #clock: Clock;
  #identity: AgentIdentity;
  #client: AuthServiceClient;
  #renewing: Promise<AgentIdentity> | undefined;
  readonly #retired = new Map<AuthServiceClient, NodeJS.Timeout>();
  #closed = false;

  constructor(o: AgentCredentialsOptions) {
    super();
    this.#o = o;
    this.#clock = o.clock ?? systemClock;
    this.#identity = o.identity;
    this.#client = this.#build(o.identity);
  }

  identity(): AgentIdentity {
    return this.#identity;
  }

  /** The client for new calls; rebuilt after each renewal (hold the getter, not the client). */
  client(): AuthServiceClient {
    return this.#client;
  }

  metadata(): Metadata {
    return agentMetadata(this.#identity.agentId);
  }

  /** When the identity in force stops being valid. */
  expires(): Date {
    return identityValidity(this.#identity).validBefore;
  }

  /**
   * Renews now: new host and TLS keys, RenewNodeCredentials with the current certificate, the
   * answer saved atomically, then swapped in ("renewed" is emitted). Concurrent calls share one
   * renewal. Throws (and changes nothing) when any step fails.
   */
  renew(): Promise<AgentIdentity> {
    this.#renewing ??= this.#renew().finally(() => {
      this.#renewing = undefined;
    });
    return this.#renewing;
  }

  async #renew(): Promise<AgentIdentity> {
    const old = this.#identity;
    const expires = this.expires();
    if (expires.getTime() <= this.#clock.now().getTime())
      throw new BadParameterError(expiredIdentityMessage(this.#o.dataDir, expires));
    const host = generateSshKeyPair("ed25519", { comment: old.hostname });
    const tls = generateEcdsaP256();
    const res = await callUnary(
      this.#client,
      "RenewNodeCredentials",
      {
        ssh_public_key: host.publicLine,
        tls_public_key_pem: String(tls.publicKey.export({ type: "spki", format: "pem" })),
      },
      this.metadata(),
      { deadline: Date.now() + 30_000 },
    );
    if (!res.host_certificate || !res.tls_certificate_pem)
      throw new BadParameterError("auth's renewal answer is incomplete");
    const next: AgentIdentity = {
      ...old,
      hostKeyOpenSsh: host.privateOpenSsh,
      hostCertificate: res.host_certificate,
      tlsKeyPem: privateKeyToPem(tls.privateKey),
      tlsCertificatePem: res.tls_certificate_pem,
      // Auth answers every host CA it trusts now (a rotation adds one before it signs with it).
      ...(res.host_ca_pems.length > 0 ? { hostCaPems: res.host_ca_pems } : {}),
      ...(res.user_ca_ssh_public_keys.length > 0 ? { userCaSshPublicKeys: res.user_ca_ssh_public_keys } : {}),
    };
    // The answer must certify the keys just made (and parse) before it replaces anything: a
    // mismatched host certificate would fail every new SSH handshake.
    const cert = parseSshCertificate(next.hostCertificate);
    const tlsCert = new X509Certificate(next.tlsCertificatePem);
    if (
      !cert.publicKey.equals(host.publicKey) ||
      !tlsCert.publicKey.equals(tls.publicKey) ||
      cert.type !== "host" ||
      !cert.principals.includes(old.agentId)
    )
      throw new BadParameterError("auth's renewal answer does not certify this node's new keys");
    identityValidity(next);
    // On disk first: a crash after this line restarts with the new identity, before it with the
    // old one (still valid: a renewal revokes nothing).
    await (this.#o.save ?? saveIdentity)(this.#o.dataDir, next);
    if (this.#closed) return next;
    this.#swap(next);
    return next;
  }

  /**
   * Trusts the host CA certificates auth publishes now (the trust snapshot, received over TLS
   * checked with the current ones): a host X.509 rotation adds the new CA here before auth's own
   * certificate is issued by it, and drops the old one when the rotation ends. Saved, then swapped
   * in for new calls like a renewal. False when nothing changed or the list is unusable (kept).
   */
  async adoptHostCas(pems: readonly string[]): Promise<boolean> {
    const current = this.#identity.hostCaPems;
    const wanted = [...new Set(pems.map((p) => p.trim()))].filter((p) => p !== "");
    if (wanted.length === 0) return false;
    const same = new Set(current.map((p) => p.trim()));
    if (wanted.length === same.size && wanted.every((p) => same.has(p))) return false;
    try {
      for (const p of wanted) new X509Certificate(p);
    } catch {
      this.#o.logger.warn("ignored a host CA list that does not parse");
      return false;
    }
    // A renewal in flight saves its own answer (which carries the same list): let it finish first.
    await this.#renewing?.catch(() => undefined);
    const next: AgentIdentity = { ...this.#identity, hostCaPems: wanted };
    await (this.#o.save ?? saveIdentity)(this.#o.dataDir, next);
    if (this.#closed) return true;
    this.#swap(next);
    this.#o.logger.info({ hostCas: wanted.length }, "host CA certificates updated from auth");
    return true;
  }

  #swap(next: AgentIdentity): void {
    const previous = this.#client;
    this.#identity = next;
    this.#client = this.#build(next);
    // Calls in flight on the old client (an upload, a stream) may finish; then it is closed.
    const t = setTimeout(() => {
      this.#retired.delete(previous);
      previous.close();
    }, this.#o.retireAfterMs ?? 60_000);
    t.unref();
    this.#retired.set(previous, t);
    this.emit("renewed", next);
  }

  #build(id: AgentIdentity): AuthServiceClient {
    const r = this.#o.route;
    return createAuthClient({
      address: r.address,
      caPems: id.hostCaPems,
      certPem: id.tlsCertificatePem,
      keyPem: id.tlsKeyPem,
      ...(r.serverName ? { serverName: r.serverName } : {}),
    });
  }

  /** Closes the current client and every retired one. */
  close(): void {
    this.#closed = true;
    for (const [c, t] of this.#retired) {
      clearTimeout(t);
      c.close();
    }
    this.#retired.clear();
    this.#client.close();
  }
}
