// WatchSessions (docs/proxy-cache.md): what a proxy needs to answer web sessions from memory.
// Every change that can make a cached session answer differently is one event: "revoked" (a
// session's hash: logout, revocation, user deleted or disabled, password reset), "user" (a user
// changed, was deleted or locked), "role" (a role changed). Revocations happen on whichever
// replica handled the call, so they also go to every other replica through the backend's change
// notifications (PostgreSQL LISTEN/NOTIFY); resource and lock changes are seen by every replica
// from its own source. Events are numbered "<epoch>:<seq>" and kept in a bounded ring, so a proxy
// that reconnects resumes where it was; a position this process cannot replay (another replica,
// a restart, a gap in the notifications) gets "reset". A keepalive follows the replay and then
// comes every keepalive_seconds: a proxy trusts its cache only while it hears them.
import { randomBytes } from "node:crypto";
import type { ServerWritableStream } from "@grpc/grpc-js";
import type { Logger } from "pino";
import type { Backend } from "../../core/backend/backend.ts";
import { LimitExceededError, UnavailableError } from "../../core/errors.ts";
import type { LockRecord } from "../../core/locks/lock.ts";
import type { ResourceSource } from "../../core/sources/source.ts";
import type { SessionEvent } from "../../proto/generated/svc/v1/SessionEvent.ts";
import type { WatchSessionsRequest__Output } from "../../proto/generated/svc/v1/WatchSessionsRequest.ts";
import { type Caller, callerLabel } from "./caller.ts";
import {
  admit,
  assertProxyCaller,
  type FeedStream,
  FeedStreams,
  MAX_STREAMS_PER_CALLER,
} from "./feed-streams.ts";

export const SESSION_FEED_CHANNEL = "svc_sessions";
export const DEFAULT_SESSION_KEEPALIVE_SECONDS = 5;
const DEFAULT_RING = 8_192;
/** Hashes per notification: ~70 bytes each keeps a payload under the backend's bound. */
const HASHES_PER_NOTIFY = 90;
/** A stream that cannot take this much buffered output is ended; its proxy resumes or resets. */
const MAX_BUFFERED_BYTES = 1 << 20;
const HASH = /^[0-9a-f]{64}$/;

type Stream = ServerWritableStream<WatchSessionsRequest__Output, SessionEvent>;
type Change = Required<Pick<SessionEvent, "kind">> & Pick<SessionEvent, "session_hash" | "username" | "role">;

type Watcher = FeedStream<Stream>;

export interface SessionFeedOptions {
  backend: Pick<Backend, "publish" | "subscribe">;
  logger: Logger;
  keepaliveSeconds?: number;
  /** Events kept for resuming. */
  ringSize?: number;
  /**
   * Told what this replica's own memory of sessions must follow (session-memo.ts): revocations
   * heard from other replicas, and whether they are heard at all now.
   */
  observer?: { revoked(hashes: string[]): void; listening(on: boolean): void };
}

/** Only proxies watch sessions; nodes, bots, users and anonymous callers are refused. */
export function assertMayWatchSessions(caller: Caller): void {
  assertProxyCaller(caller, "WatchSessions");
}

