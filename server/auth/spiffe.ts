// Workload identity (docs/machine-identity.md):
// - IssueWorkloadSVID: a bot whose AgentIdentity has allow_workload_svids, and whose roles allow
//   the path (workload_spiffe_ids), gets an X.509-SVID from the SPIFFE CA and/or a JWT-SVID
//   signed with the SPIFFE CA's JWT key (kid, aud required, short exp).
// - AuthenticateSPIFFE: a workload sends its X.509-SVID IN THE REQUEST with a signature by the
//   SVID's key over (trust domain, SSH public key, time). Auth verifies the chain to the SPIFFE
//   CA, validity, the single spiffe://<trust domain>/... URI SAN, the proof, maps
//   /role/<role>/... to that Role (which must allow the path) and signs a short-lived SSH
//   certificate with the role's logins. It is neither a node join nor a bot bootstrap.
import { verify as verifySignature, X509Certificate } from "node:crypto";
import type { Logger } from "pino";
import type { Backend } from "../../core/backend/backend.ts";
import { SSH_CERT_BACKDATE_SECONDS, workloadKeyId } from "../../core/certs/key-ids.ts";
import type { SshCertificate, SshCertificateRequest } from "../../core/certs/ssh-cert.ts";
import { parseSshPublicKey, type SshPublicKey, sshFingerprint } from "../../core/certs/ssh-keys.ts";
import {
  issueSpiffeSvid,
  parseSpiffeId,
  pemToDers,
  publicKeyFromPem,
  SPIFFE_SVID_TTL_SECONDS,
  verifySpiffeSvid,
  type X509Issuer,
} from "../../core/certs/x509.ts";
import type { Clock } from "../../core/clock.ts";
import { AccessDeniedError, BadParameterError, NotAuthenticatedError } from "../../core/errors.ts";
import { parseWorkloadPath } from "../../core/identity/spiffe-path.ts";
import type { JsonObject } from "../../core/json.ts";
import { type AccessChecker, newAccessChecker } from "../../core/rbac/index.ts";
import type { AgentIdentity } from "../../core/resources/index.ts";
import type { ResourceSource } from "../../core/sources/source.ts";
import type { AuthenticateSPIFFERequest__Output } from "../../proto/generated/svc/v1/AuthenticateSPIFFERequest.ts";
import type { AuthenticateSPIFFEResponse } from "../../proto/generated/svc/v1/AuthenticateSPIFFEResponse.ts";
import type { IssueWorkloadSVIDRequest__Output } from "../../proto/generated/svc/v1/IssueWorkloadSVIDRequest.ts";
import type { IssueWorkloadSVIDResponse } from "../../proto/generated/svc/v1/IssueWorkloadSVIDResponse.ts";
import { type Caller, callerLabel } from "./caller.ts";
import { CertJournal } from "./cert-journal.ts";
import type { SpiffeHandler } from "./machine-identity.ts";
import { certPrincipals, identityExtension, principalNodes, sshExtensionsOf } from "./user-cert-content.ts";

/** The SPIFFE part of the cluster's CAs (CertificateAuthorities has these members). */
export interface SpiffeAuthority {
  trustDomain: string;
  spiffeCa: X509Issuer;
  /** Every SPIFFE CA to trust (several during a CA rotation, the signing one first). */
  trustedSpiffeCaPems?(): string[];
  signJwtSvid(o: {
    spiffeId: string;
    audience: string | string[];
    ttlSeconds?: number;
    issuer?: string;
  }): Promise<string>;
}

export interface SpiffeServiceDeps {
  backend: Backend;
  source: ResourceSource;
  clock: Clock;
  logger: Logger;
  authority: SpiffeAuthority;
  /** The SSH user CA: workload SSH certificates. */
  userCertSigner: { sign(req: SshCertificateRequest): SshCertificate };
  /** Bots that may act now (bot-identity.ts AgentIdentityService.activeBot). */
  bots: {
    activeBot(
      name: string,
    ): Promise<{ identity: AgentIdentity; checker: AccessChecker; state: { cert_expires_at: string } }>;
  };
  /** `iss` of JWT-SVIDs: the proxy's oidc_issuer_url; omitted when unset. */
  jwtIssuer?: string;
  /** Default lifetime of a workload SSH certificate; default 10 min (capped by the role and the SVID). */
  workloadSshTtlSeconds?: number;
}

/** The message a workload signs with its SVID key (docs/machine-identity.md). */
export function spiffeProofMessage(trustDomain: string, sshPublicKey: string, proofUnixMs: number): Buffer {
  return Buffer.from(`svc-spiffe-auth-v1\n${trustDomain}\n${sshPublicKey.trim()}\n${proofUnixMs}`, "utf8");
}

export const SPIFFE_PROOF_WINDOW_MS = 5 * 60_000;
export const WORKLOAD_SSH_TTL_SECONDS = 600;
const WORKLOAD_SSH_MAX_TTL_SECONDS = 3600;
const JWT_SVID_DEFAULT_TTL_SECONDS = 300;
const JWT_SVID_MAX_TTL_SECONDS = 3600;
const MAX_AUDIENCES = 8;

