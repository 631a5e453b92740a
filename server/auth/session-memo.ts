// Sessions auth has just read, kept for a few seconds so that a burst of calls with one session
// (a proxy asking for certificates, a CLI listing, a console page) reads the backend once, not per
// call. On PostgreSQL each read is a round trip that cost auth ~70 us and the server ~100 us of
// CPU per call (bench auth.bench with SVC_BENCH_AUTH_BACKEND=postgres).
//
// What keeps it as safe as reading every time (docs/auth.md "Sessions"):
// - A revocation on this replica drops its sessions here before the call that made it answers.
// - A revocation on another replica arrives through the backend's notifications (the same ones
//   the session feed passes to proxies) and drops them here when it arrives.
// - Entries are trusted only while this replica hears those notifications; when the listening
//   connection is lost everything kept is dropped and every call reads the backend again, until
//   the connection is back.
// - Nothing is kept longer than `maxAgeMs` (default 5 s): the bound even when a notification is
//   lost without the connection being seen to drop.
// - A read that was under way while a revocation arrived is not kept: it may predate it.
import type { WebSession } from "./sessions.ts";

export const SESSION_MEMO_MAX_AGE_MS = 5_000;
export const SESSION_MEMO_MAX_ENTRIES = 10_000;

export interface SessionMemoOptions {
  /** Milliseconds now (the auth service's clock). */
  now: () => number;
  /** How long a read session answers from here at most. 0 keeps nothing. */
  maxAgeMs?: number;
  /** Sessions kept at most; the oldest goes first. */
  maxEntries?: number;
}

export class SessionMemo {
  readonly #now: () => number;
  readonly #maxAgeMs: number;
  readonly #maxEntries: number;
  /** Insertion order is age order: every entry lives the same time. */
  readonly #entries = new Map<string, { session: WebSession; until: number }>();
  #trusted = false;
  /** Bumped by every revocation and every change of trust: a read begun before is not kept. */
  #generation = 0;

  constructor(o: SessionMemoOptions) {
    this.#now = o.now;
    this.#maxAgeMs = Math.max(0, o.maxAgeMs ?? SESSION_MEMO_MAX_AGE_MS);
    this.#maxEntries = Math.max(1, o.maxEntries ?? SESSION_MEMO_MAX_ENTRIES);
  }

  /** Whether revocations from every replica are heard now; either way, what was kept is dropped. */
  setTrusted(on: boolean): void {
    this.#trusted = on;
    this.#entries.clear();
    this.#generation++;
  }

  get trusted(): boolean {
    return this.#trusted;
  }

  /** Sessions kept now (metrics, tests). */
  get size(): number {
    return this.#entries.size;
  }

  /** These sessions were revoked (here or on another replica). */
  forget(hashes: Iterable<string>): void {
    for (const h of hashes) this.#entries.delete(h);
    this.#generation++;
  }

  /** Every session of this user was revoked. */
  forgetUser(username: string): void {
    for (const [h, e] of this.#entries) if (e.session.username === username) this.#entries.delete(h);
    this.#generation++;
  }

  /** The kept session for this hash, unless it is too old or has expired. */
  get(hash: string): WebSession | undefined {
    const e = this.#entries.get(hash);
    if (e === undefined) return undefined;
    const now = this.#now();
    if (e.until > now && e.session.expires.getTime() > now) return e.session;
    this.#entries.delete(hash);
    return undefined;
  }

  /** Call before reading a session from the backend; hand the result to keep(). */
  begin(): number {
    return this.#generation;
  }

  /** Keeps a session read from the backend, if nothing was revoked since `begun` and trust holds. */
  keep(hash: string, session: WebSession, begun: number): void {
    if (!this.#trusted || begun !== this.#generation || this.#maxAgeMs === 0) return;
    this.#entries.delete(hash);
    if (this.#entries.size >= this.#maxEntries) {
      const oldest = this.#entries.keys().next();
      if (!oldest.done) this.#entries.delete(oldest.value);
    }
    this.#entries.set(hash, { session, until: this.#now() + this.#maxAgeMs });
  }
}
