// Key ids and validity windows shared by every issuer, so audit logs and sshd's log lines read alike.
// A key id shows up in sshd logs: it never carries a secret (a session is named by a hash prefix).
import { createHash } from "node:crypto";
import type { Clock } from "../clock.ts";

export const SSH_USER_CERT_TTL_SECONDS = 12 * 3600;
export const SSH_HOST_CERT_TTL_SECONDS = 365 * 24 * 3600;
/** certificates start this long before "now" to tolerate clock differences between machines */
export const SSH_CERT_BACKDATE_SECONDS = 60;

/** A non-secret reference to a session: the first 16 hex digits of SHA-256(session id). */
export function sessionRef(sessionId: string): string {
  return createHash("sha256").update(sessionId).digest("hex").slice(0, 16);
}

export const userKeyId = (username: string, sessionId: string): string =>
  `user:${username}:session:${sessionRef(sessionId)}`;
export const hostKeyId = (hostId: string): string => `host:${hostId}`;
export const botKeyId = (botName: string, generation: number): string => `bot:${botName}:gen:${generation}`;
export const workloadKeyId = (spiffeId: string): string => `workload:${spiffeId}`;

/** [now - backdate, now + ttl] */
export function certValidity(clock: Clock, ttlSeconds: number): { validAfter: Date; validBefore: Date } {
  const now = clock.now().getTime();
  return {
    validAfter: new Date(now - SSH_CERT_BACKDATE_SECONDS * 1000),
    validBefore: new Date(now + ttlSeconds * 1000),
  };
}

/** A known_hosts line that trusts `caPublicLine` for hosts matching `hostPattern` (e.g. "*"). */
export const knownHostsCertAuthority = (hostPattern: string, caPublicLine: string): string =>
  `@cert-authority ${hostPattern} ${caPublicLine.trim()}`;
