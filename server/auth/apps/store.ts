// App sessions (docs/apps.md): what the proxy forwards an app host's requests under. The backend
// keeps only SHA-256 hashes of the two secrets: the one-time code the launch page hands to the app
// host (a record of its own, 60 s, consumed by a compare-and-delete so exactly one exchange wins)
// and the session ID the app host's cookie carries (created by that exchange). Two indexes, by web
// session and by user, let a web logout, revokeAll or a user's own LogoutApps end them. Every end
// (logout, cascade, expiry) is a compare-and-delete of the record: the one caller that wins writes
// the app.session.end event, so replicas sharing a backend never record an end twice.
import type { Backend, Item } from "../../../core/backend/backend.ts";
import type { Clock } from "../../../core/clock.ts";
import {
  BadParameterError,
  isCompareFailed,
  isNotFound,
  LimitExceededError,
  NotFoundError,
} from "../../../core/errors.ts";
import type { JsonObject } from "../../../core/json.ts";
import type { Traits } from "../../../core/rbac/index.ts";
import { hashSecret, randomSecret } from "../sessions.ts";

export const CODE_TTL_MS = 60_000;
/**
 * How long a record outlives its logical expiry in the backend: the sweeper must still see it to
 * write its end event; a backend left without any sweeper for this long drops it silently.
 */
const SWEEP_GRACE_MS = 24 * 60 * 60 * 1000;

/**
 * Codes of one user not yet spent nor expired: each is a backend record, so a script asking for
 * codes in a loop is refused past this (a person launches a few apps a minute).
 */
export const MAX_PENDING_CODES_PER_USER = 32;
/**
 * App sessions one user holds; a new one past this ends the user's oldest (reason "limit"), so
 * records stay bounded however many logins a script makes within one web session.
 */
export const MAX_SESSIONS_PER_USER = 256;

const CODE_PREFIX = "app-codes/";
const CODES_BY_USER_PREFIX = "app-codes-user/";
const SESSION_PREFIX = "app-sessions/";
const BY_WEB_PREFIX = "app-sessions-web/";
const BY_USER_PREFIX = "app-sessions-user/";

/** Codes and session IDs: base64url of 32 random bytes; anything else never reaches the backend. */
const SECRET_PATTERN = /^[A-Za-z0-9_-]{43}$/;

export type EndReason = "logout" | "expired" | "web_session_ended" | "limit";

/** Who the session is for and what it reaches; the same in the code record and the session. */
export interface AppSessionSubject {
  username: string;
  /** The user's roles when the session was created (the grant re-decides with today's). */
  roles: string[];
  traits: Traits;
  app: string;
  publicAddr: string;
  /** SHA-256 hex of the web session it was made from. */
  webSessionHash: string;
  /** = the web session's expiry, never later. */
  expires: Date;
}

export interface AppSession extends AppSessionSubject {
  hash: string;
  created: Date;
}

/** Short reference of a session for audit events and logs (never the ID, never the whole hash). */
export const sessionRef = (hash: string): string => hash.slice(0, 8);

/** Throws BadParameterError unless `secret` is shaped like one of ours (before any backend read). */
export function checkSecret(secret: string, what: string): void {
  if (secret === "") throw new BadParameterError(`${what} is required`);
  if (!SECRET_PATTERN.test(secret)) throw new BadParameterError(`${what} is malformed`);
}

function subjectToJson(s: AppSessionSubject): JsonObject {
  const traits: JsonObject = {};
  for (const [k, v] of Object.entries(s.traits)) traits[k] = [...v];
  return {
    username: s.username,
    roles: [...s.roles],
    traits,
    app: s.app,
    public_addr: s.publicAddr,
    web_session_hash: s.webSessionHash,
    expires: s.expires.toISOString(),
  };
}

function subjectFromJson(v: JsonObject): AppSessionSubject {
  const traits: Record<string, string[]> = {};
  const t = v["traits"];
  if (t && typeof t === "object" && !Array.isArray(t)) {
    for (const [k, vals] of Object.entries(t)) if (Array.isArray(vals)) traits[k] = vals.map(String);
  }
  return {
    username: String(v["username"]),
    roles: Array.isArray(v["roles"]) ? v["roles"].map(String) : [],
    traits,
    app: String(v["app"]),
    publicAddr: String(v["public_addr"]),
    webSessionHash: String(v["web_session_hash"]),
    expires: new Date(String(v["expires"])),
  };
}

