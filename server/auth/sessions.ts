// Web sessions: 256-bit random IDs handed to the client once; the backend stores only their
// SHA-256, so a copy of the database yields no usable session. Lifetime `auth.session_ttl` (12 h
// by default). Each session records whether its login passed a second factor and its scope
// ("mfa_enrollment": roles require MFA, no device yet; see interceptor.ts). A second key per
// user indexes the sessions so that deleting or locking a user revokes all of them on every
// replica that shares the backend. A single sign-on session names its connector: it belongs to the
// SSO user of that connector only (never to a User resource that later takes the name), and may
// be capped below the TTL (connector max_session_ttl, the provider's own limit).
import { hash, randomBytes } from "node:crypto";
import type { Backend } from "../../core/backend/backend.ts";
import type { Clock } from "../../core/clock.ts";
import { isNotFound, NotAuthenticatedError } from "../../core/errors.ts";
import type { JsonObject } from "../../core/json.ts";
import type { SessionMemo } from "./session-memo.ts";

export const SESSION_TTL_MS = 12 * 60 * 60 * 1000;
const SESSION_PREFIX = "web-sessions/";
const USER_INDEX_PREFIX = "user-sessions/";

/** "full", or "mfa_enrollment": may only enrol a WebAuthn device (authz.ts MFA_ENROLLMENT_RPCS). */
export type SessionScope = "full" | "mfa_enrollment";

export interface WebSession {
  username: string;
  /** SHA-256 hex of the session ID. */
  hash: string;
  created: Date;
  expires: Date;
  /** the login passed a second factor */
  mfa: boolean;
  scope: SessionScope;
  /** Single sign-on: the Connector the login went through; undefined for local logins. */
  connector?: string;
}

export interface CreateSessionOptions {
  mfa?: boolean;
  scope?: SessionScope;
  /** Ends the session earlier than the TTL would (never later). */
  notAfter?: Date;
  /** Single sign-on: the Connector the login went through. */
  connector?: string;
}

// One-shot crypto.hash: no Hash object per call (every authenticated RPC hashes its session id).
export function hashSecret(secret: string): string {
  return hash("sha256", secret, "hex");
}

/** Random URL-safe secret with `bytes` bytes of entropy. */
export function randomSecret(bytes = 32): string {
  return randomBytes(bytes).toString("base64url");
}

// Session IDs are base64url of 32 bytes; anything else is rejected before touching the backend.
const SESSION_ID_PATTERN = /^[A-Za-z0-9_-]{43}$/;

export class SessionStore {
  readonly #backend: Backend;
  readonly #clock: Clock;
  readonly #ttlMs: number;
  readonly #onRevoked: ((username: string, hashes: string[]) => void) | undefined;
  readonly #afterRevoked: ((username: string, hashes: string[]) => Promise<void>) | undefined;
  readonly #memo: SessionMemo | undefined;

  /**
   * `onRevoked`: told after sessions are gone from the backend (the proxies' feed, session-feed.ts).
   * `afterRevoked`: awaited after that, before revoke/revokeAll return (the app sessions made from
   * them end: apps/access.ts), so a logout that answered has ended them; it must not throw.
   * `memo`: sessions just read, kept a few seconds (session-memo.ts); revocations here drop theirs.
   */
  constructor(deps: {
    backend: Backend;
    clock: Clock;
    ttlMs?: number;
    onRevoked?: (username: string, hashes: string[]) => void;
    afterRevoked?: (username: string, hashes: string[]) => Promise<void>;
    memo?: SessionMemo;
  }) {
    this.#backend = deps.backend;
    this.#clock = deps.clock;
    this.#ttlMs = deps.ttlMs ?? SESSION_TTL_MS;
    this.#onRevoked = deps.onRevoked;
    this.#afterRevoked = deps.afterRevoked;
    this.#memo = deps.memo;
  }

  get ttlMs(): number {
    return this.#ttlMs;
  }

  /** Creates a session; the returned `id` is the only copy of the secret. */
  async create(username: string, o: CreateSessionOptions = {}): Promise<{ id: string; session: WebSession }> {
    const id = randomSecret(32);
    const hash = hashSecret(id);
    const created = this.#clock.now();
    const byTtl = created.getTime() + this.#ttlMs;
    const expires = new Date(o.notAfter ? Math.min(byTtl, o.notAfter.getTime()) : byTtl);
    if (expires.getTime() <= created.getTime()) throw new NotAuthenticatedError("the login has expired");
    const mfa = o.mfa === true;
    const scope = o.scope ?? "full";
    const value: JsonObject = {
      username,
      created: created.toISOString(),
      expires: expires.toISOString(),
      mfa,
      scope,
      ...(o.connector ? { connector: o.connector } : {}),
    };
    await this.#backend.create(SESSION_PREFIX + hash, value, { expires });
    await this.#backend.put(`${USER_INDEX_PREFIX}${username}/${hash}`, { hash }, { expires });
    return {
      id,
      session: {
        username,
        hash,
        created,
        expires,
        mfa,
        scope,
        ...(o.connector ? { connector: o.connector } : {}),
      },
    };
  }

