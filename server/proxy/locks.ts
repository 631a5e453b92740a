// Locks enforced at the proxy (docs/locks.md, "Enforcement at nodes and proxies"): a locked
// user's web session is refused from the last trust snapshot, without a round trip to auth when
// the proxy has seen that session before, and their open browser terminals and `svc ssh` node
// streams are closed with the lock's message as soon as the snapshot naming the lock arrives.
import type { Logger } from "pino";
import type { Registry } from "prom-client";
import type { Clock } from "../../core/clock.ts";
import { AccessDeniedError } from "../../core/errors.ts";
import { type LockRecord, type LockSubject, lockCovering, printableMessage } from "../../core/locks/lock.ts";
import type { AuthConnection } from "../auth/client.ts";
import { TrustWatcher } from "../trust/watcher.ts";
import { layered } from "./api-layers.ts";
import type { AuthApi, SessionInfo } from "./auth-client.ts";
import { sessionHash } from "./session-cache.ts";

/** Sessions whose user the proxy remembers (oldest forgotten first); only a fast path. */
const REMEMBERED_SESSIONS = 10_000;

/** Something open for a user (a terminal, a node stream) that the proxy can end with a message. */
interface Tracked {
  subject: LockSubject;
  close: (message: string) => void;
}

export function lockedMessage(lock: LockRecord, user: string): string {
  const base = `user ${JSON.stringify(user)} is locked`;
  return lock.message ? `${base}: ${printableMessage(lock.message)}` : `${base} (lock ${lock.name})`;
}

const subjectOf = (info: Pick<SessionInfo, "username" | "roles">): LockSubject => ({
  user: info.username,
  roles: info.roles,
});

export interface ProxyLocksOptions {
  watcher: TrustWatcher;
  clock: Clock;
  logger: Logger;
}

export class ProxyLocks {
  readonly #o: ProxyLocksOptions;
  readonly #sessions = new Map<string, LockSubject>();
  /** The entry set last (the last of #sessions while it is there) and the answer it was made from. */
  #newest: { key: string; info: SessionInfo } | undefined;
  readonly #open = new Set<Tracked>();
  readonly #onSnapshot = (): void => {
    this.enforce();
  };

  constructor(o: ProxyLocksOptions) {
    this.#o = o;
    o.watcher.on("snapshot", this.#onSnapshot);
  }

  #covering(subject: LockSubject): LockRecord | undefined {
    const locks = this.#o.watcher.current()?.locks;
    if (!locks || locks.length === 0) return undefined;
    return lockCovering(locks, subject, this.#o.clock.now());
  }

  /** Throws AccessDeniedError with the lock's message when a lock covers this session's user. */
  check(info: Pick<SessionInfo, "username" | "roles">): void {
    const lock = this.#covering(subjectOf(info));
    if (lock) throw new AccessDeniedError(lockedMessage(lock, info.username));
  }

  /**
   * The session check with locks in front: a session whose user the proxy already knows is
   * refused at once when locked, auth is not asked; any other is checked on auth's answer.
   * The session itself is left alone (the cookie stays): when the lock goes, it works again.
   */
  guardSessions(api: AuthApi): AuthApi {
    const getSession = async (sessionId: string): Promise<SessionInfo> => {
      // The session id is a bearer secret: the proxy keeps only its digest.
      const key = sessionHash(sessionId);
      const known = this.#sessions.get(key);
      if (known?.user !== undefined) {
        const lock = this.#covering(known);
        if (lock) throw new AccessDeniedError(lockedMessage(lock, known.user));
      }
      const info = await api.getSession(sessionId);
      // The session cache hands out one answer object while it holds: the same answer for the
      // entry set last leaves the Map alone (a delete and set per request rehashes a small Map).
      if (this.#newest?.key !== key || this.#newest.info !== info || !this.#sessions.has(key)) {
        this.#sessions.delete(key);
        this.#sessions.set(key, subjectOf(info));
        this.#newest = { key, info };
        if (this.#sessions.size > REMEMBERED_SESSIONS) {
          const oldest = this.#sessions.keys().next().value;
          if (oldest !== undefined) this.#sessions.delete(oldest);
        }
      }
      this.check(info);
      return info;
    };
    return layered(api, { getSession });
  }

  /**
   * Registers something open for this session's user; `close` is called (once) with the message
   * when a lock covers them, at once if one does already. Returns the release for when it ends.
   */
  track(info: Pick<SessionInfo, "username" | "roles">, close: (message: string) => void): () => void {
    const subject = subjectOf(info);
    let done = false;
    const entry: Tracked = {
      subject,
      close: (message) => {
        if (done) return;
        done = true;
        this.#open.delete(entry);
        close(message);
      },
    };
    const lock = this.#covering(subject);
    if (lock) {
      entry.close(lockedMessage(lock, info.username));
      return () => {};
    }
    this.#open.add(entry);
    return () => {
      done = true;
      this.#open.delete(entry);
    };
  }

  /** Open terminals and node streams now. */
  get openCount(): number {
    return this.#open.size;
  }

  /** Closes everything open that a lock covers now; returns how many. */
  enforce(): number {
    let n = 0;
    for (const t of [...this.#open]) {
      const lock = this.#covering(t.subject);
      if (!lock) continue;
      n++;
      t.close(lockedMessage(lock, t.subject.user ?? ""));
    }
    if (n > 0) this.#o.logger.info({ closed: n }, "terminals of locked users closed");
    return n;
  }

  close(): void {
    this.#o.watcher.off("snapshot", this.#onSnapshot);
  }
}

export interface ProxyTrust {
  watcher: TrustWatcher;
  locks: ProxyLocks;
  close(): Promise<void>;
}

/**
 * The proxy's trust feed: WatchTrust as "proxy:<name>" over the proxy's shared connection to auth
 * (`connection()` is read at every (re)connect, so an identity reload is followed), and lock
 * enforcement on it. Metrics under svc_proxy_trust_* in `metrics`. The connection is the caller's:
 * it is not closed here.
 */
export function startProxyTrust(o: {
  connection: () => AuthConnection;
  clock: Clock;
  logger: Logger;
  metrics?: Registry;
}): ProxyTrust {
  const watcher = new TrustWatcher({
    client: () => o.connection().client,
    metadata: () => o.connection().metadata(),
    clock: o.clock,
    logger: o.logger,
    ...(o.metrics ? { metrics: o.metrics } : {}),
    component: "proxy",
  });
  const locks = new ProxyLocks({ watcher, clock: o.clock, logger: o.logger });
  watcher.start();
  return {
    watcher,
    locks,
    async close() {
      locks.close();
      await watcher.close();
    },
  };
}
