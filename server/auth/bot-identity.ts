// Bots (agent identities), the auth side (docs/machine-identity.md):
// - CreateAgentIdentity / ListAgentIdentities / DeleteAgentIdentity for admins;
// - BootstrapAgentIdentity: a one-time bootstrap JoinToken (roles [bot]) -> the first SSH user
//   certificate (principals from the bot's roles via core/rbac), an X.509 client certificate
//   (svc://bot/<name>) and a renewal credential of generation 1; the token is redeemed exactly once;
// - RenewAgentIdentity: the bot's current client certificate AND its renewal credential. The
//   generation advances by compare-and-swap in the state backend (key bots/<name>), so of two
//   renewals with the same generation exactly one wins. A credential of an earlier generation
//   that auth did issue means a copy exists: the bot is locked (renewals and SVIDs refused) and
//   a bot.locked event is written. The exception: the renewal to the current generation asked
//   again, with its credential, certificate and the same new keys, gets that generation issued
//   again (its answer was lost in a crash; a copy cannot use certificates for keys it lacks).
import { createHash } from "node:crypto";
import type { PeerCertificate } from "node:tls";
import type { Logger } from "pino";
import type { Backend, Item } from "../../core/backend/backend.ts";
import { botKeyId, certValidity } from "../../core/certs/key-ids.ts";
import type { SshCertificate, SshCertificateRequest } from "../../core/certs/ssh-cert.ts";
import { parseSshPublicKey, type SshPublicKey, sshFingerprint } from "../../core/certs/ssh-keys.ts";
import {
  botIdentityUri,
  issueTlsClientCert,
  parseCertificatePem,
  publicKeyFromPem,
  type X509Issuer,
} from "../../core/certs/x509.ts";
import type { Clock } from "../../core/clock.ts";
import { parseDuration } from "../../core/duration.ts";
import {
  AccessDeniedError,
  BadParameterError,
  CompareFailedError,
  isAlreadyExists,
  isCompareFailed,
  isNotFound,
  NotAuthenticatedError,
  NotFoundError,
  NotImplementedError,
} from "../../core/errors.ts";
import { createAgentIdentity } from "../../core/identity/create.ts";
import {
  advanceGenerations,
  type GenerationRecord,
  judgeRenewal,
  type StoredGenerations,
} from "../../core/identity/generation.ts";
import {
  newRenewalCredential,
  parseRenewalCredential,
  renewalSecretHash,
  sameHash,
} from "../../core/identity/renewal-credential.ts";
import type { JsonObject } from "../../core/json.ts";
import { lockRefusal } from "../../core/locks/lock.ts";
import { type AccessChecker, newAccessChecker } from "../../core/rbac/index.ts";
import {
  type AgentIdentity,
  DEFAULT_CERT_TTL,
  DEFAULT_RENEWAL_FRACTION,
  DNS_SUBDOMAIN_PATTERN,
  type JoinToken,
  type Role,
} from "../../core/resources/index.ts";
import type { ResourceSource, ResourceWriter } from "../../core/sources/source.ts";
import type { AgentIdentityCredentials } from "../../proto/generated/svc/v1/AgentIdentityCredentials.ts";
import type { AgentIdentityInfo } from "../../proto/generated/svc/v1/AgentIdentityInfo.ts";
import type { BootstrapAgentIdentityRequest__Output } from "../../proto/generated/svc/v1/BootstrapAgentIdentityRequest.ts";
import type { CreateAgentIdentityRequest__Output } from "../../proto/generated/svc/v1/CreateAgentIdentityRequest.ts";
import type { CreateAgentIdentityResponse } from "../../proto/generated/svc/v1/CreateAgentIdentityResponse.ts";
import type { DeleteAgentIdentityRequest__Output } from "../../proto/generated/svc/v1/DeleteAgentIdentityRequest.ts";
import type { ListAgentIdentitiesResponse } from "../../proto/generated/svc/v1/ListAgentIdentitiesResponse.ts";
import type { PublicKeys } from "../../proto/generated/svc/v1/PublicKeys.ts";
import type { RenewAgentIdentityRequest__Output } from "../../proto/generated/svc/v1/RenewAgentIdentityRequest.ts";
import { type Caller, callerLabel } from "./caller.ts";
import { CertJournal } from "./cert-journal.ts";
import { joinSecretHash, parseJoinToken } from "./join-agent.ts";
import type { AgentIdentityHandler, BotLocks } from "./machine-identity.ts";
import { certPrincipals, identityExtension, principalNodes, sshExtensionsOf } from "./user-cert-content.ts";