  /** The live session for a bearer secret; NotAuthenticatedError when unknown, expired or revoked. */
  validate(id: string): Promise<WebSession> {
    // Not async itself: one promise per call fewer on every authenticated RPC.
    if (!SESSION_ID_PATTERN.test(id))
      return Promise.reject(new NotAuthenticatedError("invalid or expired session"));
    return this.#validated(hashSecret(id));
  }

  #validated(hash: string): Promise<WebSession> {
    const kept = this.#memo?.get(hash);
    return kept !== undefined ? Promise.resolve(kept) : this.#read(hash);
  }

  async #read(hash: string): Promise<WebSession> {
    const begun = this.#memo?.begin() ?? 0;
    try {
      const item = await this.#backend.get(SESSION_PREFIX + hash);
      const v = item.value as JsonObject;
      // create() stores the same instant as the item's expiry, which the backend hands back as a
      // Date already: no ISO text to parse per call (the value's copy is the fallback).
      const expires = item.expires ?? new Date(String(v["expires"]));
      // The backend hides expired items too; this guards a clock skew between replicas.
      if (expires.getTime() <= this.#clock.now().getTime()) {
        throw new NotAuthenticatedError("invalid or expired session");
      }
      const session: WebSession = {
        username: String(v["username"]),
        hash,
        created: new Date(String(v["created"])),
        expires,
        // Sessions stored before these fields existed passed no second factor.
        mfa: v["mfa"] === true,
        scope: v["scope"] === "mfa_enrollment" ? "mfa_enrollment" : "full",
        ...(typeof v["connector"] === "string" ? { connector: v["connector"] } : {}),
      };
      this.#memo?.keep(hash, session, begun);
      return session;
    } catch (err) {
      if (isNotFound(err)) throw new NotAuthenticatedError("invalid or expired session");
      throw err;
    }
  }

  /** The live session with this hash (neither revoked nor expired), else undefined. */
  async byHash(hash: string): Promise<WebSession | undefined> {
    try {
      return await this.#validated(hash);
    } catch (err) {
      if (isNotFound(err) || err instanceof NotAuthenticatedError) return undefined;
      throw err;
    }
  }

  /** Whether the session with this hash is still live (neither revoked nor expired). */
  async liveByHash(hash: string): Promise<boolean> {
    try {
      const item = await this.#backend.get(SESSION_PREFIX + hash);
      return new Date(String((item.value as JsonObject)["expires"])).getTime() > this.#clock.now().getTime();
    } catch (err) {
      if (isNotFound(err)) return false;
      throw err;
    }
  }

  /** Revokes one session by its hash (logout). */
  async revoke(username: string, hash: string): Promise<void> {
    await this.#backend.delete(SESSION_PREFIX + hash).catch(ignoreNotFound);
    // After the delete: a read under way now is not kept, one that finished is dropped.
    this.#memo?.forget([hash]);
    this.#onRevoked?.(username, [hash]);
    await this.#backend.delete(`${USER_INDEX_PREFIX}${username}/${hash}`).catch(ignoreNotFound);
    await this.#afterRevoked?.(username, [hash]);
  }

  /** Revokes every session of a user (deletion, lock); returns how many were live. */
  async revokeAll(username: string): Promise<number> {
    const index = await this.#backend.range(`${USER_INDEX_PREFIX}${username}/`);
    let n = 0;
    const gone: string[] = [];
    try {
      for (const item of index) {
        const hash = item.key.slice(item.key.lastIndexOf("/") + 1);
        try {
          await this.#backend.delete(SESSION_PREFIX + hash);
          n++;
        } catch (err) {
          ignoreNotFound(err);
        }
        gone.push(hash);
      }
    } finally {
      // Every kept session of the user, also one the index may have missed.
      this.#memo?.forgetUser(username);
      // Told even when a delete failed part way: the ones before it are gone.
      this.#onRevoked?.(username, gone);
    }
    await this.#backend.deleteRange(`${USER_INDEX_PREFIX}${username}/`);
    await this.#afterRevoked?.(username, gone);
    return n;
  }
}

function ignoreNotFound(err: unknown): void {
  if (!isNotFound(err)) throw err;
}
