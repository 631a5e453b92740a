// Who may write which audit events through EmitAuditEvent. Everything auth records itself (logins,
// certificates, joins, bots, tokens, users, nodes, MFA devices) is written by auth only; callers
// may add only the events their own kind produces, about the subjects they can vouch for:
//   node agents      ssh.auth, ssh.auth.refused, session.start, session.end (the SSH user they
//                    authenticated, from the certificate they verified)
//   services         "<service>.*" (the proxy: proxy.*), about anyone they act for
//   users            client.* about themselves only
// Bots and the operator have no EmitAuditEvent at all (authz.ts). Each caller is also rate
// limited, so a compromised node or a script cannot flood the audit log (docs/grpc.md).
import { AccessDeniedError, BadParameterError, LimitExceededError } from "../../core/errors.ts";
import type { Caller } from "./caller.ts";

const NODE_EVENTS: ReadonlySet<string> = new Set([
  "ssh.auth",
  "ssh.auth.refused",
  "session.start",
  "session.end",
]);
const EVENT_TYPE = /^[a-z][a-z0-9_.-]{0,63}$/;

/** The user_name an event may carry for this caller; throws when the type or subject is not theirs. */
export function checkEmittable(caller: Caller, eventType: string, userName: string): string {
  if (!EVENT_TYPE.test(eventType)) throw new BadParameterError("event_type is malformed");
  if (userName.length > 253) throw new BadParameterError("user_name is too long");
  switch (caller.kind) {
    case "agent": {
      const service = caller.agentId.includes(":")
        ? caller.agentId.slice(0, caller.agentId.indexOf(":"))
        : "";
      const allowed = service ? eventType.startsWith(`${service}.`) : NODE_EVENTS.has(eventType);
      if (!allowed) throw new AccessDeniedError(`event_type ${eventType} is not one this caller emits`);
      return userName;
    }
    case "user":
      if (!eventType.startsWith("client.")) {
        throw new AccessDeniedError(
          `event_type ${eventType} is written by the servers; users emit client.* only`,
        );
      }
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
