// RenewNodeCredentials (docs/agent.md "Renewal"): a joined agent, authenticated by its current
// TLS client certificate (an expired one already fails the handshake; the interceptor refuses a
// removed node, and a locked one, docs/locks.md), trades two fresh public keys for a host SSH certificate and a TLS client
// certificate with the same names as at join, both valid for auth.node_cert_ttl and signed by the
// CAs' current signing keys. An agent offline past expiry cannot get here: it joins again.
import type { Logger } from "pino";
import type { Backend } from "../../core/backend/backend.ts";
import { hostKeyId } from "../../core/certs/key-ids.ts";
import type { SshCertificate, SshCertificateRequest } from "../../core/certs/ssh-cert.ts";
import { parseSshPublicKey, type SshKeyType, sshFingerprint } from "../../core/certs/ssh-keys.ts";
import {
  agentIdentityUri,
  issueTlsClientCert,
  publicKeyFromPem,
  type X509Issuer,
} from "../../core/certs/x509.ts";
import type { Clock } from "../../core/clock.ts";
import {
  AccessDeniedError,
  BadParameterError,
  isCompareFailed,
  isNotFound,
  LimitExceededError,
  NotAuthenticatedError,
  UnavailableError,
} from "../../core/errors.ts";
import type { JsonObject } from "../../core/json.ts";
import type { PublicKeys } from "../../proto/generated/svc/v1/PublicKeys.ts";
import type { RenewNodeCredentialsRequest__Output } from "../../proto/generated/svc/v1/RenewNodeCredentialsRequest.ts";
import type { RenewNodeCredentialsResponse } from "../../proto/generated/svc/v1/RenewNodeCredentialsResponse.ts";
import type { Caller } from "./caller.ts";
import { AGENT_PREFIX, type AgentRegistration, NODE_CERT_TTL_SECONDS } from "./join-agent.ts";

/** Host keys a node may present: what the agent makes (ed25519) and the other modern kinds. */
const SSH_KEY_TYPES: ReadonlySet<SshKeyType> = new Set([
  "ssh-ed25519",
  "ecdsa-sha2-nistp256",
  "ecdsa-sha2-nistp384",
]);
/** TLS client keys: EC P-256/P-384 and Ed25519 (what TLS 1.3 client auth accepts from us). */
const TLS_CURVES = new Set(["prime256v1", "secp384r1"]);
/** A node may renew at most once per this share of the lifetime (per auth process). */
const MIN_INTERVAL_SHARE = 10;

export interface NodeRenewalDeps {
  backend: Backend;
  clock: Clock;
  logger: Logger;
  hostSshSigner: { sign(req: SshCertificateRequest): SshCertificate };
  hostCa: X509Issuer;
  publicKeys(): PublicKeys | Promise<PublicKeys>;
  /** auth.node_cert_ttl in seconds; default NODE_CERT_TTL_SECONDS */
  ttlSeconds?: number;
  /**
   * Names the keys the CAs sign with now. The minimum interval does not hold across a change, so
   * a node follows a host CA rotation at once (rotation-follow.ts). Default: the X.509 CA's PEM.
   */
  signingKeys?: () => string;
}

export interface NodeRenewalHandler {
  renew(req: RenewNodeCredentialsRequest__Output, caller: Caller): Promise<RenewNodeCredentialsResponse>;
}

function checkSshKey(line: string): ReturnType<typeof parseSshPublicKey> {
  let key: ReturnType<typeof parseSshPublicKey>;
  try {
    key = parseSshPublicKey(line);
  } catch (err) {
    throw err instanceof BadParameterError ? err : new BadParameterError("ssh_public_key is malformed");
  }
  if (!SSH_KEY_TYPES.has(key.type))
    throw new BadParameterError(
      `ssh_public_key: ${key.type} is not allowed (use ${[...SSH_KEY_TYPES].join(", ")})`,
    );
  return key;
}

function checkTlsKey(pem: string): ReturnType<typeof publicKeyFromPem> {
  if (typeof pem !== "string" || pem === "" || pem.length > 8192)
    throw new BadParameterError("tls_public_key_pem is required");
  const key = publicKeyFromPem(pem);
  const curve = key.asymmetricKeyDetails?.namedCurve;
  const ok =
    key.asymmetricKeyType === "ed25519" || (key.asymmetricKeyType === "ec" && curve && TLS_CURVES.has(curve));
  if (!ok)
    throw new BadParameterError("tls_public_key_pem: only EC P-256, P-384 or Ed25519 keys are allowed");
  return key;
}

export class NodeRenewal implements NodeRenewalHandler {
  readonly #d: NodeRenewalDeps;
  readonly #ttl: number;
  /** agent ID -> when it last renewed and with which signing keys */
  readonly #last = new Map<string, { at: number; keys: string }>();
  /**
   * Nodes with a renewal under way. Without it every request of a concurrent burst passed the
   * interval check (set only once one finished) and signed both certificates before losing the
   * compare-and-swap: one node could make auth sign as often as it sent at once.
   */
  readonly #inFlight = new Set<string>();

  constructor(deps: NodeRenewalDeps) {
    this.#d = deps;
    this.#ttl = deps.ttlSeconds ?? NODE_CERT_TTL_SECONDS;
  }

