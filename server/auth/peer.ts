// Reads the identity a host-CA client certificate was issued to, from its URI SAN
// (core/certs/x509.ts: svc://agent/<id>, svc://bot/<name>, svc://<service>/<name>).
// Service certificates (proxy, auth) act as agents named "<service>:<name>", so the proxy sends
// `x-agent-id: proxy:<name>`. The operator's (svc://operator/<name>) is its own kind, admitted only
// to the operator hooks; it sends `x-agent-id: operator:<name>`.
import type { PeerCertificate } from "node:tls";
import type { PeerIdentity } from "./interceptor.ts";

function uriSans(cert: PeerCertificate): string[] {
  const san = cert.subjectaltname ?? "";
  return san
    .split(/,\s*/)
    .filter((e) => e.startsWith("URI:"))
    .map((e) => e.slice(4));
}

export function peerIdentityFromCertificate(cert: PeerCertificate): PeerIdentity | undefined {
  const ids: PeerIdentity[] = [];
  for (const uri of uriSans(cert)) {
    const m = /^svc:\/\/([^/]+)\/([^/]+)$/.exec(uri);
    if (!m?.[1] || !m[2]) continue;
    let kind: string;
    let name: string;
    try {
      kind = decodeURIComponent(m[1]);
      name = decodeURIComponent(m[2]);
    } catch {
      continue;
    }
    if (kind === "agent") ids.push({ kind: "agent", id: name });
    else if (kind === "bot") ids.push({ kind: "bot", id: name });
    else if (kind === "operator") ids.push({ kind: "operator", id: `operator:${name}` });
    else ids.push({ kind: "agent", id: `${kind}:${name}` });
  }
  // Exactly one identity per certificate; anything ambiguous is no identity.
  return ids.length === 1 ? ids[0] : undefined;
}
