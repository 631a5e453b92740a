// Trust a server by its OpenSSH host certificate (the @cert-authority rule of known_hosts).
import type { KeyObject } from "node:crypto";
import { verifySshCertificate } from "../certs/ssh-cert.ts";
import type { Clock } from "../clock.ts";

export interface HostCertificateTrust {
  /** host CA public keys: KeyObjects, wire blobs or OpenSSH public key lines */
  trustedCaKeys: readonly (KeyObject | Uint8Array | string)[];
  /** the name the certificate must list (the node's hostname or address as dialled) */
  principal: string;
  clock: Clock;
  /** receives why a host was refused (for logs/audit; never contains key material) */
  onRefused?: (reason: string) => void;
}

/**
 * A hostVerifier for connectWithCertificate (use with requireHostCertificate): accepts only a host
 * certificate signed by a trusted host CA, valid now, naming `principal`. ssh2 has already checked
 * that the certified key signed the key exchange.
 */
export function hostCertificateVerifier(trust: HostCertificateTrust): (hostKeyBlob: Buffer) => boolean {
  return (blob) => {
    try {
      verifySshCertificate(blob, {
        trustedCaKeys: trust.trustedCaKeys,
        type: "host",
        principal: trust.principal,
        clock: trust.clock,
      });
      return true;
    } catch (err) {
      trust.onRefused?.(err instanceof Error ? err.message : "host certificate refused");
      return false;
    }
  };
}
