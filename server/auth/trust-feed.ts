// WatchTrust (docs/locks.md): what nodes and proxies enforce, pushed. Every watcher gets a full
// snapshot at once (locks in force, every trusted CA key, CA rotation state), then a new one
// whenever that content changes (changes within a few ms are sent as one) and the current one at
// least every keepalive, so a watcher can tell a quiet stream from a dead one. Snapshots are
// small; they are built once per change and shared by every stream.
import { createHash } from "node:crypto";
import type { ServerWritableStream } from "@grpc/grpc-js";
import type { Logger } from "pino";
import type { Clock } from "../../core/clock.ts";
import { AccessDeniedError, NotAuthenticatedError } from "../../core/errors.ts";
import { type LockRecord, lockToProto } from "../../core/locks/lock.ts";
import type { CertAuthorityStatus } from "../../proto/generated/svc/v1/CertAuthorityStatus.ts";
import type { PublicKeys } from "../../proto/generated/svc/v1/PublicKeys.ts";
import type { TrustSnapshot } from "../../proto/generated/svc/v1/TrustSnapshot.ts";
import type { WatchTrustRequest__Output } from "../../proto/generated/svc/v1/WatchTrustRequest.ts";
import { type Caller, callerLabel } from "./caller.ts";
import { admit, type FeedStream, FeedStreams, MAX_STREAMS_PER_CALLER } from "./feed-streams.ts";

export const DEFAULT_KEEPALIVE_SECONDS = 15;
const DEFAULT_DEBOUNCE_MS = 5;

export { MAX_STREAMS_PER_CALLER };

export interface TrustFeedSources {
  /** Locks in force now. */
  locks(): LockRecord[];
  /** The same content GetPublicKeys answers (every trusted key). */
  publicKeys(): PublicKeys | Promise<PublicKeys>;
  /** CA rotation state; [] until CA rotation plugs in. */
  authorities(): CertAuthorityStatus[];
  /** Any of the above changed (locks, an expiry, a CA phase). Returns an unsubscribe function. */
  onChange(fn: () => void): () => void;
}

/**
 * The sources auth wires: its lock service and key material, plus the CA rotation hook
 * (`authorities`, `onAuthoritiesChange`: cas.status() and cas.onChange()) once that exists.
 */
export function trustFeedSources(o: {
  locks: { inForce(): LockRecord[]; onChange(fn: () => void): () => void };
  publicKeys: () => PublicKeys | Promise<PublicKeys>;
  authorities?: () => CertAuthorityStatus[];
  onAuthoritiesChange?: (fn: () => void) => () => void;
}): TrustFeedSources {
  return {
    locks: () => o.locks.inForce(),
    publicKeys: o.publicKeys,
    authorities: () => o.authorities?.() ?? [],
    onChange: (fn) => {
      const offs = [o.locks.onChange(fn), o.onAuthoritiesChange?.(fn)];
      return () => {
        for (const off of offs) off?.();
      };
    },
  };
}

/** Who may watch: nodes (their own agent identity), proxies ("proxy:<name>") and admins (RBAC, by the table). */
export function assertMayWatch(caller: Caller): void {
  if (caller.kind === "user") return; // the authorization table already asked RBAC (locks/list)
  if (caller.kind === "agent" && (!caller.agentId.includes(":") || caller.agentId.startsWith("proxy:")))
    return;
  throw new AccessDeniedError("WatchTrust serves nodes, proxies and admins");
}

type Stream = ServerWritableStream<WatchTrustRequest__Output, TrustSnapshot>;

interface Watcher extends FeedStream<Stream> {
  caller: Caller;
  /** the last digest this stream was sent */
  sent: string;
  /** write() said the buffer is full: wait for drain, then send the newest snapshot */
  blocked: boolean;
}

export interface TrustFeedOptions {
  sources: TrustFeedSources;
  clock: Clock;
  logger: Logger;
  /** config auth.lock_keepalive (default 15 s). */
  keepaliveSeconds?: number;
  debounceMs?: number;
  /**
   * Asked at every keepalive: may this caller still watch? A stream lives no longer than what
   * opened it (a session logged out, expired or locked, an admin's right removed, a node removed):
   * otherwise it kept receiving every lock and CA change until the client hung up.
   */
  stillAllowed?: (caller: Caller) => Promise<boolean>;
}

