// RegisterAgent, the auth side of a node join (docs/agent.md): a one-time JoinToken
// ("<name>.<secret>", the resource keeps sha256(secret) hex) is exchanged for an SSH host
// certificate and, for an agent, an X.509 client certificate naming it (svc://agent/<id>).
// Exactly one caller wins a token: the redemption is a create-if-absent in the state backend.
// A holder of the right secret learns why a token is refused (expired, used, wrong role); anyone
// else only learns that the token is not valid (no oracle for token names).
import { createHash, randomUUID, timingSafeEqual } from "node:crypto";
import { isIP } from "node:net";
import type { Logger } from "pino";
import type { Backend } from "../../core/backend/backend.ts";
import { hostKeyId, SSH_HOST_CERT_TTL_SECONDS } from "../../core/certs/key-ids.ts";
import type { SshCertificate, SshCertificateRequest } from "../../core/certs/ssh-cert.ts";
import { parseSshPublicKey, type SshPublicKey, sshFingerprint } from "../../core/certs/ssh-keys.ts";
import {
  agentIdentityUri,
  issueTlsClientCert,
  publicKeyFromPem,
  type X509Issuer,
} from "../../core/certs/x509.ts";
import type { Clock } from "../../core/clock.ts";
import {
  AccessDeniedError,
  AlreadyExistsError,
  BadParameterError,
  isAlreadyExists,
  isCompareFailed,
  isNotFound,
  NotAuthenticatedError,
  NotFoundError,
} from "../../core/errors.ts";
import type { JsonObject } from "../../core/json.ts";
import type { JoinToken } from "../../core/resources/index.ts";
import type { ResourceSource } from "../../core/sources/source.ts";
import type { PublicKeys } from "../../proto/generated/svc/v1/PublicKeys.ts";
import type { RegisterAgentRequest__Output } from "../../proto/generated/svc/v1/RegisterAgentRequest.ts";
import type { RegisterAgentResponse } from "../../proto/generated/svc/v1/RegisterAgentResponse.ts";
import { indexAgentless, unindexAgentless } from "./agentless-index.ts";
import { checkHeartbeat, NodeStore } from "./nodes.ts";

/** What AuthService needs from the join (server/auth/service.ts calls these two). */
export interface AgentJoinHandler {
  register(req: RegisterAgentRequest__Output, ctx: { peer: string }): Promise<RegisterAgentResponse>;
  /**
   * Guards a heartbeat of a registered agent: the hostname must stay the registered one, and the
   * labels the join token pinned win over what the agent reports. Returns the labels to store.
   * Agents that did not join through RegisterAgent (services) pass through unchanged.
   */
  checkHeartbeat(
    agentId: string,
    hostname: string,
    labels: Record<string, string>,
    known?: { registration: AgentRegistration | undefined },
  ): Promise<Record<string, string>>;
  /** The registration of a joined node, or undefined (never joined, or removed). */
  registration(agentId: string): Promise<AgentRegistration | undefined>;
  /** Removes a node by ID or hostname (DeleteNode); NotFoundError when there is none. */
  remove(node: string): Promise<AgentRegistration>;
  /**
   * Called after a node record was written for `agentId` (a heartbeat): when DeleteNode removed
   * the node meanwhile, takes the record back out and returns true.
   */
  forgetIfRemoved(agentId: string): Promise<boolean>;
}

export interface AgentJoinDeps {
  backend: Backend;
  /** JoinToken resources are read from here. */
  source: ResourceSource;
  clock: Clock;
  logger: Logger;
  /** The SSH host CA. */
  hostSshSigner: { sign(req: SshCertificateRequest): SshCertificate };
  /** The X.509 host CA (client certificates for the agents' gRPC calls). */
  hostCa: X509Issuer;
  /** User CA keys and host CA PEMs handed to the node. */
  publicKeys(): PublicKeys | Promise<PublicKeys>;
  /** Host certificate lifetime of agentless nodes (they cannot renew); default 365 days. */
  hostCertTtlSeconds?: number;
  /**
   * Lifetime of an agent's host and client certificates (auth.node_cert_ttl); agents renew them
   * (node-renewal.ts). Default NODE_CERT_TTL_SECONDS (24 h).
   */
  agentCertTtlSeconds?: number;
  /** Agent client certificate lifetime; default the host certificate's. */
  clientCertTtlSeconds?: number;
}