export interface AgentIdentityServiceDeps {
  backend: Backend;
  source: ResourceSource;
  /** Where CreateAgentIdentity / DeleteAgentIdentity write; without it they answer UNIMPLEMENTED. */
  writer?: ResourceWriter;
  clock: Clock;
  logger: Logger;
  /** The SSH user CA. */
  userCertSigner: { sign(req: SshCertificateRequest): SshCertificate };
  /** The X.509 host CA (bot client certificates). */
  hostCa: X509Issuer;
  publicKeys(): PublicKeys | Promise<PublicKeys>;
}

/** What auth keeps about a bot (key bots/<name>); hashes and serials only, never a secret. */
export interface BotState extends StoredGenerations {
  name: string;
  /** serial (lower-case hex, no leading zeros) of the current X.509 client certificate */
  tls_serial: string;
  /** serial of the client certificate the renewal to the current generation came with */
  renewed_with_tls_serial?: string;
  /** serial of the current SSH certificate ("" when none) */
  ssh_serial: string;
  ssh_key_fingerprint: string;
  bootstrap_token: string;
  bootstrapped_at: string;
  last_renewed_at: string;
  cert_expires_at: string;
  locked: boolean;
  locked_reason?: string;
  locked_at?: string;
}

export const BOT_STATE_PREFIX = "bots/";
const REDEMPTION_PREFIX = "join-token-redemptions/";
const INVALID_TOKEN = "bootstrap token is not valid";
const NAME = new RegExp(DNS_SUBDOMAIN_PATTERN);
const MAX_RENEW_ATTEMPTS = 3;

const stateKey = (name: string): string => BOT_STATE_PREFIX + encodeURIComponent(name);
const botUser = (name: string): string => `bot:${name}`;

/** Serial numbers compare as lower-case hex without leading zeros (Node and x509 print them differently). */
export function normalizeSerial(serial: string): string {
  return serial
    .toLowerCase()
    .replace(/[^0-9a-f]/g, "")
    .replace(/^0+/, "");
}

function checkName(name: unknown): string {
  if (typeof name !== "string" || name.length === 0 || name.length > 253 || !NAME.test(name))
    throw new BadParameterError("name must name an agent identity");
  return name;
}

function parseKeys(req: { ssh_public_key: string; tls_public_key_pem: string }): {
  ssh: SshPublicKey;
  tls: ReturnType<typeof publicKeyFromPem>;
} {
  let ssh: SshPublicKey;
  try {
    ssh = parseSshPublicKey(req.ssh_public_key);
  } catch (err) {
    throw err instanceof BadParameterError ? err : new BadParameterError("ssh_public_key is malformed");
  }
  if (req.tls_public_key_pem === "") throw new BadParameterError("tls_public_key_pem is required");
  return { ssh, tls: publicKeyFromPem(req.tls_public_key_pem) };
}

/** What a renewal asks to have certified: both public keys, in one hash. */
function keysFingerprint(keys: ReturnType<typeof parseKeys>): string {
  const h = createHash("sha256");
  for (const part of [keys.ssh.blob, keys.tls.export({ type: "spki", format: "der" })]) {
    h.update(String(part.length)).update(":").update(part);
  }
  return h.digest("hex");
}

interface Issued {
  credentials: AgentIdentityCredentials;
  record: GenerationRecord;
  tlsSerial: string;
  sshSerial: string;
  sshFingerprint: string;
  expires: Date;
}