  async renew(
    req: RenewNodeCredentialsRequest__Output,
    caller: Caller,
  ): Promise<RenewNodeCredentialsResponse> {
    if (caller.kind !== "agent") throw new NotAuthenticatedError("only a node renews its credentials");
    const agentId = caller.agentId;
    try {
      const res = await this.#renew(req, agentId);
      await this.#audit(true, agentId, { expires: res.expires ?? "" }).catch((err: unknown) =>
        this.#d.logger.error({ err }, "node.renewed audit failed"),
      );
      return res;
    } catch (err) {
      // A renewal refused for coming too soon is not audited: a node could otherwise write audit
      // events as fast as it calls (the refusal itself is what bounds it).
      if (err instanceof LimitExceededError) throw err;
      const reason = err instanceof Error ? err.message : "renewal failed";
      await this.#audit(false, agentId, { reason }).catch((auditErr: unknown) =>
        this.#d.logger.error({ err: auditErr }, "node.renewed audit failed"),
      );
      throw err;
    }
  }

  async #renew(
    req: RenewNodeCredentialsRequest__Output,
    agentId: string,
  ): Promise<RenewNodeCredentialsResponse> {
    if (this.#inFlight.has(agentId))
      throw new LimitExceededError("a renewal of this node is already under way", { retryAfterSeconds: 1 });
    this.#inFlight.add(agentId);
    try {
      return await this.#renewOnce(req, agentId);
    } finally {
      this.#inFlight.delete(agentId);
    }
  }

  async #renewOnce(
    req: RenewNodeCredentialsRequest__Output,
    agentId: string,
  ): Promise<RenewNodeCredentialsResponse> {
    const d = this.#d;
    // Services acting as agents ("proxy:<name>") renew through their own role's path.
    if (agentId.includes(":")) throw new AccessDeniedError("only a joined node renews its credentials here");
    const item = await d.backend.get(AGENT_PREFIX + encodeURIComponent(agentId)).catch((err: unknown) => {
      if (isNotFound(err)) throw new NotAuthenticatedError("this node has been removed");
      throw err;
    });
    const reg = item.value as unknown as AgentRegistration;
    if (reg.agentless)
      throw new AccessDeniedError("an agentless node renews by joining again with a new token");
    const hostKey = checkSshKey(req.ssh_public_key);
    const tlsKey = checkTlsKey(req.tls_public_key_pem);

    const now = d.clock.now();
    const keys = (d.signingKeys ?? (() => d.hostCa.certPem))();
    const last = this.#last.get(agentId);
    const minIntervalMs = (this.#ttl * 1000) / MIN_INTERVAL_SHARE;
    if (last && last.keys === keys && now.getTime() - last.at < minIntervalMs) {
      const wait = Math.ceil((last.at + minIntervalMs - now.getTime()) / 1000);
      throw new LimitExceededError(
        `this node renewed ${Math.round((now.getTime() - last.at) / 1000)} s ago: at most one renewal per ${Math.round(minIntervalMs / 1000)} s`,
        { retryAfterSeconds: wait },
      );
    }

    const validBefore = new Date(now.getTime() + this.#ttl * 1000);
    // Same names as at join (join-agent.ts #issue): the node ID and its registered hostname.
    const cert = d.hostSshSigner.sign({
      type: "host",
      publicKey: hostKey,
      keyId: hostKeyId(agentId),
      principals: [agentId, reg.hostname],
      validAfter: new Date(now.getTime() - 60_000),
      validBefore,
    });
    const tlsPem = await issueTlsClientCert(d.hostCa, {
      publicKey: tlsKey,
      commonName: agentId,
      uri: agentIdentityUri(agentId),
      clock: d.clock,
      ttlSeconds: this.#ttl,
    });
    // The registration names the certified host key (tools and the reachability probe read it).
    // Compare-and-swap: a DeleteNode meanwhile wins, and the certificates are not handed out.
    const next = {
      ...reg,
      host_public_key: `${hostKey.type} ${hostKey.blob.toString("base64")}`,
      host_key_fingerprint: sshFingerprint(hostKey.blob),
      certs_expire: validBefore.toISOString(),
    };
    await d.backend
      .compareAndSwap(item.key, item.revision, next as unknown as JsonObject)
      .catch((err: unknown) => {
        if (isNotFound(err)) throw new NotAuthenticatedError("this node has been removed");
        if (isCompareFailed(err))
          throw new UnavailableError("the node's registration changed meanwhile: try again");
        throw err;
      });
    this.#last.set(agentId, { at: now.getTime(), keys });
    // Only entries inside the interval matter: the map holds about one interval's renewals.
    if (this.#last.size > 1000)
      for (const [id, v] of this.#last) if (now.getTime() - v.at >= minIntervalMs) this.#last.delete(id);
    const pub = await d.publicKeys();
    d.logger.info({ agentId, hostname: reg.hostname, expires: validBefore.toISOString() }, "node renewed");
    return {
      host_certificate: cert.line,
      tls_certificate_pem: tlsPem,
      host_ca_pems: pub.host_ca_pems ?? [],
      user_ca_ssh_public_keys: pub.user_ca_ssh_public_keys ?? [],
      expires: validBefore.toISOString(),
    };
  }

  async #audit(success: boolean, agentId: string, fields: JsonObject): Promise<void> {
    await this.#d.backend.appendAudit({
      event_type: "node.renewed",
      user_name: "",
      success,
      fields: { emitted_by: "auth", agent_id: agentId, ...fields },
    });
  }
}
