// Who may write which audit events through EmitAuditEvent. Everything auth records itself (logins,
// certificates, joins, bots, tokens, users, nodes, MFA devices, SPIFFE) is written by auth only;
// callers may add only the event types their own kind produces, listed one by one below, about
// the subjects they can vouch for:
//   node agents      ssh.auth, ssh.auth.refused, session.start, session.end (the SSH user they
//                    authenticated, from the certificate they verified: server/agent/audit.ts)
//   services         their own list; the proxy emits none (auth audits what it asks for:
//                    user.login, cert.create, ...), so its list is empty
//   users            their own list, about themselves only; no client emits one today, so empty
// Bots and the operator have no EmitAuditEvent at all (authz.ts). Each caller is also rate
// limited, so a compromised node or a script cannot flood the audit log (docs/grpc.md).
import { AccessDeniedError, BadParameterError, LimitExceededError } from "../../core/errors.ts";
import type { Caller } from "./caller.ts";

/** What a node agent emits (server/agent/audit.ts). */
export const NODE_EVENTS: ReadonlySet<string> = new Set([
  "ssh.auth",
  "ssh.auth.refused",
  "session.start",
  "session.end",
]);
/** What each service (a "<service>:<name>" client certificate) emits; a service not named: none. */
export const SERVICE_EVENTS: ReadonlyMap<string, ReadonlySet<string>> = new Map([["proxy", new Set()]]);
/** What a user's client emits about the user. */
export const USER_EVENTS: ReadonlySet<string> = new Set();

const EVENT_TYPE = /^[a-z][a-z0-9_.-]{0,63}$/;

function refuse(eventType: string): never {
  throw new AccessDeniedError(`event_type ${eventType} is not one this caller emits`);
}

/** The user_name an event may carry for this caller; throws when the type or subject is not theirs. */
export function checkEmittable(caller: Caller, eventType: string, userName: string): string {
  if (!EVENT_TYPE.test(eventType)) throw new BadParameterError("event_type is malformed");
  if (userName.length > 253) throw new BadParameterError("user_name is too long");
  switch (caller.kind) {
    case "agent": {
      const colon = caller.agentId.indexOf(":");
      const allowed =
        colon < 0 ? NODE_EVENTS : (SERVICE_EVENTS.get(caller.agentId.slice(0, colon)) ?? new Set<string>());
      if (!allowed.has(eventType)) refuse(eventType);
      return userName;
    }
    case "user":
      if (!USER_EVENTS.has(eventType)) refuse(eventType);
      if (userName !== "" && userName !== caller.username) {
        throw new AccessDeniedError("users emit events about themselves only");
      }
      return caller.username;
    default:
      throw new AccessDeniedError("this caller emits no audit events");
  }
}

export interface RateLimit {
  /** events per second, refilled continuously */
  perSecond: number;
  /** bucket size: the burst allowed after a quiet period */
  burst: number;
}

export const EMIT_LIMITS: Readonly<Record<"agent" | "user", RateLimit>> = {
  // A busy node emits four events per SSH session; 200 sessions opening at once fit the burst.
  agent: { perSecond: 50, burst: 800 },
  user: { perSecond: 2, burst: 20 },
};

const MAX_BUCKETS = 50_000;

/**
 * Token buckets per caller (its audit label), in this auth replica's memory. A dozen lines, so
 * written here rather than pulling in a limiter made for HTTP frameworks; a replica restart
 * refills them, which only ever allows a little more.
 */
export class EmitRateLimiter {
  readonly #buckets = new Map<string, { tokens: number; at: number }>();
  readonly #now: () => number;

  constructor(now: () => number = () => Date.now()) {
    this.#now = now;
  }

  take(key: string, limit: RateLimit): void {
    const now = this.#now();
    const b = this.#buckets.get(key) ?? { tokens: limit.burst, at: now };
    b.tokens = Math.min(limit.burst, b.tokens + ((now - b.at) / 1000) * limit.perSecond);
    b.at = now;
    if (b.tokens < 1) {
      this.#buckets.set(key, b);
      throw new LimitExceededError("too many audit events from this caller; slow down");
    }
    b.tokens -= 1;
    if (!this.#buckets.has(key) && this.#buckets.size >= MAX_BUCKETS) {
      // Full: forget the oldest entry (Map keeps insertion order); it comes back with a full bucket.
      const oldest = this.#buckets.keys().next().value;
      if (oldest !== undefined) this.#buckets.delete(oldest);
    }
    this.#buckets.set(key, b);
  }
}