export class AgentIdentityService implements AgentIdentityHandler {
  readonly #d: AgentIdentityServiceDeps;
  #locks: BotLocks | undefined;

  constructor(deps: AgentIdentityServiceDeps) {
    this.#d = deps;
  }

  useLocks(locks: BotLocks): void {
    this.#locks = locks;
  }

  // ---- admin ----------------------------------------------------------------------------------

  async create(
    req: CreateAgentIdentityRequest__Output,
    caller: Caller,
  ): Promise<CreateAgentIdentityResponse> {
    const writer = this.#writer();
    if (!Number.isInteger(req.token_ttl_seconds) || req.token_ttl_seconds < 0)
      throw new BadParameterError("token_ttl_seconds must be >= 0");
    const created = await createAgentIdentity(
      { writer, source: this.#d.source, clock: this.#d.clock },
      {
        name: req.name,
        roles: req.roles ?? [],
        ttl: req.cert_ttl,
        allowWorkloadSvids: req.allow_workload_svids,
        ...(req.token_ttl_seconds > 0 ? { tokenTtlMs: req.token_ttl_seconds * 1000 } : {}),
      },
    );
    await this.#audit("bot.create", req.name, true, {
      emitted_by: callerLabel(caller),
      roles: [...created.identity.spec.roles],
      cert_ttl: created.identity.spec.cert_ttl ?? DEFAULT_CERT_TTL,
      token: created.tokenResource.metadata.name,
      token_expires: created.tokenExpires.toISOString(),
    });
    return {
      identity: this.#info(created.identity, undefined),
      token: created.token,
      token_expires_unix_ms: created.tokenExpires.getTime(),
    };
  }

  async list(): Promise<ListAgentIdentitiesResponse> {
    const out: AgentIdentityInfo[] = [];
    const bots = this.#d.source
      .list("AgentIdentity")
      .sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : 1));
    for (const bot of bots) out.push(this.#info(bot, (await this.#state(bot.metadata.name))?.state));
    return { identities: out };
  }

  async remove(req: DeleteAgentIdentityRequest__Output, caller: Caller): Promise<Record<string, never>> {
    const name = checkName(req.name);
    const writer = this.#writer();
    if (!this.#d.source.get("AgentIdentity", name))
      throw new NotFoundError(`agent identity ${name} not found`);
    // Its state first: from here on nothing it holds renews, whatever happens next.
    try {
      await this.#d.backend.delete(stateKey(name));
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    for (const t of this.#d.source.list("JoinToken")) {
      if (t.spec.bot_name !== name) continue;
      await writer.remove("JoinToken", t.metadata.name).catch((err: unknown) => {
        if (!isNotFound(err)) throw err;
      });
    }
    await writer.remove("AgentIdentity", name);
    await this.#audit("bot.delete", name, true, { emitted_by: callerLabel(caller) });
    return {};
  }

  // ---- the bot --------------------------------------------------------------------------------

  async bootstrap(
    req: BootstrapAgentIdentityRequest__Output,
    ctx: { peer: string },
  ): Promise<AgentIdentityCredentials> {
    let botName = "";
    try {
      const { name: tokenName, secret } = parseJoinToken(req.token);
      const keys = parseKeys(req);
      const token = this.#verifyToken(tokenName, secret);
      botName = token.spec.bot_name ?? "";
      const { identity, checker } = this.#identity(botName);
      // Exactly one redemption per token (and per secret).
      const redemption = {
        key: `${REDEMPTION_PREFIX}${tokenName}/${(token.spec.secret_hash ?? "").slice(0, 16)}`,
        value: { bot: botName, at: this.#d.clock.now().toISOString() },
      };
      const spent = new AccessDeniedError("bootstrap token has already been used");
      if ((await this.#d.backend.get(redemption.key).catch(() => undefined)) !== undefined) throw spent;
      const existing = await this.#state(botName);
      if (existing) {
        // A re-bootstrap: the redemption decides; a crash before the swap below leaves the old
        // (locked) state, which a fresh token fixes again.
        try {
          await this.#d.backend.create(redemption.key, redemption.value);
        } catch (err) {
          if (isAlreadyExists(err)) throw spent;
          throw err;
        }
      }
      // A fresh token from an admin re-bootstraps a bot (e.g. after a lock): a new generation.
      const generation = (existing?.state.current.generation ?? 0) + 1;
      const issued = await this.#issue(identity, checker, generation, keys);
      const now = this.#d.clock.now().toISOString();
      const state: BotState = {
        name: botName,
        current: issued.record,
        history: existing ? advanceGenerations(existing.state, issued.record).history : [],
        tls_serial: issued.tlsSerial,
        ssh_serial: issued.sshSerial,
        ssh_key_fingerprint: issued.sshFingerprint,
        bootstrap_token: tokenName,
        bootstrapped_at: now,
        last_renewed_at: now,
        cert_expires_at: issued.expires.toISOString(),
        locked: false,
      };
      if (existing) await this.#d.backend.compareAndSwap(stateKey(botName), existing.revision, toJson(state));
      else {
        // A first bootstrap writes the redemption and the bot's state together: a crash never
        // leaves a spent token with no bot behind it.
        try {
          await this.#d.backend.createAll([redemption, { key: stateKey(botName), value: toJson(state) }]);
        } catch (err) {
          if (!isAlreadyExists(err)) throw err;
          if ((await this.#d.backend.get(redemption.key).catch(() => undefined)) !== undefined) throw spent;
          throw new CompareFailedError("a concurrent bootstrap of this bot won");
        }
      }
      await this.#audit("bot.bootstrap", botName, true, {
        emitted_by: "auth",
        token: tokenName,
        generation,
        tls_serial: issued.tlsSerial,
        ssh_key_fingerprint: issued.sshFingerprint,
        peer: ctx.peer.slice(0, 128),
      });
      return issued.credentials;
    } catch (err) {
      await this.#audit("bot.bootstrap", botName, false, {
        emitted_by: "auth",
        reason: err instanceof Error ? err.message : "bootstrap failed",
        peer: ctx.peer.slice(0, 128),
      });
      throw err;
    }
  }

  async renew(
    req: RenewAgentIdentityRequest__Output,
    ctx: { caller: Caller; peerCertificate: PeerCertificate | undefined },
  ): Promise<AgentIdentityCredentials> {
    const name = checkName(req.name);
    const presented = parseRenewalCredential(req.renewal_token);
    if (req.generation !== 0 && req.generation !== presented.generation)
      throw new BadParameterError("generation differs from the renewal credential's");
    const keys = parseKeys(req);
    if (ctx.caller.kind !== "bot" || ctx.caller.botName !== name)
      throw new NotAuthenticatedError(
        "renew over a connection with the bot's client certificate (x-agent-id)",
      );
    const presentedSerial = normalizeSerial(ctx.peerCertificate?.serialNumber ?? "");
    const secretHash = renewalSecretHash(presented.secret);
    const requestedKeys = keysFingerprint(keys);
    for (let attempt = 0; attempt < MAX_RENEW_ATTEMPTS; attempt++) {
      const { identity, checker } = this.#identity(name);
      const stored = await this.#state(name);
      if (!stored) throw new NotAuthenticatedError(`agent identity ${name} has not bootstrapped`);
      const { state, revision } = stored;
      if (state.locked)
        throw new AccessDeniedError(`agent identity ${name} is locked: ${state.locked_reason ?? ""}`);
      const verdict = judgeRenewal(state, {
        generation: presented.generation,
        secretHash,
        keysFingerprint: requestedKeys,
      });
      if (verdict.kind === "unknown") {
        await this.#audit("bot.renew", name, false, {
          emitted_by: callerLabel(ctx.caller),
          generation: presented.generation,
          reason: "renewal credential is not valid",
        });
        throw new NotAuthenticatedError("renewal credential is not valid");
      }
      if (verdict.kind === "stale") {
        const reason =
          verdict.presented === verdict.current
            ? `a superseded credential of generation ${verdict.presented} presented`
            : `generation ${verdict.presented} presented after generation ${verdict.current} was issued`;
        const locked: BotState = {
          ...state,
          locked: true,
          locked_reason: reason,
          locked_at: this.#d.clock.now().toISOString(),
        };
        try {
          await this.#d.backend.compareAndSwap(stateKey(name), revision, toJson(locked));
        } catch (err) {
          if (isCompareFailed(err)) continue; // changed under us: judge again on fresh state
          throw err;
        }
        await this.#audit("bot.locked", name, false, {
          emitted_by: callerLabel(ctx.caller),
          reason,
          presented_generation: verdict.presented,
          current_generation: verdict.current,
          revoked_tls_serial: state.tls_serial,
          revoked_ssh_serial: state.ssh_serial,
        });
        this.#d.logger.warn({ bot: name, reason }, "bot locked: stale renewal credential");
        // Also a Lock (docs/locks.md): nodes and proxies learn it and end the copy's sessions.
        await this.#locks?.lockByAuth({ bot: name }, `credential theft suspected: ${reason}`);
        throw new AccessDeniedError(`agent identity ${name} is locked: ${reason}`);
      }
      if (verdict.kind === "retry") {
        // Same checks as the renewal it repeats: the previous generation's certificate.
        if (presentedSerial === "" || presentedSerial !== state.renewed_with_tls_serial)
          throw new NotAuthenticatedError("renew with the client certificate of the current generation");
        const again = await this.#issue(identity, checker, state.current.generation, keys);
        const record = {
          ...state.current,
          secret_hash: again.record.secret_hash,
          reissues: (state.current.reissues ?? 0) + 1,
        };
        const next: BotState = {
          ...state,
          // The superseded record goes to the history: whoever presents it later is a copy.
          ...advanceGenerations(state, record),
          tls_serial: again.tlsSerial,
          ssh_serial: again.sshSerial,
          ssh_key_fingerprint: again.sshFingerprint,
          last_renewed_at: this.#d.clock.now().toISOString(),
          cert_expires_at: again.expires.toISOString(),
        };
        try {
          await this.#d.backend.compareAndSwap(stateKey(name), revision, toJson(next));
        } catch (err) {
          if (isCompareFailed(err)) continue;
          throw err;
        }
        await this.#audit("bot.renew", name, true, {
          emitted_by: callerLabel(ctx.caller),
          generation: record.generation,
          reissued: record.reissues,
          tls_serial: again.tlsSerial,
          ssh_key_fingerprint: again.sshFingerprint,
        });
        this.#d.logger.warn(
          { bot: name, generation: record.generation },
          "bot renewal retried after a lost answer: generation issued again",
        );
        return again.credentials;
      }
      if (presentedSerial === "" || presentedSerial !== state.tls_serial)
        throw new NotAuthenticatedError("renew with the client certificate of the current generation");
      const issued = await this.#issue(identity, checker, state.current.generation + 1, keys);
      const record = { ...issued.record, renewed_from: secretHash, keys_fingerprint: requestedKeys };
      const next: BotState = {
        ...state,
        ...advanceGenerations(state, record),
        renewed_with_tls_serial: presentedSerial,
        tls_serial: issued.tlsSerial,
        ssh_serial: issued.sshSerial,
        ssh_key_fingerprint: issued.sshFingerprint,
        last_renewed_at: this.#d.clock.now().toISOString(),
        cert_expires_at: issued.expires.toISOString(),
      };
      try {
        await this.#d.backend.compareAndSwap(stateKey(name), revision, toJson(next));
      } catch (err) {
        if (isCompareFailed(err) || isNotFound(err))
          throw new CompareFailedError("a concurrent renewal with this generation won");
        throw err;
      }
      await this.#audit("bot.renew", name, true, {
        emitted_by: callerLabel(ctx.caller),
        generation: issued.record.generation,
        tls_serial: issued.tlsSerial,
        ssh_key_fingerprint: issued.sshFingerprint,
      });
      return issued.credentials;
    }
    throw new CompareFailedError("the bot's state kept changing; try again");
  }

  /**
   * The bot's identity, its access checker and state, when it may act now (exists, bootstrapped,
   * not locked, not role-locked). Used by IssueWorkloadSVID.
   */
  async activeBot(
    name: string,
  ): Promise<{ identity: AgentIdentity; checker: AccessChecker; state: BotState }> {
    const { identity, checker } = this.#identity(name);
    const stored = await this.#state(name);
    if (!stored) throw new AccessDeniedError(`agent identity ${name} has not bootstrapped`);
    if (stored.state.locked) throw new AccessDeniedError(`agent identity ${name} is locked`);
    return { identity, checker, state: stored.state };
  }

  async activeRoles(name: string): Promise<{ roles: readonly string[] } | undefined> {
    try {
      return { roles: (await this.activeBot(name)).identity.spec.roles };
    } catch (err) {
      if (err instanceof AccessDeniedError) return undefined;
      throw err;
    }
  }

  /** The stored state of a bot (undefined before its bootstrap). */
  async botState(name: string): Promise<BotState | undefined> {
    return (await this.#state(name))?.state;
  }

  // ---- internals ------------------------------------------------------------------------------

  #writer(): ResourceWriter {
    if (!this.#d.writer) throw new NotImplementedError("this auth server cannot write resources");
    return this.#d.writer;
  }

  #verifyToken(name: string, secret: string): JoinToken {
    const token = this.#d.source.get("JoinToken", name);
    const presented = joinSecretHash(secret);
    // An unknown name costs the same comparison as a wrong secret (no oracle for token names).
    const stored = token?.spec.secret_hash ?? joinSecretHash(`unknown:${presented}`);
    if (!token || !sameHash(presented, stored)) throw new AccessDeniedError(INVALID_TOKEN);
    if (!token.spec.roles.includes("bot") || !token.spec.bot_name)
      throw new AccessDeniedError("this token is not a bot bootstrap token");
    if (token.spec.join_method !== "token")
      throw new AccessDeniedError("bots bootstrap with a token only (IAM join is not supported for bots)");
    if (!(Date.parse(token.spec.expires) > this.#d.clock.now().getTime()))
      throw new AccessDeniedError("bootstrap token has expired");
    return token;
  }

  #identity(name: string): { identity: AgentIdentity; checker: AccessChecker } {
    const identity = this.#d.source.get("AgentIdentity", name);
    if (!identity) throw new AccessDeniedError(`agent identity ${name} does not exist`);
    const roles: Role[] = [];
    for (const r of identity.spec.roles) {
      const role = this.#d.source.get("Role", r);
      if (role) roles.push(role);
    }
    const checker = newAccessChecker({ name: botUser(name), roles, traits: {} });
    if (checker.options().locked) throw new AccessDeniedError(`agent identity ${name} is locked by a role`);
    // A Lock on the bot or one of its roles: no bootstrap, renewal or SVID while it is in force.
    const lock = this.#locks?.covering({ bot: name, roles: identity.spec.roles });
    if (lock) throw new AccessDeniedError(lockRefusal(lock));
    return { identity, checker };
  }

  async #state(name: string): Promise<{ state: BotState; revision: number } | undefined> {
    let item: Item;
    try {
      item = await this.#d.backend.get(stateKey(name));
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
    return { state: item.value as unknown as BotState, revision: item.revision };
  }

  async #issue(
    identity: AgentIdentity,
    checker: AccessChecker,
    generation: number,
    keys: ReturnType<typeof parseKeys>,
  ): Promise<Issued> {
    const d = this.#d;
    const name = identity.metadata.name;
    let ttlMs = Math.min(
      parseDuration(identity.spec.cert_ttl ?? DEFAULT_CERT_TTL),
      checker.options().maxSessionTtlMs,
    );
    if (!(ttlMs >= 60_000)) ttlMs = 60_000;
    const ttlSeconds = Math.floor(ttlMs / 1000);
    const { validAfter, validBefore } = certValidity(d.clock, ttlSeconds);
    // Like users: plain logins for agent nodes, <login>@<node id> for agentless ones (user-cert-content.ts).
    const principals = certPrincipals(checker, await principalNodes(d.backend, d.clock));
    const sshCert =
      principals.length > 0
        ? d.userCertSigner.sign({
            type: "user",
            publicKey: keys.ssh.key,
            keyId: botKeyId(name, generation),
            principals,
            validAfter,
            validBefore,
            extensions: sshExtensionsOf(checker),
            valueExtensions: identityExtension({
              kind: "bot",
              name,
              roles: [...checker.roleNames],
              traits: {},
            }),
          })
        : undefined;
    // Journaled before it is handed out: a lock on the bot reaches agentless nodes' KRLs (krl.ts).
    if (sshCert)
      await new CertJournal({ backend: d.backend, clock: d.clock }).record({
        keyId: botKeyId(name, generation),
        kind: "bot",
        name,
        roles: [...checker.roleNames],
        validBefore,
        certBlob: sshCert.blob,
      });
    const tlsPem = await issueTlsClientCert(d.hostCa, {
      publicKey: keys.tls,
      commonName: name,
      uri: botIdentityUri(name),
      clock: d.clock,
      ttlSeconds,
    });
    const tlsSerial = normalizeSerial(parseCertificatePem(tlsPem).serialNumber);
    const renewal = newRenewalCredential(generation);
    const pub = await d.publicKeys();
    const now = d.clock.now().getTime();
    const fraction = identity.spec.renewal?.fraction ?? DEFAULT_RENEWAL_FRACTION;
    return {
      credentials: {
        name,
        ssh_certificate: sshCert?.line ?? "",
        principals: sshCert ? principals : [],
        tls_certificate_pem: tlsPem,
        host_ca_pems: pub.host_ca_pems ?? [],
        host_ca_ssh_public_keys: pub.host_ca_ssh_public_keys ?? [],
        renewal_token: renewal.token,
        generation,
        expires_unix_ms: validBefore.getTime(),
        renew_after_unix_ms: Math.round(now + ttlMs * fraction),
      },
      record: { generation, secret_hash: renewal.secretHash },
      tlsSerial,
      sshSerial: sshCert ? sshCert.serial.toString() : "",
      sshFingerprint: sshFingerprint(keys.ssh.blob),
      expires: validBefore,
    };
  }

  #info(bot: AgentIdentity, state: BotState | undefined): AgentIdentityInfo {
    return {
      name: bot.metadata.name,
      roles: [...bot.spec.roles],
      cert_ttl: bot.spec.cert_ttl ?? DEFAULT_CERT_TTL,
      allow_workload_svids: bot.spec.allow_workload_svids === true,
      generation: state?.current.generation ?? 0,
      locked: state?.locked === true,
      locked_reason: state?.locked_reason ?? "",
      locked_unix_ms: state?.locked_at ? Date.parse(state.locked_at) : 0,
      last_renewed_unix_ms: state?.last_renewed_at ? Date.parse(state.last_renewed_at) : 0,
      cert_expires_unix_ms: state?.cert_expires_at ? Date.parse(state.cert_expires_at) : 0,
    };
  }

  async #audit(type: string, bot: string, success: boolean, fields: JsonObject): Promise<void> {
    try {
      await this.#d.backend.appendAudit({
        event_type: type,
        user_name: bot ? botUser(bot) : "",
        success,
        fields: { ...fields, ...(bot ? { bot } : {}) },
      });
    } catch (err) {
      // Neither an answer nor a refusal may be lost to an audit hiccup.
      this.#d.logger.error({ err, event_type: type }, "audit failed");
    }
  }
}

function toJson(state: BotState): JsonObject {
  return JSON.parse(JSON.stringify(state)) as JsonObject;
}
