// Web sessions answered from the proxy's memory (docs/proxy-cache.md). The proxy keeps, per
// SHA-256 of a session id (never the id), what GetSession said, and follows WatchSessions:
// "revoked" marks the entry revoked (refused here without asking auth: a revoked session never
// comes back), "user"/"role"/"reset" mark entries to be checked with auth on their next use,
// expiry is honoured locally, and an answer is used at most SESSION_MAX_AGE_MS (then asked
// again). The cache answers only while the stream is live (it has heard a reset or a keepalive
// since it last connected, and not gone silent): otherwise every
// use is checked with auth by RPC, and auth being unreachable is a 503, never a cached answer.
// A logout through this proxy marks its entry revoked before auth is even asked.
import { hash } from "node:crypto";
import type { ServiceError } from "@grpc/grpc-js";
import type { Logger } from "pino";
import { Counter, Gauge, type Registry } from "prom-client";
import type { Clock } from "../../core/clock.ts";
import { NotAuthenticatedError, UnavailableError } from "../../core/errors.ts";
import type { SessionEvent__Output } from "../../proto/generated/svc/v1/SessionEvent.ts";
import { type Backoff, type FeedConnection, FeedSubscription } from "../auth/feed-subscription.ts";
import { layered } from "./api-layers.ts";
import type { AuthApi, SessionInfo } from "./auth-client.ts";

/** What a session-stream event says may have changed for sessions of users (onChange). */
export type SessionChange =
  | { kind: "revoked"; hash: string }
  | { kind: "user"; username: string }
  | { kind: "role"; role: string }
  | { kind: "all" };

/** Sessions remembered (least recently used forgotten first). */
export const DEFAULT_MAX_SESSIONS = 50_000;
/**
 * An answer is used at most this long after auth gave it, then checked again: the bound on a
 * revocation this proxy never hears of (a notification publish that failed on another replica),
 * which would otherwise be answered from memory until the session expired. One GetSession per
 * session in use per minute.
 */
export const SESSION_MAX_AGE_MS = 60_000;
const DEFAULT_KEEPALIVE_SECONDS = 5;
/** A stream silent for this many keepalives is treated as dead (a half-open connection says nothing). */
const SILENT_KEEPALIVES = 3;
// Session ids are base64url of 32 bytes (server/auth/sessions.ts): anything else is refused here,
// without a call to auth and without touching what is cached.
const SESSION_ID = /^[A-Za-z0-9_-]{43}$/;

/** How the stream reaches auth: the proxy's client and its caller metadata ("proxy:<name>"). */
export type SessionStreamSource = FeedConnection;

export interface SessionCacheOptions {
  /** Read at every (re)connect, so an identity reload or a new channel is followed. */
  connection: () => SessionStreamSource;
  clock: Clock;
  logger: Logger;
  /** The proxy's registry: svc_proxy_session_cache_* */
  metrics?: Registry;
  maxSessions?: number;
  /** how long an answer from auth is used (ms); default SESSION_MAX_AGE_MS */
  maxAgeMs?: number;
  /** reconnect backoff: first delay and cap (ms); defaults 100 ms and 5 s */
  backoff?: Backoff;
}

interface Entry {
  info: SessionInfo;
  /** to be checked with auth on next use */
  stale: boolean;
  /** when the GetSession that answered it was sent (clock ms) */
  askedAt: number;
  /**
   * Revoked (logout here, or a "revoked" event): refused here until it would have expired. A
   * session never comes back once revoked, so this answer needs neither auth nor a live stream.
   */
  revoked?: boolean;
}

export type StreamState = "connecting" | "live" | "down" | "stopped";

/** The digest handed down the session check by withSessionDigest, while its call runs. */
let handed: { sessionId: string; digest: string } | undefined;

/**
 * SHA-256 hex of a session id: the key of every per-session map of the proxy (this cache, the
 * lock guard, the inventory copy, the session rate limit). Inside withSessionDigest it is the
 * digest handed down for that id, so one request's layers hash its id once between them.
 */
export function sessionHash(sessionId: string): string {
  if (handed !== undefined && handed.sessionId === sessionId) return handed.digest;
  // One-shot hash: no Hash object per call.
  return hash("sha256", sessionId, "hex");
}

/**
 * Runs `check` with `digest` (sessionHash of `sessionId`, computed once for the request) as the
 * answer of sessionHash(sessionId) for calls made synchronously inside it: the layers of the
 * session check (inventory copy, lock guard, this cache) take their keys before their first
 * await. The id is held only while `check` runs synchronously, never past it, so no other
 * request's check can meet it; the maps still keep only digests.
 */
export function withSessionDigest<T>(sessionId: string, digest: string, check: () => T): T {
  const prior = handed;
  handed = { sessionId, digest };
  try {
    return check();
  } finally {
    handed = prior;
  }
}

