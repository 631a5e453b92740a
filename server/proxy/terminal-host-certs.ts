// Nodes' host certificates the proxy has verified, per node: the same certificate bytes under the
// same trusted host CA keys need not be parsed and have their CA signature checked again on every
// terminal open while the certificate is valid. What is remembered is the exact blob, the CA keys
// it was checked against and its validity window; anything else (another blob, a rotated CA set,
// outside the window) is verified in full. ssh2 still checks, on every connection, that the
// certified host key signed the key exchange: a node has to hold the key to use its certificate.
import { verifySshCertificate } from "../../core/certs/ssh-cert.ts";
import type { Clock } from "../../core/clock.ts";

/** Nodes remembered (least recently used forgotten first). */
export const DEFAULT_MAX_HOST_CERTS = 10_000;

interface Verified {
  blob: Buffer;
  /** the trusted CA key lines it was verified with, joined */
  caKeys: string;
  validAfter: number;
  validBefore: number;
}

export class VerifiedHostCerts {
  readonly #clock: Clock;
  readonly #max: number;
  /** node ID -> its verified certificate; Map order is recency */
  readonly #byNode = new Map<string, Verified>();

  constructor(o: { clock: Clock; maxEntries?: number }) {
    this.#clock = o.clock;
    this.#max = Math.max(1, o.maxEntries ?? DEFAULT_MAX_HOST_CERTS);
  }

  get size(): number {
    return this.#byNode.size;
  }

  /**
   * A hostVerifier (connectWithCertificate) for the node `nodeId`: accepts only a host certificate
   * signed by one of `trustedCaKeys`, valid now, naming `nodeId`, as hostCertificateVerifier does.
   */
  verifier(
    nodeId: string,
    trustedCaKeys: readonly string[],
    onRefused: (reason: string) => void,
  ): (blob: Buffer) => boolean {
    const caKeys = trustedCaKeys.join("\n");
    return (blob) => {
      const now = this.#clock.now().getTime();
      const known = this.#byNode.get(nodeId);
      if (
        known &&
        known.caKeys === caKeys &&
        now >= known.validAfter &&
        now < known.validBefore &&
        known.blob.equals(blob)
      ) {
        this.#byNode.delete(nodeId);
        this.#byNode.set(nodeId, known);
        return true;
      }
      try {
        const cert = verifySshCertificate(blob, {
          trustedCaKeys,
          type: "host",
          principal: nodeId,
          clock: this.#clock,
        });
        this.#byNode.delete(nodeId);
        this.#byNode.set(nodeId, {
          blob: Buffer.from(blob),
          caKeys,
          validAfter: cert.validAfter.getTime(),
          validBefore: cert.validBefore.getTime(),
        });
        if (this.#byNode.size > this.#max) {
          const oldest = this.#byNode.keys().next().value;
          if (oldest !== undefined) this.#byNode.delete(oldest);
        }
        return true;
      } catch (err) {
        this.#byNode.delete(nodeId);
        onRefused(err instanceof Error ? err.message : "host certificate refused");
        return false;
      }
    };
  }
}
