// App sessions remembered by the proxy (docs/apps.md), keyed by the SHA-256 of the cookie (never
// the id itself). A grant is used for REFRESH_MS, then checked again with GetAppSession (one call
// per session at a time, however many requests wait on it), which also brings a fresh assertion.
// While auth cannot be reached, a cached grant keeps serving until its assertion expires: the app
// would refuse an expired assertion anyway, and the proxy must not mint one. Any answer from auth
// that the session is gone ends it here at once.
import { createHash } from "node:crypto";
import type { Clock } from "../../../core/clock.ts";
import { NotAuthenticatedError, NotFoundError, UnavailableError } from "../../../core/errors.ts";
import type { AppAuthApi, AppGrant } from "./auth-api.ts";
import { TOKEN } from "./cookies.ts";

/** How long a grant from auth is used before GetAppSession is asked again. */
export const REFRESH_MS = 30_000;
/** App sessions remembered (least recently used forgotten first). */
export const DEFAULT_MAX_GRANTS = 50_000;

interface Entry {
  grant: AppGrant;
  /** when auth gave it (clock ms) */
  at: number;
}

export const grantKey = (sessionId: string): string => createHash("sha256").update(sessionId).digest("hex");

/** Whether auth said the session does not exist (any more) for this host: not an outage. */
const gone = (err: unknown): boolean => err instanceof NotFoundError || err instanceof NotAuthenticatedError;

export class AppGrants {
  readonly #api: AppAuthApi;
  readonly #clock: Clock;
  readonly #max: number;
  readonly #refreshMs: number;
  readonly #entries = new Map<string, Entry>();
  /** GetAppSession calls in flight, by key: one per session however many requests wait. */
  readonly #inflight = new Map<string, Promise<AppGrant | undefined>>();
  /** Bumped by every forget: an answer that began before it is used once, not stored. */
  #gen = 0;
  /**
   * Keys auth said are gone (ended, expired, unknown, or access lost), until when (clock ms): a
   * browser still sending the cookie (a page's every request until it logs in again) is answered
   * from here for REFRESH_MS instead of with one GetAppSession each. Not for ever: a session
   * refused because access was lost comes back when access does (within the same 30 s as other
   * changes). Oldest forgotten first.
   */
  readonly #gone = new Map<string, number>();

  constructor(o: { api: AppAuthApi; clock: Clock; maxGrants?: number; refreshMs?: number }) {
    this.#api = o.api;
    this.#clock = o.clock;
    this.#max = Math.max(1, o.maxGrants ?? DEFAULT_MAX_GRANTS);
    this.#refreshMs = o.refreshMs ?? REFRESH_MS;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** Trades a login code for a session on `host`; the grant is remembered under its id's digest. */
  async exchange(code: string, host: string): Promise<AppGrant> {
    if (!TOKEN.test(code)) throw new NotFoundError("app login code is unknown, used or expired");
    const grant = await this.#api.exchangeAppSession(code, host);
    if (!TOKEN.test(grant.sessionId) || grant.publicAddr !== host) {
      throw new Error("auth answered an app login with a malformed session");
    }
    this.#store(grantKey(grant.sessionId), { ...grant, sessionId: "" }, this.#now());
    return grant;
  }

  /**
   * The grant of the session `sessionId` on `host`; undefined when there is none (unknown,
   * expired, ended, or bound to another host). UnavailableError when auth cannot say and nothing
   * cached can answer; AccessDeniedError as auth says it.
   */
  async lookup(sessionId: string, host: string): Promise<AppGrant | undefined> {
    if (!TOKEN.test(sessionId)) return undefined;
    const key = grantKey(sessionId);
    const now = this.#now();
    const goneUntil = this.#gone.get(key);
    if (goneUntil !== undefined) {
      if (now < goneUntil) return undefined;
      this.#gone.delete(key);
    }
    const entry = this.#entries.get(key);
    if (entry) {
      // A cookie replayed on another app host: auth would refuse it too (NOT_FOUND).
      if (entry.grant.publicAddr !== host) return undefined;
      if (entry.grant.expiresMs <= now) {
        this.#entries.delete(key);
        return undefined;
      }
      if (now - entry.at < this.#refreshMs && entry.grant.assertionExpiresMs > now) {
        this.#entries.delete(key);
        this.#entries.set(key, entry);
        return entry.grant;
      }
    }
    return this.#refresh(key, sessionId, host, entry);
  }

  #refresh(
    key: string,
    sessionId: string,
    host: string,
    entry: Entry | undefined,
  ): Promise<AppGrant | undefined> {
    const pending = this.#inflight.get(key);
    if (pending) return pending;
    const asked = this.#now();
    const gen = this.#gen;
    const run = this.#api
      .getAppSession(sessionId, host, { fast: entry !== undefined })
      .then(
        (grant) => {
          if (grant.publicAddr !== host) return undefined;
          // Something was forgotten while auth answered (a logout, a revocation): not stored,
          // so the next request asks again.
          if (gen === this.#gen) this.#store(key, { ...grant, sessionId: "" }, asked);
          return grant;
        },
        (err: unknown) => {
          if (gone(err)) {
            this.#entries.delete(key);
            this.#markGone(key);
            return undefined;
          }
          const current = this.#entries.get(key);
          const outage = err instanceof UnavailableError;
          if (outage && current && current.grant.assertionExpiresMs > this.#now()) return current.grant;
          throw err;
        },
      )
      .finally(() => this.#inflight.delete(key));
    this.#inflight.set(key, run);
    return run;
  }

  /** Forgets a session (logout, a revoked parent session): the next use asks auth. */
  forget(sessionId: string): void {
    if (!TOKEN.test(sessionId)) return;
    this.#gen++;
    this.#entries.delete(grantKey(sessionId));
  }

  /**
   * Makes every remembered grant `which` selects ask auth on its next use (a user deleted,
   * disabled or given other roles; a role changed): access ends at the next request, not within
   * REFRESH_MS. An answer already under way is not stored.
   */
  recheck(which: (g: AppGrant) => boolean): void {
    this.#gen++;
    for (const e of this.#entries.values()) if (which(e.grant)) e.at = Number.NEGATIVE_INFINITY;
  }

  /** Ends a session at auth, forgetting it here first (effective here whatever auth answers). */
  async end(sessionId: string): Promise<void> {
    if (!TOKEN.test(sessionId)) return;
    this.forget(sessionId);
    this.#markGone(grantKey(sessionId));
    try {
      await this.#api.deleteAppSession(sessionId);
    } catch (err) {
      if (!gone(err)) throw err;
    }
  }

  clear(): void {
    this.#entries.clear();
    this.#gone.clear();
  }

  #markGone(key: string): void {
    this.#gone.delete(key);
    this.#gone.set(key, this.#now() + this.#refreshMs);
    if (this.#gone.size > this.#max) {
      const oldest = this.#gone.keys().next().value;
      if (oldest !== undefined) this.#gone.delete(oldest);
    }
  }

  #store(key: string, grant: AppGrant, at: number): void {
    this.#entries.delete(key);
    this.#entries.set(key, { grant, at });
    if (this.#entries.size > this.#max) {
      const oldest = this.#entries.keys().next().value;
      if (oldest !== undefined) this.#entries.delete(oldest);
    }
  }

  #now(): number {
    return this.#clock.now().getTime();
  }
}