/** What auth keeps about a joined node (key `agents/<id>`); never a secret. */
export interface AgentRegistration {
  id: string;
  hostname: string;
  addresses: string[];
  /** Labels the node asked for, merged under the token's node_labels. */
  labels: Record<string, string>;
  /** The token's node_labels: a heartbeat cannot change these. */
  pinned_labels: Record<string, string>;
  agentless: boolean;
  /** OpenSSH public key line of the certified host key (the agentless probe checks it). */
  host_public_key: string;
  host_key_fingerprint: string;
  token: string;
  joined_at: string;
  /**
   * RFC 3339: when the agent's certificates expire (set at join and at each renewal). Past it the
   * node can only join again, so a new join may take over its hostname.
   */
  certs_expire?: string;
}

export const AGENT_PREFIX = "agents/";
/** Default lifetime of an agent's certificates (auth.node_cert_ttl): renewed at about 2/3 of it. */
export const NODE_CERT_TTL_SECONDS = 24 * 3600;
const REDEMPTION_PREFIX = "join-token-redemptions/";
/** One key per registered hostname (lower case): the create-if-absent that makes names unique. */
const HOSTNAME_PREFIX = "node-hostnames/";
const hostnameKey = (hostname: string): string =>
  HOSTNAME_PREFIX + encodeURIComponent(hostname.toLowerCase());
/** A reservation whose node never registered (a join that died half-way) is taken over after this. */
const STALE_RESERVATION_MS = 5 * 60_000;
const INVALID_TOKEN = "join token is not valid";
const TOKEN_NAME = /^[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?$/;
const MAX_TOKEN_LENGTH = 1024;

/**
 * Backend key of a token's redemption record: one per token name and secret (a re-created token
 * with a new secret is fresh). Value: { agent_id, hostname, at } (RFC 3339).
 */
export function joinTokenRedemptionKey(token: JoinToken): string {
  return `${REDEMPTION_PREFIX}${token.metadata.name}/${(token.spec.secret_hash ?? "").slice(0, 16)}`;
}

/** sha256(secret) as hex, the form JoinToken.spec.secret_hash stores. */
export function joinSecretHash(secret: string): string {
  return createHash("sha256").update(secret, "utf8").digest("hex");
}

/** Splits "<name>.<secret>" at the LAST dot (names may contain dots, secrets never do). */
export function parseJoinToken(token: string): { name: string; secret: string } {
  if (typeof token !== "string" || token.length === 0)
    throw new BadParameterError("a join token is required");
  if (token.length > MAX_TOKEN_LENGTH) throw new BadParameterError("join token is too long");
  const dot = token.lastIndexOf(".");
  const name = token.slice(0, dot);
  const secret = token.slice(dot + 1);
  if (dot <= 0 || secret.length === 0 || !TOKEN_NAME.test(name) || !/^[A-Za-z0-9_-]+$/.test(secret)) {
    throw new BadParameterError("join token must look like <name>.<secret>");
  }
  return { name, secret };
}

function hashesEqual(a: string, b: string): boolean {
  const x = Buffer.from(a, "utf8");
  const y = Buffer.from(b, "utf8");
  return x.length === y.length && timingSafeEqual(x, y);
}

/** The host of "host:port" (IPv6 in brackets), without brackets. */
export function hostOfAddress(address: string): string {
  const m = /^\[([^\]]+)\]:\d+$/.exec(address) ?? /^([^:]+):\d+$/.exec(address);
  if (!m?.[1])
    throw new BadParameterError(`address ${JSON.stringify(address.slice(0, 64))} is not host:port`);
  return m[1];
}

