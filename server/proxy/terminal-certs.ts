// The terminal's user certificates, held per web session and node (docs/proxy-cache.md, "Terminal
// certificates"). Opening a terminal needs an ephemeral key and a certificate scoped to the node
// (IssueUserCerts); a web session may reuse both for the same node while the certificate has
// enough life left, as a browser session holding one SSH certificate would. Keyed by the SHA-256
// of the session id (never the id), bounded, and dropped at once when the session stream says the
// session ended or its user's roles, user record or locks changed. Reused only while the session
// stream is live (otherwise an event could have been missed). Nothing here decides access: the
// session check, the per-node decision and the node's own decision run on every open.
import type { Clock } from "../../core/clock.ts";
import type { SessionInfo } from "./auth-client.ts";
import { type SessionCache, type SessionChange, sessionHash } from "./session-cache.ts";
import type { UserCertificate } from "./terminal-auth.ts";

/** Certificates held at most (least recently used dropped first). */
export const DEFAULT_MAX_CERTS = 10_000;
/** A certificate is reused only while at least this much of it is left (or a quarter of its life, if more). */
export const MIN_REMAINING_MS = 60_000;

export interface TerminalCredential {
  /** the ephemeral private key, OpenSSH PEM (what ssh2 reads) */
  privateKey: string;
  cert: UserCertificate;
}

export interface TerminalCertsOptions {
  clock: Clock;
  /** The proxy's session cache: its events drop entries, and reuse needs its stream live. */
  sessions: Pick<SessionCache, "onChange" | "live">;
  maxEntries?: number;
  minRemainingMs?: number;
}

interface Entry {
  username: string;
  roles: readonly string[];
  sessionHash: string;
  /** when the certificate was issued (clock ms): its life is validBefore minus this */
  issuedAt: number;
  credential: TerminalCredential;
}

interface Pending {
  promise: Promise<TerminalCredential>;
  /** cleared when an event says the answer may be out of date before it arrives */
  storable: boolean;
}

export class TerminalCerts {
  readonly #o: TerminalCertsOptions;
  readonly #max: number;
  readonly #minRemaining: number;
  /** Map order is recency: a hit moves its entry to the end. */
  readonly #entries = new Map<string, Entry>();
  /** Issues in flight, shared by opens of the same session and node. */
  readonly #pending = new Map<string, Pending>();
  readonly #unsubscribe: () => void;

  constructor(o: TerminalCertsOptions) {
    this.#o = o;
    this.#max = Math.max(1, o.maxEntries ?? DEFAULT_MAX_CERTS);
    this.#minRemaining = o.minRemainingMs ?? MIN_REMAINING_MS;
    this.#unsubscribe = o.sessions.onChange((c) => this.#changed(c));
  }

  get size(): number {
    return this.#entries.size;
  }

  /**
   * The key and certificate for `session` (already checked by the caller) on `nodeId`: a held one
   * with enough life left, or `issue()`'s, which is held for the next open. `reused` says which.
   */
  async obtain(
    session: { sessionId: string; info: Pick<SessionInfo, "username" | "roles"> },
    nodeId: string,
    issue: () => Promise<TerminalCredential>,
  ): Promise<{ credential: TerminalCredential; reused: boolean }> {
    const hash = sessionHash(session.sessionId);
    // The node ID cannot hold a NUL: the two parts cannot run into each other.
    const key = `${hash}\0${nodeId}`;
    const now = this.#o.clock.now().getTime();
    const held = this.#entries.get(key);
    if (held) {
      if (this.#o.sessions.live && held.username === session.info.username && this.#fresh(held, now)) {
        this.#entries.delete(key);
        this.#entries.set(key, held);
        return { credential: held.credential, reused: true };
      }
      this.#entries.delete(key);
    }
    const inFlight = this.#pending.get(key);
    if (inFlight && this.#o.sessions.live) return { credential: await inFlight.promise, reused: true };
    const pending: Pending = { promise: issue(), storable: true };
    this.#pending.set(key, pending);
    try {
      const credential = await pending.promise;
      if (pending.storable) {
        this.#entries.set(key, {
          username: session.info.username,
          roles: [...session.info.roles],
          sessionHash: hash,
          issuedAt: now,
          credential,
        });
        if (this.#entries.size > this.#max) {
          const oldest = this.#entries.keys().next().value;
          if (oldest !== undefined) this.#entries.delete(oldest);
        }
      }
      return { credential, reused: false };
    } finally {
      if (this.#pending.get(key) === pending) this.#pending.delete(key);
    }
  }

  /** A held credential did not work (the node refused it, host CA moved): the next open asks again. */
  drop(sessionId: string, nodeId: string): void {
    const key = `${sessionHash(sessionId)}\0${nodeId}`;
    this.#entries.delete(key);
    const p = this.#pending.get(key);
    if (p) p.storable = false;
    this.#pending.delete(key);
  }

  close(): void {
    this.#unsubscribe();
    this.#entries.clear();
    for (const p of this.#pending.values()) p.storable = false;
    this.#pending.clear();
  }

  #fresh(e: Entry, now: number): boolean {
    const validBefore = e.credential.cert.validBefore.getTime();
    const life = validBefore - e.issuedAt;
    return validBefore - now >= Math.max(this.#minRemaining, life / 4);
  }

  #changed(c: SessionChange): void {
    const hit = (e: Entry): boolean =>
      c.kind === "all" ||
      (c.kind === "revoked" && e.sessionHash === c.hash) ||
      (c.kind === "user" && e.username === c.username) ||
      (c.kind === "role" && e.roles.includes(c.role));
    for (const [key, e] of this.#entries) if (hit(e)) this.#entries.delete(key);
    // An issue in flight was asked before this event: its answer may already be out of date, so
    // it is neither held nor shared with opens that start from now on.
    for (const p of this.#pending.values()) p.storable = false;
    this.#pending.clear();
  }
}
