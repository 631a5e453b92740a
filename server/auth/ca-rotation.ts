// RotateCertAuthority and ListCertAuthorities (docs/ca-rotation.md), plus the loop every auth
// replica runs: re-read the rotation state (a change another replica made) and move automatic
// rotations whose phase is due. The compare-and-swap inside core/ca decides which replica moves
// a phase; the others just reload it.
import type { Logger } from "pino";
import type { Backend } from "../../core/backend/backend.ts";
import type { CertificateAuthorities } from "../../core/ca/authorities.ts";
import type { PhaseChange } from "../../core/ca/key-set-state.ts";
import { DEFAULT_GRACE_SECONDS, isCaType, isPhase, type Phase } from "../../core/ca/rotation.ts";
import { BadParameterError } from "../../core/errors.ts";
import type { CertAuthorityStatus } from "../../proto/generated/svc/v1/CertAuthorityStatus.ts";
import type { ListCertAuthoritiesResponse } from "../../proto/generated/svc/v1/ListCertAuthoritiesResponse.ts";
import type { RotateCertAuthorityRequest__Output } from "../../proto/generated/svc/v1/RotateCertAuthorityRequest.ts";
import { type Caller, callerLabel } from "./caller.ts";

/** How often each replica re-reads the rotation state: the bound on replicas signing with different keys. */
export const CA_ROTATION_POLL_MS = 2_000;
const MAX_GRACE_SECONDS = 366 * 24 * 3600;

export interface CaRotationDeps {
  cas: CertificateAuthorities;
  backend: Backend;
  logger: Logger;
  /** auth.ca_rotation_grace, in seconds: an automatic rotation's phase length when the request names none */
  defaultGraceSeconds?: number;
  pollMs?: number;
}

export class CaRotation {
  readonly #d: CaRotationDeps;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  #stopped = false;

  constructor(d: CaRotationDeps) {
    this.#d = d;
  }

  async rotate(req: RotateCertAuthorityRequest__Output, caller: Caller): Promise<CertAuthorityStatus> {
    const type = req.type;
    if (!isCaType(type))
      throw new BadParameterError("type must be one of user_ssh, host_ssh, host_x509, spiffe, jwt, app");
    const mode = req.mode || "manual";
    if (mode !== "manual" && mode !== "auto") throw new BadParameterError("mode must be manual or auto");
    let phase: Phase | undefined;
    if (req.phase) {
      if (!isPhase(req.phase))
        throw new BadParameterError(
          "phase must be one of init, update_clients, update_servers, standby, rollback",
        );
      phase = req.phase;
    }
    const grace = Number(req.grace_period_seconds ?? 0);
    if (!Number.isInteger(grace) || grace < 0 || grace > MAX_GRACE_SECONDS)
      throw new BadParameterError(`grace_period_seconds must be 0..${MAX_GRACE_SECONDS}`);
    const who = callerLabel(caller);
    const change = await this.#d.cas.rotate({
      type,
      ...(phase ? { phase } : {}),
      auto: mode === "auto",
      graceSeconds: grace || (this.#d.defaultGraceSeconds ?? DEFAULT_GRACE_SECONDS),
      force: req.force === true,
      who,
    });
    await this.#audit(change, who, caller.kind === "user" ? caller.username : "", req.force === true);
    return change.status;
  }

  list(): ListCertAuthoritiesResponse {
    return { authorities: this.#d.cas.status() };
  }

  async #audit(change: PhaseChange, who: string, userName: string, forced: boolean): Promise<void> {
    this.#d.logger.info(
      { type: change.type, from: change.from, to: change.to, who, mode: change.status.mode },
      "certificate authority rotated",
    );
    await this.#d.backend.appendAudit({
      event_type: "ca.rotated",
      user_name: userName,
      success: true,
      fields: {
        emitted_by: "auth",
        type: change.type,
        from: change.from,
        to: change.to,
        who,
        mode: change.status.mode,
        ...(forced ? { forced: true } : {}),
      },
    });
  }

  /** One round: pick up another replica's change, then move what automatic mode says is due. */
  async tick(): Promise<void> {
    await this.#d.cas.reload();
    for (const change of await this.#d.cas.advanceDue("auth:automatic-rotation"))
      await this.#audit(change, "auth:automatic-rotation", "", false);
  }

  start(): void {
    const every = this.#d.pollMs ?? CA_ROTATION_POLL_MS;
    const loop = () => {
      if (this.#stopped) return;
      this.#running = this.tick()
        .catch((err: unknown) => {
          this.#d.logger.warn(
            { err: err instanceof Error ? err.message : String(err) },
            "CA rotation check failed",
          );
        })
        .finally(() => {
          this.#running = undefined;
          if (!this.#stopped) {
            this.#timer = setTimeout(loop, every);
            this.#timer.unref();
          }
        });
    };
    this.#timer = setTimeout(loop, every);
    this.#timer.unref();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer) clearTimeout(this.#timer);
    await this.#running;
  }
}

/** A TLS server's identity plus the CAs it trusts for client certificates. */
export interface FollowedTls {
  certPem: string;
  keyPem: string;
  clientCaPems: string[];
}

/**
 * Keeps a TLS server (auth's) in step with the host X.509 CA: it trusts every trusted host CA for
 * client certificates, and its own certificate is re-issued when the signing CA changes, so
 * clients that already dropped the old CA (after standby) still verify it.
 */
export class HostCaFollower {
  readonly #o: {
    cas: CertificateAuthorities;
    issue: () => Promise<{ certPem: string; keyPem: string }>;
    apply: (tls: FollowedTls) => void;
    logger: Logger;
  };
  #current: { certPem: string; keyPem: string };
  #signer: string;
  #off: (() => void) | undefined;
  #chain: Promise<void> = Promise.resolve();

  constructor(o: {
    cas: CertificateAuthorities;
    initial: { certPem: string; keyPem: string };
    issue: () => Promise<{ certPem: string; keyPem: string }>;
    apply: (tls: FollowedTls) => void;
    logger: Logger;
  }) {
    this.#o = o;
    this.#current = o.initial;
    this.#signer = o.cas.hostCa.certPem;
  }

  /** What the server should hold now. */
  tls(): FollowedTls {
    return { ...this.#current, clientCaPems: this.#o.cas.trustedHostCaPems() };
  }

  /** A certificate renewed elsewhere (ServerCertRenewer): put it in service with today's CAs. */
  set(identity: { certPem: string; keyPem: string }): void {
    this.#current = identity;
    this.#o.apply(this.tls());
  }

  start(): void {
    this.#off = this.#o.cas.onChange(() => {
      this.#chain = this.#chain.then(() => this.#follow());
    });
  }

  async #follow(): Promise<void> {
    try {
      const signer = this.#o.cas.hostCa.certPem;
      if (signer !== this.#signer) {
        this.#signer = signer;
        this.#current = await this.#o.issue();
        this.#o.logger.info("TLS certificate re-issued by the new host CA key");
      }
      this.#o.apply(this.tls());
    } catch (err) {
      this.#o.logger.warn(
        { err: err instanceof Error ? err.message : String(err) },
        "following the host CA failed",
      );
    }
  }

  async stop(): Promise<void> {
    this.#off?.();
    await this.#chain;
  }
}