/** The IP a gRPC peer string names ("ipv4:1.2.3.4:5", "[::1]:5", "1.2.3.4:5"). */
export function peerIp(peer: string): string | undefined {
  const p = peer.replace(/^ipv[46]:/, "");
  const m = /^\[([^\]]+)\]:\d+$/.exec(p) ?? /^([^:]+):\d+$/.exec(p);
  const ip = m?.[1]?.replace(/^::ffff:/, "");
  return ip && isIP(ip) ? ip : undefined;
}

const UNSPECIFIED = new Set(["0.0.0.0", "::", ""]);

/**
 * The addresses the proxy will dial: what the node advertised, with an unspecified host
 * (0.0.0.0, ::) replaced by the address auth saw the node call from.
 */
export function resolveAddresses(addresses: readonly string[], peer: string): string[] {
  if (addresses.length === 0) throw new BadParameterError("at least one address (host:port) is required");
  const ip = peerIp(peer);
  const out: string[] = [];
  for (const a of addresses) {
    const host = hostOfAddress(a);
    const port = a.slice(a.lastIndexOf(":") + 1);
    if (!/^\d{1,5}$/.test(port) || Number(port) < 1 || Number(port) > 65535)
      throw new BadParameterError(`address ${JSON.stringify(a.slice(0, 64))} has an invalid port`);
    if (!UNSPECIFIED.has(host)) {
      out.push(a);
      continue;
    }
    if (!ip) throw new BadParameterError("an unspecified address needs a peer address auth can see");
    out.push(ip.includes(":") ? `[${ip}]:${port}` : `${ip}:${port}`);
  }
  return [...new Set(out)];
}

type JoinInput = {
  hostname: string;
  addresses: string[];
  labels: Record<string, string>;
  hostKey: SshPublicKey;
} & ({ agentless: true } | { agentless: false; tlsKey: ReturnType<typeof publicKeyFromPem> });

/** A join request checked by AgentJoin.checkAdmittedRequest (opaque to callers). */
export interface AdmittedJoinRequest {
  readonly input: JoinInput;
}

function tokenRoleProblem(token: JoinToken): string | undefined {
  if (!token.spec.roles.includes("node"))
    return `join token is not for nodes (roles: ${token.spec.roles.join(", ")})`;
  if (token.spec.join_method !== "token")
    return `join token uses the ${token.spec.join_method} join method, not a token secret`;
  return undefined;
}

export class AgentJoin implements AgentJoinHandler {
  readonly #d: AgentJoinDeps;
  readonly #nodes: NodeStore;

  constructor(deps: AgentJoinDeps) {
    this.#d = deps;
    this.#nodes = new NodeStore({ backend: deps.backend, clock: deps.clock });
  }