function checkTtl(ttl: number): number {
  if (!Number.isInteger(ttl) || ttl < 0) throw new BadParameterError("ttl_seconds must be >= 0");
  return ttl;
}

export class SpiffeService implements SpiffeHandler {
  readonly #d: SpiffeServiceDeps;

  constructor(deps: SpiffeServiceDeps) {
    this.#d = deps;
  }

  async issueWorkloadSvid(
    req: IssueWorkloadSVIDRequest__Output,
    caller: Caller,
  ): Promise<IssueWorkloadSVIDResponse> {
    const d = this.#d;
    const td = d.authority.trustDomain;
    parseWorkloadPath(req.spiffe_path);
    const spiffeId = `spiffe://${td}${req.spiffe_path}`;
    parseSpiffeId(spiffeId);
    const audiences = req.jwt_audiences ?? [];
    if (audiences.length > MAX_AUDIENCES || audiences.some((a) => a.length === 0 || a.length > 512))
      throw new BadParameterError(`jwt_audiences: 1..${MAX_AUDIENCES} non-empty audiences`);
    if (req.tls_public_key_pem === "" && audiences.length === 0)
      throw new BadParameterError(
        "ask for an X.509-SVID (tls_public_key_pem) and/or a JWT-SVID (jwt_audiences)",
      );
    const ttl = checkTtl(req.ttl_seconds);
    if (caller.kind !== "bot") throw new AccessDeniedError("only bots request workload SVIDs");
    const bot = await d.bots.activeBot(caller.botName);
    if (bot.identity.spec.allow_workload_svids !== true)
      throw new AccessDeniedError(`agent identity ${caller.botName} may not request workload SVIDs`);
    if (!bot.checker.spiffeAllowed(req.spiffe_path)) {
      await this.#audit("svid.issue", spiffeId, false, {
        emitted_by: callerLabel(caller),
        reason: "path not allowed",
      });
      throw new AccessDeniedError(`the bot's roles do not allow workload path ${req.spiffe_path}`);
    }
    const now = d.clock.now().getTime();
    // An SVID never outlives the credentials of the bot that asked for it.
    const botLeftSeconds = Math.floor((Date.parse(bot.state.cert_expires_at) - now) / 1000);
    if (!(botLeftSeconds > 0)) throw new AccessDeniedError("the bot's certificates have expired");
    const out: IssueWorkloadSVIDResponse = {
      spiffe_id: spiffeId,
      spiffe_ca_pems: d.authority.trustedSpiffeCaPems?.() ?? [d.authority.spiffeCa.certPem],
    };
    let expires = 0;
    if (req.tls_public_key_pem !== "") {
      const seconds = Math.min(ttl || SPIFFE_SVID_TTL_SECONDS, botLeftSeconds, 24 * 3600);
      out.x509_svid_pem = await issueSpiffeSvid(d.authority.spiffeCa, {
        publicKey: publicKeyFromPem(req.tls_public_key_pem),
        spiffeId,
        trustDomain: td,
        clock: d.clock,
        ttlSeconds: seconds,
      });
      expires = now + seconds * 1000;
    }
    if (audiences.length > 0) {
      const seconds = Math.min(ttl || JWT_SVID_DEFAULT_TTL_SECONDS, JWT_SVID_MAX_TTL_SECONDS, botLeftSeconds);
      out.jwt_svid = await d.authority.signJwtSvid({
        spiffeId,
        audience: audiences.length === 1 ? (audiences[0] as string) : [...audiences],
        ttlSeconds: seconds,
        ...(d.jwtIssuer ? { issuer: d.jwtIssuer } : {}),
      });
      if (expires === 0) expires = now + seconds * 1000;
    }
    out.expires_unix_ms = expires;
    await this.#audit("svid.issue", spiffeId, true, {
      emitted_by: callerLabel(caller),
      bot: caller.botName,
      x509: req.tls_public_key_pem !== "",
      jwt_audiences: [...audiences],
      expires: new Date(expires).toISOString(),
    });
    return out;
  }

  async authenticate(
    req: AuthenticateSPIFFERequest__Output,
    ctx: { peer: string },
  ): Promise<AuthenticateSPIFFEResponse> {
    let spiffeId = "";
    try {
      const key = this.#sshKey(req.ssh_public_key);
      const ttl = checkTtl(req.ttl_seconds);
      const leafDer = pemToDers(req.x509_svid_chain_pem)[0];
      if (!leafDer) throw new BadParameterError("x509_svid_chain_pem must hold the SVID (PEM)");
      if (!req.proof_signature || req.proof_signature.length === 0)
        throw new BadParameterError("proof_signature is required (signature by the SVID's key)");
      const d = this.#d;
      const now = d.clock.now().getTime();
      // Every trusted SPIFFE CA: an SVID from before a rotation's switch stays valid until it ends.
      const trusted = d.authority.trustedSpiffeCaPems?.() ?? [d.authority.spiffeCa.certPem];
      const svid = await verifySpiffeSvid(leafDer, trusted, {
        clock: d.clock,
        trustDomain: d.authority.trustDomain,
      });
      spiffeId = svid.spiffeId;
      this.#checkProof(leafDer, req, now);
      const { role: roleName } = this.#workload(svid.path);
      const role = d.source.get("Role", roleName);
      if (!role) throw new AccessDeniedError(`workload role ${roleName} does not exist`);
      const checker = newAccessChecker({ name: spiffeId, roles: [role], traits: {} });
      if (!checker.spiffeAllowed(svid.path))
        throw new AccessDeniedError(`role ${roleName} does not allow workload ${svid.path}`);
      const principals = certPrincipals(checker, await principalNodes(d.backend, d.clock));
      if (principals.length === 0) throw new AccessDeniedError(`role ${roleName} grants no logins`);
      const svidLeft = Math.floor((svid.notAfter.getTime() - now) / 1000);
      const seconds = Math.min(
        ttl || (d.workloadSshTtlSeconds ?? WORKLOAD_SSH_TTL_SECONDS),
        WORKLOAD_SSH_MAX_TTL_SECONDS,
        Math.floor(checker.options().maxSessionTtlMs / 1000),
        svidLeft,
      );
      if (!(seconds > 0)) throw new NotAuthenticatedError("the SVID is about to expire");
      const validAfter = new Date(now - SSH_CERT_BACKDATE_SECONDS * 1000);
      const validBefore = new Date(now + seconds * 1000);
      const keyId = workloadKeyId(spiffeId);
      const cert = d.userCertSigner.sign({
        type: "user",
        publicKey: key.key,
        keyId,
        principals,
        validAfter,
        validBefore,
        extensions: sshExtensionsOf(checker),
        valueExtensions: identityExtension({
          kind: "workload",
          name: spiffeId,
          roles: [roleName],
          traits: {},
        }),
      });
      // Journaled before it is handed out: a role or key-id lock reaches agentless nodes' KRLs.
      await new CertJournal({ backend: d.backend, clock: d.clock }).record({
        keyId,
        kind: "workload",
        name: spiffeId,
        roles: [roleName],
        validBefore,
        certBlob: cert.blob,
      });
      await this.#audit("spiffe.auth", spiffeId, true, {
        emitted_by: "auth",
        role: roleName,
        principals,
        key_id: keyId,
        serial: cert.serial.toString(),
        svid_serial: svid.serial,
        valid_before: validBefore.toISOString(),
        public_key_fingerprint: sshFingerprint(key.blob),
        peer: ctx.peer.slice(0, 128),
      });
      return {
        ssh_certificate: cert.line,
        spiffe_id: spiffeId,
        role: roleName,
        valid_before_unix_ms: validBefore.getTime(),
      };
    } catch (err) {
      await this.#audit("spiffe.auth", spiffeId, false, {
        emitted_by: "auth",
        reason: err instanceof Error ? err.message : "refused",
        peer: ctx.peer.slice(0, 128),
      });
      throw err;
    }
  }

  #sshKey(line: string): SshPublicKey {
    try {
      return parseSshPublicKey(line);
    } catch (err) {
      throw err instanceof BadParameterError ? err : new BadParameterError("ssh_public_key is malformed");
    }
  }

  #workload(path: string): { role: string } {
    try {
      return parseWorkloadPath(path);
    } catch {
      throw new AccessDeniedError("the SVID's path does not name a workload role (/role/<role>/...)");
    }
  }

  #checkProof(leafDer: Buffer, req: AuthenticateSPIFFERequest__Output, now: number): void {
    const at = req.proof_unix_ms;
    if (!Number.isSafeInteger(at) || Math.abs(now - at) > SPIFFE_PROOF_WINDOW_MS)
      throw new NotAuthenticatedError("proof_unix_ms is missing or too far from auth's clock");
    const publicKey = new X509Certificate(leafDer).publicKey;
    const msg = spiffeProofMessage(this.#d.authority.trustDomain, req.ssh_public_key, at);
    const alg = publicKey.asymmetricKeyType === "ed25519" ? null : "sha256";
    let ok = false;
    try {
      ok = verifySignature(alg, msg, publicKey, req.proof_signature);
    } catch {
      ok = false;
    }
    if (!ok) throw new NotAuthenticatedError("the proof is not signed by the SVID's key");
  }

  async #audit(type: string, spiffeId: string, success: boolean, fields: JsonObject): Promise<void> {
    try {
      await this.#d.backend.appendAudit({
        event_type: type,
        user_name: spiffeId ? `workload:${spiffeId}` : "",
        success,
        fields: { ...fields, ...(spiffeId ? { spiffe_id: spiffeId } : {}) },
      });
    } catch (err) {
      this.#d.logger.error({ err, event_type: type }, "audit failed");
    }
  }
}