/** Told once per session that ended, by the caller whose delete won. */
export type OnEnded = (session: AppSession, reason: EndReason) => Promise<void>;

export class AppSessionStore {
  readonly #backend: Backend;
  readonly #clock: Clock;
  readonly #onEnded: OnEnded;

  constructor(deps: { backend: Backend; clock: Clock; onEnded: OnEnded }) {
    this.#backend = deps.backend;
    this.#clock = deps.clock;
    this.#onEnded = deps.onEnded;
  }

  /** A one-time code for `subject` (60 s, never past the session's expiry); the only copy. */
  async createCode(subject: AppSessionSubject): Promise<{ code: string; expires: Date }> {
    const now = this.#clock.now().getTime();
    const expires = new Date(Math.min(now + CODE_TTL_MS, subject.expires.getTime()));
    if (expires.getTime() <= now) throw new NotFoundError("the web session has expired");
    const pending = await this.#backend.range(`${CODES_BY_USER_PREFIX}${subject.username}/`);
    if (pending.length >= MAX_PENDING_CODES_PER_USER)
      throw new LimitExceededError("too many app logins under way; try again in a minute", {
        retryAfterSeconds: CODE_TTL_MS / 1000,
      });
    const code = randomSecret(32);
    const hash = hashSecret(code);
    await this.#backend.createAll([
      {
        key: CODE_PREFIX + hash,
        value: { ...subjectToJson(subject), code_expires: expires.toISOString() },
        opts: { expires },
      },
      { key: `${CODES_BY_USER_PREFIX}${subject.username}/${hash}`, value: {}, opts: { expires } },
    ]);
    return { code, expires };
  }

  /**
   * Trades a code for a new session, once: NOT_FOUND for an unknown, spent or expired code and
   * for a code issued for another host (which stays usable on its own host). `admit` decides on
   * the spent code's subject before any session exists (its throw is the answer).
   */
  async exchange<T>(
    code: string,
    publicAddr: string,
    admit: (subject: AppSessionSubject) => Promise<T>,
  ): Promise<{ id: string; session: AppSession; admitted: T }> {
    checkSecret(code, "code");
    const key = CODE_PREFIX + hashSecret(code);
    let item: Item;
    try {
      item = await this.#backend.get(key);
    } catch (err) {
      if (isNotFound(err)) throw new NotFoundError("unknown or used code");
      throw err;
    }
    const v = item.value as JsonObject;
    const subject = subjectFromJson(v);
    const now = this.#clock.now().getTime();
    // The backend hides expired items too; this guards a clock skew between replicas.
    if (new Date(String(v["code_expires"])).getTime() <= now || subject.publicAddr !== publicAddr)
      throw new NotFoundError("unknown or used code");
    try {
      // The single use: of two exchanges racing, one deletes this revision, the other fails here.
      await this.#backend.compareAndDelete(key, item.revision);
    } catch (err) {
      if (isNotFound(err) || isCompareFailed(err)) throw new NotFoundError("unknown or used code");
      throw err;
    }
    await this.#backend
      .delete(`${CODES_BY_USER_PREFIX}${subject.username}/${hashSecret(code)}`)
      .catch((err: unknown) => {
        if (!isNotFound(err)) throw err;
      });
    if (subject.expires.getTime() <= now) throw new NotFoundError("unknown or used code");
    const admitted = await admit(subject);
    await this.#makeRoom(subject.username);
    const id = randomSecret(32);
    const hash = hashSecret(id);
    const created = this.#clock.now();
    const keep = { expires: new Date(subject.expires.getTime() + SWEEP_GRACE_MS) };
    await this.#backend.createAll([
      {
        key: SESSION_PREFIX + hash,
        value: { ...subjectToJson(subject), created: created.toISOString() },
        opts: keep,
      },
      { key: `${BY_WEB_PREFIX}${subject.webSessionHash}/${hash}`, value: { hash }, opts: keep },
      { key: `${BY_USER_PREFIX}${subject.username}/${hash}`, value: { hash }, opts: keep },
    ]);
    return { id, session: { ...subject, hash, created }, admitted };
  }

  /** Ends the user's oldest sessions so that one more stays within MAX_SESSIONS_PER_USER. */
  async #makeRoom(username: string): Promise<void> {
    const held = await this.ofUser(username);
    const over = held.length - (MAX_SESSIONS_PER_USER - 1);
    if (over <= 0) return;
    held.sort((a, b) => a.created.getTime() - b.created.getTime());
    for (const s of held.slice(0, over)) await this.end(s.hash, "limit");
  }

  /** The live session of an ID (NOT_FOUND when unknown or expired). */
  async get(id: string): Promise<AppSession> {
    checkSecret(id, "session_id");
    const s = (await this.#read(hashSecret(id)))?.session;
    if (!s || s.expires.getTime() <= this.#clock.now().getTime())
      throw new NotFoundError("unknown or expired app session");
    return s;
  }

  async #read(hash: string): Promise<{ session: AppSession; revision: number } | undefined> {
    try {
      const item = await this.#backend.get(SESSION_PREFIX + hash);
      const v = item.value as JsonObject;
      return {
        session: { ...subjectFromJson(v), hash, created: new Date(String(v["created"])) },
        revision: item.revision,
      };
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  /**
   * Ends the session with this hash; true when this call ended it (and told onEnded), false when
   * it was already gone or another caller ended it first.
   */
  async end(hash: string, reason: EndReason): Promise<boolean> {
    const r = await this.#read(hash);
    if (!r) return false;
    return this.#endRead(r.session, r.revision, reason);
  }

  async #endRead(session: AppSession, revision: number, reason: EndReason): Promise<boolean> {
    try {
      await this.#backend.compareAndDelete(SESSION_PREFIX + session.hash, revision);
    } catch (err) {
      if (isNotFound(err) || isCompareFailed(err)) return false;
      throw err;
    }
    await this.#dropIndexes(session);
    await this.#onEnded(session, reason);
    return true;
  }

  async #dropIndexes(s: AppSession): Promise<void> {
    for (const key of [
      `${BY_WEB_PREFIX}${s.webSessionHash}/${s.hash}`,
      `${BY_USER_PREFIX}${s.username}/${s.hash}`,
    ]) {
      await this.#backend.delete(key).catch((err: unknown) => {
        if (!isNotFound(err)) throw err;
      });
    }
  }

  /** The user's sessions (live or not yet swept), optionally of one app. */
  async ofUser(username: string): Promise<AppSession[]> {
    const out: AppSession[] = [];
    for (const item of await this.#backend.range(`${BY_USER_PREFIX}${username}/`)) {
      const r = await this.#read(item.key.slice(item.key.lastIndexOf("/") + 1));
      if (r) out.push(r.session);
    }
    return out;
  }

  /** Ends every app session made from these web sessions; returns how many this call ended. */
  async endForWebSessions(webHashes: readonly string[]): Promise<number> {
    let n = 0;
    for (const web of webHashes) {
      for (const item of await this.#backend.range(`${BY_WEB_PREFIX}${web}/`)) {
        if (await this.end(item.key.slice(item.key.lastIndexOf("/") + 1), "web_session_ended")) n++;
      }
    }
    return n;
  }

  /** Ends the sessions past their expiry (reason "expired"); returns how many this call ended. */
  async sweep(): Promise<number> {
    const now = this.#clock.now().getTime();
    let n = 0;
    for (const item of await this.#backend.range(SESSION_PREFIX)) {
      const v = item.value as JsonObject;
      if (new Date(String(v["expires"])).getTime() > now) continue;
      const hash = item.key.slice(SESSION_PREFIX.length);
      const session = { ...subjectFromJson(v), hash, created: new Date(String(v["created"])) };
      if (await this.#endRead(session, item.revision, "expired")) n++;
    }
    return n;
  }
}
