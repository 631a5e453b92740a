// An agent follows a host CA rotation at once instead of at its next scheduled renewal: when a
// trust snapshot says host_ssh or host_x509 is in update_servers (servers must now hold
// certificates from the new key) and this node's certificate is still signed by another key than
// the active one, it asks for a renewal now. Without this, a node renewed shortly before the
// rotation would keep an old-key certificate until its next renewal, and ending the rotation
// (standby) would leave it untrusted. The renewal itself is the agent's ordinary one
// (RenewNodeCredentials); this only decides when.
import { X509Certificate } from "node:crypto";
import type { Logger } from "pino";
import { parseSshCertificate } from "../../core/certs/ssh-cert.ts";
import { parseSshPublicKey } from "../../core/certs/ssh-keys.ts";
import type { CertAuthorityStatus__Output } from "../../proto/generated/svc/v1/CertAuthorityStatus.ts";

/** The phases in which a server's certificate must come from the new (active) key. */
const SERVER_PHASES = new Set(["update_servers"]);

export interface NodeCertificates {
  /** OpenSSH host certificate line */
  hostCertificate: string;
  /** PEM of the TLS client certificate (absent: the node has none to follow) */
  tlsCertificatePem?: string;
}

/** The public key (OpenSSH line or PEM certificate) of the key that signs now, or undefined. */
function activeKeyOf(ca: CertAuthorityStatus__Output): string | undefined {
  return ca.keys.find((k) => k.role === "active")?.public_key;
}

/** True when `hostCertificate` is signed by the OpenSSH CA key `caLine`. */
export function sshSignedBy(hostCertificate: string, caLine: string): boolean {
  try {
    const cert = parseSshCertificate(hostCertificate);
    return cert.signatureKey.equals(parseSshPublicKey(caLine).blob);
  } catch {
    return false;
  }
}

/** True when the PEM certificate `certPem` was issued by the CA certificate `caPem`. */
export function x509SignedBy(certPem: string, caPem: string): boolean {
  try {
    const cert = new X509Certificate(certPem);
    const ca = new X509Certificate(caPem);
    return cert.checkIssued(ca) && cert.verify(ca.publicKey);
  } catch {
    return false;
  }
}

/**
 * The CA types whose rotation wants this node's certificate re-issued now: in update_servers and
 * the node's certificate of that type not signed by the active key. Pure: no I/O.
 */
export function staleForRotation(
  authorities: readonly CertAuthorityStatus__Output[],
  certs: NodeCertificates,
): string[] {
  const stale: string[] = [];
  for (const ca of authorities) {
    if (!SERVER_PHASES.has(ca.phase)) continue;
    const active = activeKeyOf(ca);
    if (!active) continue;
    if (ca.type === "host_ssh" && !sshSignedBy(certs.hostCertificate, active)) stale.push(ca.type);
    if (ca.type === "host_x509" && certs.tlsCertificatePem && !x509SignedBy(certs.tlsCertificatePem, active))
      stale.push(ca.type);
  }
  return stale;
}

export interface RotationFollowerOptions {
  /** the node's certificates in use now (they change after each renewal) */
  certificates: () => NodeCertificates;
  /** renews now (the agent's RenewNodeCredentials path: new keys, atomic save, live swap) */
  renewNow: (reason: string) => Promise<void>;
  logger: Logger;
  /** after a failed renewal, the next snapshot retries no sooner than this; default 10 s */
  retryAfterMs?: number;
  now?: () => number;
}

/**
 * Feed it every trust snapshot's authorities (onAuthorities). At most one renewal runs at a time;
 * a failed one is retried on a later snapshot (auth pushes one at least every keepalive).
 */
export class RotationFollower {
  readonly #o: RotationFollowerOptions;
  #running: Promise<void> | undefined;
  #notBefore = 0;

  constructor(o: RotationFollowerOptions) {
    this.#o = o;
  }

  /** Renews when a host CA rotation asks for it; resolves when that renewal is done (or not needed). */
  onAuthorities(authorities: readonly CertAuthorityStatus__Output[]): Promise<void> {
    if (this.#running) return this.#running;
    const now = (this.#o.now ?? Date.now)();
    if (now < this.#notBefore) return Promise.resolve();
    const stale = staleForRotation(authorities, this.#o.certificates());
    if (stale.length === 0) return Promise.resolve();
    const reason = `${stale.join(" and ")} rotation in update_servers: certificate not from the active key`;
    this.#o.logger.info({ types: stale }, "renewing now to follow a host CA rotation");
    this.#running = this.#o
      .renewNow(reason)
      .catch((err: unknown) => {
        this.#notBefore = (this.#o.now ?? Date.now)() + (this.#o.retryAfterMs ?? 10_000);
        this.#o.logger.warn(
          { err: err instanceof Error ? err.message : String(err), types: stale },
          "renewal for a host CA rotation failed; retrying on a later snapshot",
        );
      })
      .finally(() => {
        this.#running = undefined;
      });
    return this.#running;
  }
}