  async register(req: RegisterAgentRequest__Output, ctx: { peer: string }): Promise<RegisterAgentResponse> {
    let tokenName = "";
    try {
      const { name, secret } = parseJoinToken(req.token);
      tokenName = name;
      const input = this.#checkRequest(req, ctx.peer);
      const token = this.#verifyToken(name, secret);
      const res = await this.#join(token, input);
      // The token is spent: an audit hiccup must not lose the answer.
      await this.#audit(true, req.hostname, {
        token: name,
        agent_id: res.agent_id ?? "",
        agentless: req.agentless,
      }).catch((auditErr: unknown) => this.#d.logger.error({ err: auditErr }, "node.join audit failed"));
      return res;
    } catch (err) {
      const reason = err instanceof Error ? err.message : "join failed";
      await this.#audit(false, typeof req.hostname === "string" ? req.hostname.slice(0, 253) : "", {
        ...(tokenName ? { token: tokenName } : {}),
        agentless: req.agentless === true,
        reason,
      }).catch((auditErr: unknown) => this.#d.logger.error({ err: auditErr }, "node.join audit failed"));
      throw err;
    }
  }

  async checkHeartbeat(
    agentId: string,
    hostname: string,
    labels: Record<string, string>,
    /** the registration this same call already read (the interceptor's), to spare a second read */
    known?: { registration: AgentRegistration | undefined },
  ): Promise<Record<string, string>> {
    const reg = known ? known.registration : await this.registration(agentId);
    if (!reg) {
      // Services acting as agents ("proxy:<name>") never join; a node ID without a registration
      // was removed (the interceptor refuses it too; this closes the race with DeleteNode).
      if (agentId.includes(":")) return labels;
      throw new NotAuthenticatedError("this node has been removed");
    }
    if (reg.agentless) throw new AccessDeniedError("an agentless node does not heartbeat");
    if (hostname !== reg.hostname)
      throw new BadParameterError(
        `hostname must stay ${JSON.stringify(reg.hostname)} (the one it joined with)`,
      );
    return { ...labels, ...reg.pinned_labels };
  }

  /** The registration of a joined node, or undefined. */
  async registration(agentId: string): Promise<AgentRegistration | undefined> {
    try {
      const item = await this.#d.backend.get(AGENT_PREFIX + encodeURIComponent(agentId));
      return item.value as unknown as AgentRegistration;
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  async forgetIfRemoved(agentId: string): Promise<boolean> {
    // Services acting as agents ("proxy:<name>") never join and cannot be removed.
    if (agentId.includes(":")) return false;
    return forgetRemovedNode(this.#d.backend, this.#nodes, agentId);
  }

  #checkRequest(req: RegisterAgentRequest__Output, peer: string): JoinInput {
    const labels = req.labels ?? {};
    // An agent on a reverse tunnel (docs/tunnels.md) may advertise no address; an agentless sshd
    // is only ever dialed, so it needs one.
    const addresses =
      req.agentless || (req.addresses ?? []).length > 0 ? resolveAddresses(req.addresses ?? [], peer) : [];
    checkHeartbeat({ hostname: req.hostname, addresses, labels, version: "" });
    let hostKey: SshPublicKey;
    try {
      hostKey = parseSshPublicKey(req.host_ssh_public_key);
    } catch (err) {
      throw err instanceof BadParameterError
        ? err
        : new BadParameterError("host_ssh_public_key is malformed");
    }
    if (req.agentless) {
      if (req.tls_public_key_pem !== "")
        throw new BadParameterError(
          "an agentless node gets no client certificate: leave tls_public_key_pem empty",
        );
      return { hostname: req.hostname, addresses, labels, hostKey, agentless: true as const };
    }
    if (req.tls_public_key_pem === "") throw new BadParameterError("tls_public_key_pem is required");
    const tlsKey = publicKeyFromPem(req.tls_public_key_pem);
    return { hostname: req.hostname, addresses, labels, hostKey, agentless: false as const, tlsKey };
  }

  #verifyToken(name: string, secret: string): JoinToken {
    const token = this.#d.source.get("JoinToken", name);
    const presented = joinSecretHash(secret);
    // An unknown name costs the same comparison as a wrong secret.
    const stored = token?.spec.secret_hash ?? joinSecretHash(`unknown:${presented}`);
    if (!hashesEqual(presented, stored) || !token) throw new AccessDeniedError(INVALID_TOKEN);
    const problem = tokenRoleProblem(token);
    if (problem) throw new AccessDeniedError(problem);
    const expires = Date.parse(token.spec.expires);
    if (!(expires > this.#d.clock.now().getTime())) throw new AccessDeniedError("join token has expired");
    return token;
  }

  // --- IAM join (join-iam.ts): the STS proof admits the node, per challenge, so the token is not
  // redeemed and may admit many nodes. Same checks and credentials as a token join otherwise.

  /** Checks a join request before any proof is asked for; pass the result to issueAdmitted. */
  checkAdmittedRequest(req: RegisterAgentRequest__Output, ctx: { peer: string }): AdmittedJoinRequest {
    return { input: this.#checkRequest(req, ctx.peer) };
  }

  /** Node credentials for a request another proof (IAM) already admitted under `token`. */
  async issueAdmitted(token: JoinToken, req: AdmittedJoinRequest): Promise<RegisterAgentResponse> {
    return this.#join(token, req.input, { redeem: false });
  }

  async #join(
    token: JoinToken,
    input: JoinInput,
    opts: { redeem: boolean } = { redeem: true },
  ): Promise<RegisterAgentResponse> {
    const d = this.#d;
    const now = d.clock.now();
    // `svcd agentless` run again for the same sshd (same name, same host key) with a new token:
    // the node keeps its ID and gets a host certificate from today's signing key. This is how an
    // agentless node follows a host CA rotation (docs/ca-rotation.md); it cannot renew by itself.
    const again = input.agentless ? await this.#sameAgentlessNode(input) : undefined;
    if (again) return this.#reissueAgentless(token, input, again, now, opts.redeem);
    const id = randomUUID();
    // A hostname names one node: sessions for it must not land on another node that chose the
    // same name. Reserved before the token is spent, released if the join fails before the
    // registration is written (a used token, a signing or storage error).
    await this.#reserveHostname(input.hostname, id, now);
    try {
      return await this.#issue(token, input, id, now, opts.redeem);
    } catch (err) {
      if (!(await this.registration(id).catch(() => undefined)))
        await d.backend.delete(hostnameKey(input.hostname)).catch(() => undefined);
      throw err;
    }
  }

  async #issue(
    token: JoinToken,
    input: JoinInput,
    id: string,
    now: Date,
    redeem: boolean,
  ): Promise<RegisterAgentResponse> {
    const d = this.#d;
    // One redemption per token (and per secret: a re-created token with a new secret is fresh).
    const redemptionKey = joinTokenRedemptionKey(token);
    // Cheap refusal of a spent token before signing; the createAll below is what decides.
    if (redeem && (await d.backend.get(redemptionKey).catch(() => undefined)) !== undefined)
      throw new AccessDeniedError("join token has already been used");
    const hostTtl = input.agentless
      ? (d.hostCertTtlSeconds ?? SSH_HOST_CERT_TTL_SECONDS)
      : (d.agentCertTtlSeconds ?? d.hostCertTtlSeconds ?? NODE_CERT_TTL_SECONDS);
    // The node ID (what the proxy and svc ssh verify) and the hostname (unique, reserved above,
    // for plain OpenSSH's HostKeyAlias). Addresses are the node's own claim and can change with
    // every heartbeat, so they never name it in a certificate.
    const principals = [id, input.hostname];
    const cert = d.hostSshSigner.sign({
      type: "host",
      publicKey: input.hostKey,
      keyId: hostKeyId(id),
      principals,
      validAfter: new Date(now.getTime() - 60_000),
      validBefore: new Date(now.getTime() + hostTtl * 1000),
    });
    const tlsCertPem = input.agentless
      ? ""
      : await issueTlsClientCert(d.hostCa, {
          publicKey: input.tlsKey,
          commonName: id,
          uri: agentIdentityUri(id),
          clock: d.clock,
          ttlSeconds: d.clientCertTtlSeconds ?? hostTtl,
        });
    const pinned = { ...(token.spec.node_labels ?? {}) };
    const labels = { ...input.labels, ...pinned };
    const reg: AgentRegistration = {
      id,
      hostname: input.hostname,
      addresses: input.addresses,
      labels,
      pinned_labels: pinned,
      agentless: input.agentless,
      host_public_key: `${input.hostKey.type} ${input.hostKey.blob.toString("base64")}`,
      host_key_fingerprint: sshFingerprint(input.hostKey.blob),
      token: token.metadata.name,
      joined_at: now.toISOString(),
      ...(input.agentless ? {} : { certs_expire: new Date(now.getTime() + hostTtl * 1000).toISOString() }),
    };
    // The redemption and the registration in one transaction: a crash never leaves a spent token
    // without the node it admitted (the node would be unable to join again) or the reverse.
    const regEntry = { key: AGENT_PREFIX + encodeURIComponent(id), value: reg as unknown as JsonObject };
    try {
      await d.backend.createAll(
        redeem
          ? [
              {
                key: redemptionKey,
                value: { agent_id: id, hostname: input.hostname, at: now.toISOString() },
              },
              regEntry,
            ]
          : [regEntry],
      );
    } catch (err) {
      if (redeem && isAlreadyExists(err)) throw new AccessDeniedError("join token has already been used");
      throw err;
    }
    if (input.agentless) await indexAgentless(d.backend, id);
    // Listed at once; from now on heartbeats (agent) or the reachability probe (agentless) keep it.
    await this.#nodes.heartbeat(id, {
      hostname: input.hostname,
      addresses: input.addresses,
      labels,
      version: input.agentless ? "agentless" : "",
    });
    // Removed (by its ID) before it even got its answer: leave nothing listed.
    if (await forgetRemovedNode(d.backend, this.#nodes, id))
      throw new AccessDeniedError("the node was removed while it joined");
    const pub = await d.publicKeys();
    d.logger.info({ agentId: id, hostname: input.hostname, token: token.metadata.name }, "node joined");
    return {
      agent_id: id,
      host_ssh_certificate: cert.line,
      tls_certificate_pem: tlsCertPem,
      host_ca_pems: pub.host_ca_pems ?? [],
      user_ca_ssh_public_keys: pub.user_ca_ssh_public_keys ?? [],
    };
  }

  async #sameAgentlessNode(input: JoinInput): Promise<AgentRegistration | undefined> {
    const lower = input.hostname.toLowerCase();
    const fingerprint = sshFingerprint(input.hostKey.blob);
    return (await listAgentRegistrations(this.#d.backend)).find(
      (r) => r.agentless && r.hostname.toLowerCase() === lower && r.host_key_fingerprint === fingerprint,
    );
  }

  async #reissueAgentless(
    token: JoinToken,
    input: JoinInput,
    reg: AgentRegistration,
    now: Date,
    redeem: boolean,
  ): Promise<RegisterAgentResponse> {
    const d = this.#d;
    if (redeem) {
      try {
        await d.backend.create(joinTokenRedemptionKey(token), {
          agent_id: reg.id,
          hostname: reg.hostname,
          at: now.toISOString(),
        });
      } catch (err) {
        if (isAlreadyExists(err)) throw new AccessDeniedError("join token has already been used");
        throw err;
      }
    }
    const hostTtl = d.hostCertTtlSeconds ?? SSH_HOST_CERT_TTL_SECONDS;
    const cert = d.hostSshSigner.sign({
      type: "host",
      publicKey: input.hostKey,
      keyId: hostKeyId(reg.id),
      principals: [reg.id, reg.hostname],
      validAfter: new Date(now.getTime() - 60_000),
      validBefore: new Date(now.getTime() + hostTtl * 1000),
    });
    const pub = await d.publicKeys();
    d.logger.info(
      { agentId: reg.id, hostname: reg.hostname, token: token.metadata.name },
      "agentless node re-issued",
    );
    return {
      agent_id: reg.id,
      host_ssh_certificate: cert.line,
      tls_certificate_pem: "",
      host_ca_pems: pub.host_ca_pems ?? [],
      user_ca_ssh_public_keys: pub.user_ca_ssh_public_keys ?? [],
    };
  }

  async #reserveHostname(hostname: string, id: string, now: Date): Promise<void> {
    const taken = `hostname ${JSON.stringify(hostname)} is already registered to another node (svcctl nodes rm ${hostname} frees it)`;
    // Nodes that joined before names were reserved have a registration but no reservation.
    const lower = hostname.toLowerCase();
    for (const r of await listAgentRegistrations(this.#d.backend)) {
      if (r.hostname.toLowerCase() !== lower) continue;
      // An agent whose certificates expired can never call again: its name goes to the new join
      // (the agent re-joining after being offline too long, docs/agent.md "Renewal").
      const expires = r.certs_expire ? Date.parse(r.certs_expire) : Number.NaN;
      if (r.agentless || !(expires <= now.getTime())) throw new AlreadyExistsError(taken);
      this.#d.logger.info(
        { agentId: r.id, hostname: r.hostname },
        "replacing a node whose certificates expired",
      );
      await this.remove(r.id);
    }
    const key = hostnameKey(hostname);
    const value = { agent_id: id, at: now.toISOString() };
    try {
      await this.#d.backend.create(key, value);
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
      // Held by a join in progress, or left by one that died before registering its node: only
      // the latter, once old, is taken over (compare-and-swap: one winner).
      const held = await this.#d.backend.get(key).catch(() => undefined);
      const v = held?.value as { agent_id?: string; at?: string } | undefined;
      const stale =
        held !== undefined &&
        now.getTime() - Date.parse(v?.at ?? "") > STALE_RESERVATION_MS &&
        (await this.registration(String(v?.agent_id ?? ""))) === undefined;
      if (!stale) throw new AlreadyExistsError(taken);
      await this.#d.backend.compareAndSwap(key, held.revision, value).catch((casErr: unknown) => {
        throw isNotFound(casErr) || isCompareFailed(casErr) ? new AlreadyExistsError(taken) : casErr;
      });
    }
  }

  async remove(node: string): Promise<AgentRegistration> {
    if (!node || node.length > 253) throw new BadParameterError("node (an ID or hostname) is required");
    const lower = node.toLowerCase();
    const regs = await listAgentRegistrations(this.#d.backend);
    const named = regs.filter((r) => r.hostname.toLowerCase() === lower);
    // Nodes that joined before hostnames were unique may share one: then only the ID is clear.
    if (!regs.some((r) => r.id === node) && named.length > 1)
      throw new BadParameterError(
        `${named.length} nodes are named ${JSON.stringify(node)}: remove one by its node ID (${named.map((r) => r.id).join(", ")})`,
      );
    const reg = regs.find((r) => r.id === node) ?? named[0];
    if (!reg) throw new NotFoundError(`no node ${JSON.stringify(node)}`);
    // The registration first: from here on every call with this node's certificate is refused.
    await this.#d.backend.delete(AGENT_PREFIX + encodeURIComponent(reg.id));
    await unindexAgentless(this.#d.backend, reg.id);
    await this.#nodes.remove(reg.id);
    await this.#d.backend.delete(hostnameKey(reg.hostname)).catch((err: unknown) => {
      if (!isNotFound(err)) throw err;
    });
    this.#d.logger.info({ agentId: reg.id, hostname: reg.hostname }, "node removed");
    return reg;
  }

  async #audit(success: boolean, hostname: string, fields: JsonObject): Promise<void> {
    await this.#d.backend.appendAudit({
      event_type: "node.join",
      user_name: "",
      success,
      fields: { emitted_by: "auth", hostname, ...fields },
    });
  }
}

/**
 * For whoever just wrote a node's record (a heartbeat, the agentless probe, a join): when the
 * node has no registration any more, DeleteNode ran meanwhile, so the record (and the agentless
 * index entry) is taken back out. DeleteNode deletes the registration before the record, so a
 * write that lands after DeleteNode's own delete of the record is caught here. True when removed.
 */
export async function forgetRemovedNode(
  backend: Backend,
  nodes: NodeStore,
  agentId: string,
): Promise<boolean> {
  try {
    await backend.get(AGENT_PREFIX + encodeURIComponent(agentId));
    return false;
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
  await nodes.remove(agentId);
  await unindexAgentless(backend, agentId);
  return true;
}

/** Agent registrations (for the agentless probe and tools). */
export async function listAgentRegistrations(backend: Backend): Promise<AgentRegistration[]> {
  return (await backend.range(AGENT_PREFIX)).map((i) => i.value as unknown as AgentRegistration);
}