export class TrustFeed {
  readonly #o: TrustFeedOptions;
  readonly #watchers = new FeedStreams<Watcher>({
    maxPerCaller: MAX_STREAMS_PER_CALLER,
    limitMessage: (max) => `at most ${max} trust streams per identity: oldest ended`,
    onEmpty: () => this.#idle(),
  });
  readonly #keepaliveSeconds: number;
  #current: TrustSnapshot | undefined;
  #building: { gen: number; snap: Promise<TrustSnapshot> } | undefined;
  /** Bumped on every change: a build started before it must not be cached or reused after it. */
  #gen = 0;
  #debounce: NodeJS.Timeout | undefined;
  #unsubscribe: (() => void) | undefined;
  #closed = false;

  constructor(o: TrustFeedOptions) {
    this.#o = o;
    this.#keepaliveSeconds = Math.max(1, Math.round(o.keepaliveSeconds ?? DEFAULT_KEEPALIVE_SECONDS));
  }

  get keepaliveSeconds(): number {
    return this.#keepaliveSeconds;
  }

  /** Streams currently open (diagnostics, tests). */
  get watchers(): number {
    return this.#watchers.size;
  }

  /** The snapshot now (built when none is current). */
  snapshot(): Promise<TrustSnapshot> {
    if (this.#current) return Promise.resolve(this.#current);
    if (this.#building?.gen === this.#gen) return this.#building.snap;
    const building = { gen: this.#gen, snap: this.#build(this.#gen) };
    this.#building = building;
    void building.snap.finally(() => {
      if (this.#building === building) this.#building = undefined;
    });
    return building.snap;
  }

  /** Serves one WatchTrust stream until the client goes away or the feed closes. */
  serve(call: Stream, caller: Caller): void {
    const admitted = admit(call, () => {
      if (this.#closed) throw new AccessDeniedError("auth is shutting down");
      assertMayWatch(caller);
    });
    if (!admitted) return;
    this.#subscribe();
    const w: Watcher = { call, caller, who: callerLabel(caller), sent: "", blocked: false };
    this.#watchers.add(w, this.#keepaliveSeconds * 1000, (x) => void this.#keepalive(x));
    call.on("drain", () => {
      w.blocked = false;
      void this.#send(w, false);
    });
    void this.#send(w, true);
  }

  /** Ends every stream (OK status) and stops listening: auth is shutting down. */
  close(): void {
    this.#closed = true;
    if (this.#debounce) clearTimeout(this.#debounce);
    this.#unsubscribe?.();
    this.#unsubscribe = undefined;
    this.#watchers.endAll();
  }

  #subscribe(): void {
    if (this.#unsubscribe) return;
    this.#unsubscribe = this.#o.sources.onChange(() => this.#changed());
  }

  #changed(): void {
    if (this.#closed) return;
    this.#gen++;
    this.#current = undefined;
    if (this.#debounce) return;
    this.#debounce = setTimeout(() => {
      this.#debounce = undefined;
      void this.#broadcast();
    }, this.#o.debounceMs ?? DEFAULT_DEBOUNCE_MS);
  }

  async #broadcast(): Promise<void> {
    for (const w of this.#watchers.list()) await this.#send(w, false);
  }

  async #keepalive(w: Watcher): Promise<void> {
    const check = this.#o.stillAllowed;
    if (check) {
      const ok = await check(w.caller).catch((err: unknown) => {
        // Unknown (a backend hiccup): keep the stream, the next keepalive asks again.
        this.#o.logger.warn({ err }, "rechecking a trust watcher failed");
        return true;
      });
      if (!ok) {
        if (!this.#watchers.has(w)) return;
        this.#watchers.fail(
          w,
          new NotAuthenticatedError("the credential that opened this stream is no longer valid"),
        );
        return;
      }
    }
    await this.#send(w, true);
  }

  /** Sends the current snapshot when it is new to this stream (or always, for a keepalive). */
  async #send(w: Watcher, always: boolean): Promise<void> {
    let snap: TrustSnapshot;
    try {
      snap = await this.snapshot();
    } catch (err) {
      this.#o.logger.error({ err }, "building the trust snapshot failed");
      return;
    }
    if (!this.#watchers.has(w) || w.blocked) return;
    if (!always && snap.digest === w.sent) return;
    w.sent = snap.digest ?? "";
    // generated_at says when this copy left auth: a keepalive is fresh content, not an old one.
    const out = always ? { ...snap, generated_at: this.#o.clock.now().toISOString() } : snap;
    try {
      if (!w.call.write(out)) w.blocked = true;
    } catch (err) {
      this.#o.logger.debug({ err }, "a trust stream write failed");
      this.#watchers.drop(w);
    }
  }

  /** The last stream went away. */
  #idle(): void {
    if (this.#unsubscribe) {
      this.#unsubscribe();
      this.#unsubscribe = undefined;
      // Nobody listens for changes now: the next watcher must not get a stale cached snapshot.
      this.#current = undefined;
      this.#gen++;
    }
  }

  async #build(gen: number): Promise<TrustSnapshot> {
    const locks = this.#o.sources.locks().map(lockToProto);
    const keys = await this.#o.sources.publicKeys();
    const authorities = this.#o.sources.authorities();
    const content = { locks, public_keys: keys, authorities };
    const digest = createHash("sha256").update(JSON.stringify(content)).digest("hex");
    const snap: TrustSnapshot = {
      ...content,
      digest,
      generated_at: this.#o.clock.now().toISOString(),
      keepalive_seconds: this.#keepaliveSeconds,
    };
    // Cached only while a change would clear it (someone is subscribed).
    if (this.#unsubscribe && gen === this.#gen) this.#current = snap;
    return snap;
  }
}
