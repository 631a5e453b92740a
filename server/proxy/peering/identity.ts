// Who may speak svc-peer. Both ends hold the proxy identity auth issues (server/roles/
// proxy-identity.ts): the dialer presents its client certificate (URI SAN svc://proxy/<name>),
// the holder its server certificate for the proxies' shared public names. The chain to the host
// CA is checked by TLS itself; these add the role checks TLS cannot express.
import { X509Certificate } from "node:crypto";
import { serviceIdentityUri } from "../../../core/certs/x509.ts";

/** The svc://proxy/ prefix every proxy client certificate carries. */
const PROXY_URI_PREFIX = serviceIdentityUri("proxy", "");

/** True when a (chain-verified) client certificate is a proxy's: a URI SAN svc://proxy/<name>. */
export function isProxyClientCertificate(cert: X509Certificate | undefined): boolean {
  if (!cert) return false;
  return sanEntries(cert).some((e) => e.startsWith("URI:") && e.slice(4).startsWith(PROXY_URI_PREFIX));
}

/**
 * The name a peer's server certificate must carry: the first subject alternative name on our own
 * server certificate. Every replica mounts the same identity, so a peer proxy presents a
 * certificate for the same names, while auth's certificate (same CA) names auth, and agents hold
 * no server certificates at all.
 */
export function peerServerName(ownServerCertPem: string): string {
  const cert = new X509Certificate(ownServerCertPem);
  for (const e of sanEntries(cert)) {
    if (e.startsWith("DNS:")) return e.slice(4);
    if (e.startsWith("IP Address:")) return e.slice("IP Address:".length);
  }
  // A certificate without SANs is not one tls.checkServerIdentity would accept anyway.
  return "";
}

function sanEntries(cert: X509Certificate): string[] {
  return (cert.subjectAltName ?? "").split(/,\s*/).filter((e) => e.length > 0);
}