export class SessionFeed {
  readonly #o: SessionFeedOptions;
  readonly #keepaliveSeconds: number;
  readonly #ringSize: number;
  /** Who published a notification: this process's own are already applied. */
  readonly #origin = randomBytes(8).toString("hex");
  /** Changes whenever the event history here stops being complete. */
  #epoch = randomBytes(6).toString("hex");
  #seq = 0;
  #ring: SessionEvent[] = [];
  readonly #watchers = new FeedStreams<Watcher>({
    maxPerCaller: MAX_STREAMS_PER_CALLER,
    limitMessage: (max) => `at most ${max} session streams per identity`,
  });
  #listening = false;
  #unsubscribe: (() => Promise<void>) | undefined;
  readonly #unfollow: Array<() => void> = [];
  #closed = false;

  constructor(o: SessionFeedOptions) {
    this.#o = o;
    this.#keepaliveSeconds = Math.max(1, Math.round(o.keepaliveSeconds ?? DEFAULT_SESSION_KEEPALIVE_SECONDS));
    this.#ringSize = Math.max(16, o.ringSize ?? DEFAULT_RING);
    void this.#subscribe();
  }

  /** The position after the last event ("<epoch>:<seq>"). */
  get position(): string {
    return `${this.#epoch}:${this.#seq}`;
  }

  /** Open streams (diagnostics, tests). */
  get watchers(): number {
    return this.#watchers.size;
  }

  /** Sessions were revoked here (after the backend no longer holds them): every replica hears it. */
  revoked(username: string, hashes: readonly string[]): void {
    if (hashes.length === 0) return;
    for (const h of hashes) this.#apply({ kind: "revoked", session_hash: h, username });
    for (let i = 0; i < hashes.length; i += HASHES_PER_NOTIFY) {
      const payload = JSON.stringify({
        o: this.#origin,
        u: username,
        h: hashes.slice(i, i + HASHES_PER_NOTIFY),
      });
      void this.#publish(payload, username);
    }
  }

  /** A few tries: a replica that misses it keeps answering that session from proxy caches. */
  async #publish(payload: string, username: string): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await this.#o.backend.publish(SESSION_FEED_CHANNEL, payload);
        return;
      } catch (err) {
        if (attempt >= 3 || this.#closed) {
          this.#o.logger.error(
            { err, user: username },
            "publishing a session revocation to other replicas failed",
          );
          return;
        }
        await new Promise((r) => setTimeout(r, 50 * attempt));
      }
    }
  }

  /** A user changed, was deleted or locked: its sessions must be checked again. */
  user(username: string): void {
    this.#apply({ kind: "user", username });
  }

  /** A role changed: sessions holding it must be checked again. */
  role(role: string): void {
    this.#apply({ kind: "role", role });
  }

  /**
   * Users and roles as this replica's source sees them (every replica sees the same changes), and
   * locks: a user or role a lock covers now is checked again (the proxy also refuses it at once
   * from its trust feed; this drops what it cached about the session).
   */
  follow(
    source: Pick<ResourceSource, "subscribe">,
    locks: { inForce(): LockRecord[]; onChange(fn: () => void): () => void },
  ): void {
    this.#unfollow.push(
      source.subscribe((e) => {
        if (e.resource.kind === "User") this.user(e.resource.metadata.name);
        else if (e.resource.kind === "Role") this.role(e.resource.metadata.name);
      }),
      locks.onChange(() => {
        for (const l of locks.inForce()) {
          if ("user" in l.target) this.user(l.target.user);
          else if ("role" in l.target) this.role(l.target.role);
        }
      }),
    );
  }

  serve(call: Stream, caller: Caller): void {
    const admitted = admit(call, () => {
      assertMayWatchSessions(caller);
      if (this.#closed) throw new UnavailableError("auth is shutting down");
      if (!this.#listening) throw new UnavailableError("auth does not hear session changes right now");
    });
    if (!admitted) return;
    const w: Watcher = { call, who: callerLabel(caller) };
    this.#watchers.add(w, this.#keepaliveSeconds * 1000, (x) => this.#write(x, this.#keepalive()));
    const replay = this.#replayFrom(call.request?.resume_from ?? "");
    if (replay === undefined) {
      this.#write(w, { kind: "reset", position: this.position, keepalive_seconds: this.#keepaliveSeconds });
    } else {
      for (const e of replay) this.#write(w, e);
      // The keepalive says "caught up": the proxy trusts its cache from here on.
      this.#write(w, this.#keepalive());
    }
  }

  /** Ends every stream (OK status) and stops listening: auth is shutting down. */
  async close(): Promise<void> {
    this.#closed = true;
    if (this.#listening) {
      this.#listening = false;
      this.#o.observer?.listening(false);
    }
    for (const off of this.#unfollow.splice(0)) off();
    this.#watchers.endAll();
    const off = this.#unsubscribe;
    this.#unsubscribe = undefined;
    await off?.().catch(() => undefined);
  }

  async #subscribe(): Promise<void> {
    try {
      const off = await this.#o.backend.subscribe(SESSION_FEED_CHANNEL, {
        message: (payload) => this.#remote(payload),
        listening: (on) => this.#setListening(on),
      });
      if (this.#closed) await off();
      else this.#unsubscribe = off;
    } catch (err) {
      this.#o.logger.error({ err }, "subscribing to session changes failed; WatchSessions stays unavailable");
    }
  }

  #setListening(on: boolean): void {
    if (on === this.#listening) return;
    this.#listening = on;
    this.#o.observer?.listening(on);
    if (on) {
      this.#o.logger.info("listening for session changes; WatchSessions serves");
      return;
    }
    // Revocations on other replicas may be missed from now on: no position before this point can
    // be replayed, and every proxy must stop answering from its cache (its stream ends; it checks
    // with auth on every use until it is back and has reset).
    this.#epoch = randomBytes(6).toString("hex");
    this.#ring = [];
    this.#o.logger.warn("session change notifications lost; WatchSessions streams ended until they return");
    for (const w of this.#watchers.list()) {
      this.#watchers.fail(w, new UnavailableError("auth lost the session change notifications"));
    }
  }

  #remote(payload: string): void {
    let msg: unknown;
    try {
      msg = JSON.parse(payload);
    } catch {
      return;
    }
    if (msg === null || typeof msg !== "object") return;
    const { o, u, h } = msg as { o?: unknown; u?: unknown; h?: unknown };
    if (o === this.#origin || typeof u !== "string" || !Array.isArray(h)) return;
    const hashes = h.filter((hash): hash is string => typeof hash === "string" && HASH.test(hash));
    this.#o.observer?.revoked(hashes);
    for (const hash of hashes) this.#apply({ kind: "revoked", session_hash: hash, username: u });
  }

  #apply(change: Change): void {
    if (this.#closed) return;
    this.#seq++;
    const event: SessionEvent = { ...change, position: this.position };
    this.#ring.push(event);
    if (this.#ring.length > this.#ringSize) this.#ring.splice(0, this.#ring.length - this.#ringSize);
    for (const w of this.#watchers.list()) this.#write(w, event);
  }

  /** The events after `from`, or undefined when that position cannot be replayed here. */
  #replayFrom(from: string): SessionEvent[] | undefined {
    const m = /^([0-9a-f]+):(\d+)$/.exec(from);
    if (!m || m[1] !== this.#epoch) return undefined;
    const seq = Number(m[2]);
    if (seq > this.#seq) return undefined;
    const oldest = this.#seq - this.#ring.length; // the ring holds (oldest, seq]
    if (seq < oldest) return undefined;
    return this.#ring.slice(seq - oldest);
  }

  #keepalive(): SessionEvent {
    return { kind: "keepalive", position: this.position, keepalive_seconds: this.#keepaliveSeconds };
  }

  #write(w: Watcher, event: SessionEvent): void {
    if (!this.#watchers.has(w)) return;
    if (w.call.writableLength > MAX_BUFFERED_BYTES) {
      this.#watchers.fail(w, new LimitExceededError("session stream is not being read"));
      return;
    }
    try {
      w.call.write(event);
    } catch (err) {
      this.#o.logger.debug({ err }, "a session stream write failed");
      this.#watchers.drop(w);
    }
  }
}