export class SessionCache {
  readonly #o: SessionCacheOptions;
  readonly #max: number;
  /** Map order is recency: a hit moves its entry to the end. */
  readonly #entries = new Map<string, Entry>();
  /** The key last set or moved: the last entry of #entries while it is there (every set appends). */
  #newest: string | undefined;
  /** Bumped by everything that may invalidate: a fill that began before it is stored stale. */
  #gen = 0;
  /**
   * Hashes of sessions revoked lately, cached or not (oldest forgotten first): app sessions
   * started from one end with it (revoked()), even when this proxy never cached the parent.
   */
  readonly #revokedHashes = new Set<string>();
  /** Followers of user/role changes the stream reports (the app-session cache). */
  readonly #changeListeners = new Set<(c: SessionChange) => void>();
  #state: StreamState = "stopped";
  #position = "";
  #keepaliveSeconds = DEFAULT_KEEPALIVE_SECONDS;
  #lastEvent = 0;
  readonly #stream: FeedSubscription<SessionEvent__Output>;
  readonly #hits?: Counter;
  readonly #misses?: Counter;
  readonly #events?: Counter<"kind">;

  constructor(o: SessionCacheOptions) {
    this.#o = o;
    this.#max = Math.max(1, o.maxSessions ?? DEFAULT_MAX_SESSIONS);
    const registry = o.metrics;
    let reconnects: Counter | undefined;
    if (registry) {
      const self = this;
      this.#hits = new Counter({
        name: "svc_proxy_session_cache_hits_total",
        help: "Session checks answered from the proxy's session cache",
        registers: [registry],
      });
      this.#misses = new Counter({
        name: "svc_proxy_session_cache_misses_total",
        help: "Session checks sent to auth (not cached, to be checked again, or the session stream not live)",
        registers: [registry],
      });
      this.#events = new Counter({
        name: "svc_proxy_session_stream_events_total",
        help: "WatchSessions events received, by kind",
        labelNames: ["kind"],
        registers: [registry],
      });
      reconnects = new Counter({
        name: "svc_proxy_session_stream_reconnects_total",
        help: "WatchSessions streams that ended or failed and were opened again",
        registers: [registry],
      });
      new Gauge({
        name: "svc_proxy_session_stream_live",
        help: "1 while the WatchSessions stream is live and the cache answers; 0 while every session is checked with auth",
        registers: [registry],
        collect() {
          this.set(self.live ? 1 : 0);
        },
      });
      new Gauge({
        name: "svc_proxy_session_cache_entries",
        help: "Sessions held in the proxy's session cache",
        registers: [registry],
        collect() {
          this.set(self.size);
        },
      });
    }
    this.#stream = new FeedSubscription({
      what: "session stream",
      open: () => {
        const c = this.#o.connection();
        return c.client.WatchSessions({ resume_from: this.#position }, c.metadata());
      },
      message: (e) => this.#receive(e),
      down: (err) => this.#down(err),
      error: (err: ServiceError) => new Error(err.details || err.message),
      backoff: o.backoff ?? { initialMs: 100, maxMs: 5_000 },
      logger: o.logger,
      reconnects,
      watchdog: {
        periodMs: () => this.#keepaliveSeconds * 1000,
        // Live or still waiting for its first event: a half-open connection says nothing either
        // way, and a stream that never goes live would leave every session to RPCs for good.
        check: (every) => {
          const quietSince = Math.max(this.#lastEvent, this.#stream.openedAt);
          return this.#stream.open && Date.now() - quietSince > SILENT_KEEPALIVES * every
            ? new Error("session stream silent past its keepalive")
            : undefined;
        },
      },
    });
  }

  get live(): boolean {
    return this.#state === "live";
  }

  get state(): StreamState {
    return this.#state;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** The last position applied (resume_from of the next connect). */
  get position(): string {
    return this.#position;
  }

  start(): void {
    if (this.#state !== "stopped") return;
    this.#state = "connecting";
    this.#stream.start();
  }

  async close(): Promise<void> {
    this.#state = "stopped";
    this.#stream.stop();
    this.#entries.clear();
  }

  /** `api` with getSession answered from the cache when it may be, and deleteSession dropping the entry first. */
  guard(api: AuthApi): AuthApi {
    const getSession = (sessionId: string): Promise<SessionInfo> => this.getSession(api, sessionId);
    const deleteSession = (sessionId: string): Promise<void> => this.deleteSession(api, sessionId);
    return layered(api, { getSession, deleteSession });
  }

  async getSession(api: Pick<AuthApi, "getSession">, sessionId: string): Promise<SessionInfo> {
    if (!SESSION_ID.test(sessionId)) throw new NotAuthenticatedError("invalid or expired session");
    const key = sessionHash(sessionId);
    const entry = this.#entries.get(key);
    const now = this.#o.clock.now().getTime();
    if (entry && entry.info.expires.getTime() <= now) {
      this.#entries.delete(key);
      throw new NotAuthenticatedError("invalid or expired session");
    }
    if (entry?.revoked) {
      this.#hits?.inc();
      throw new NotAuthenticatedError("invalid or expired session");
    }
    if (
      entry &&
      !entry.stale &&
      this.#state === "live" &&
      now - entry.askedAt < (this.#o.maxAgeMs ?? SESSION_MAX_AGE_MS)
    ) {
      // Moved to the end (recency) unless it is there already: a delete and set on a small Map
      // rehashes it every few calls.
      if (key !== this.#newest) {
        this.#entries.delete(key);
        this.#entries.set(key, entry);
        this.#newest = key;
      }
      this.#hits?.inc();
      return entry.info;
    }
    this.#misses?.inc();
    const gen = this.#gen;
    let info: SessionInfo;
    try {
      info = await api.getSession(sessionId);
    } catch (err) {
      // Auth unreachable: the entry stays (still to be checked); any answer from auth ends it.
      if (!(err instanceof UnavailableError) && !this.#entries.get(key)?.revoked) this.#entries.delete(key);
      throw err;
    }
    // Revoked while auth was answering: that answer is already out of date.
    if (this.#entries.get(key)?.revoked) throw new NotAuthenticatedError("invalid or expired session");
    this.#entries.delete(key);
    this.#entries.set(key, { info, stale: gen !== this.#gen, askedAt: now });
    this.#newest = key;
    if (this.#entries.size > this.#max) {
      const oldest = this.#entries.keys().next().value;
      if (oldest !== undefined) this.#entries.delete(oldest);
    }
    return info;
  }

  /** Logout through this proxy: effective here before auth answers, whatever it answers. */
  async deleteSession(api: Pick<AuthApi, "deleteSession">, sessionId: string): Promise<void> {
    if (SESSION_ID.test(sessionId)) this.forget(sessionHash(sessionId));
    await api.deleteSession(sessionId);
  }

  /** A session is revoked: refused here from now on (kept as revoked while it would have lived). */
  forget(hash: string): void {
    this.#gen++;
    const entry = this.#entries.get(hash);
    if (entry) entry.revoked = true;
    this.#changed({ kind: "revoked", hash });
    this.#revokedHashes.delete(hash);
    this.#revokedHashes.add(hash);
    if (this.#revokedHashes.size > this.#max) {
      const oldest = this.#revokedHashes.values().next().value;
      if (oldest !== undefined) this.#revokedHashes.delete(oldest);
    }
  }

  /**
   * Whether this proxy knows the session with this SHA-256 hex to be revoked (a logout here or a
   * "revoked" event). False means only "not known to be": auth is the one that can say more.
   */
  revoked(hash: string): boolean {
    return this.#entries.get(hash)?.revoked === true || this.#revokedHashes.has(hash);
  }

  /**
   * Runs `fn` for every revocation (here or reported) and every change the stream reports that
   * may end other sessions of a user (the app hosts re-check the same users and close their open
   * WebSockets). Returns the unsubscribe.
   */
  onChange(fn: (c: SessionChange) => void): () => void {
    this.#changeListeners.add(fn);
    return () => this.#changeListeners.delete(fn);
  }

  #changed(c: SessionChange): void {
    for (const fn of this.#changeListeners) {
      try {
        fn(c);
      } catch (err) {
        this.#o.logger.warn({ err }, "a follower of session changes failed");
      }
    }
  }

  #markStale(pred: (e: Entry) => boolean): void {
    this.#gen++;
    for (const e of this.#entries.values()) if (pred(e)) e.stale = true;
  }

  // ---- the stream ----------------------------------------------------------------------------

  #receive(e: SessionEvent__Output): void {
    this.#lastEvent = Date.now();
    this.#events?.inc({ kind: e.kind || "unknown" });
    if (e.keepalive_seconds > 0) this.#keepaliveSeconds = e.keepalive_seconds;
    switch (e.kind) {
      case "revoked":
        this.forget(e.session_hash);
        break;
      case "user":
        this.#markStale((x) => x.info.username === e.username);
        this.#changed({ kind: "user", username: e.username });
        break;
      case "role":
        this.#markStale((x) => x.info.roles.includes(e.role));
        this.#changed({ kind: "role", role: e.role });
        break;
      case "reset":
        this.#markStale(() => true);
        this.#changed({ kind: "all" });
        this.#goLive();
        break;
      case "keepalive":
        this.#goLive();
        break;
      default:
        // An event this proxy does not know may change anything: check everything again.
        this.#markStale(() => true);
        this.#changed({ kind: "all" });
    }
    if (e.position) this.#position = e.position;
  }

  #goLive(): void {
    if (this.#state === "live" || this.#state === "stopped") return;
    this.#state = "live";
    this.#stream.healthy();
    this.#o.logger.info(
      { sessions: this.#entries.size },
      "session stream live: sessions answered from the cache",
    );
  }

  #down(err: Error): void {
    if (this.#state === "stopped") return;
    if (this.#state === "live") {
      this.#o.logger.warn({ err: err.message }, "session stream down: every session is checked with auth");
    }
    this.#state = "down";
    this.#gen++;
  }
}
