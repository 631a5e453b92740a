// Types for what our ssh2 patch (patches/ssh2+1.17.0.patch, see docs/ssh2-patch.md) adds:
// a certificate on a publickey auth method, and a host certificate beside a server host key.
import type { Buffer } from "node:buffer";

declare module "ssh2" {
  interface PublicKeyAuthMethod {
    /** OpenSSH certificate for `key`: a "<type>-cert-v01@openssh.com <base64>" line or the blob */
    cert?: string | Buffer;
    /**
     * Send the signed request at once instead of first asking whether the key would be accepted
     * (RFC 4252 section 7 allows it): one round trip fewer. Off by default, as in unpatched ssh2.
     */
    signAtOnce?: boolean;
  }
  interface EncryptedPrivateKey {
    /** OpenSSH host certificate for `key` (line or blob); offered as the *-cert-v01 algorithms */
    certificate?: string | Buffer;
  }
}

/** Host key algorithms that carry an OpenSSH host certificate (what the patched ssh2 can negotiate). */
export const HOST_CERT_ALGORITHMS = [
  "ssh-ed25519-cert-v01@openssh.com",
  "ecdsa-sha2-nistp256-cert-v01@openssh.com",
  "ecdsa-sha2-nistp384-cert-v01@openssh.com",
  "ecdsa-sha2-nistp521-cert-v01@openssh.com",
  "rsa-sha2-512-cert-v01@openssh.com",
  "rsa-sha2-256-cert-v01@openssh.com",
] as const;
