// The streams one of auth's pushed feeds (WatchTrust, WatchSessions, WatchInventory) holds open:
// admission, a keepalive timer per stream, a bound per identity, and ending them on cancel, on
// error or at shutdown. What a feed sends, and when, stays in the feed.
import { AccessDeniedError, LimitExceededError } from "../../core/errors.ts";
import type { Caller } from "./caller.ts";
import { toGrpcError } from "./errors.ts";

/**
 * Streams one identity may hold open on a feed. A node or proxy needs one (a few while
 * reconnecting; proxy replicas may share a name); without a bound one node certificate could open
 * streams until auth runs out of memory (measured: 5,000 streams of one node took ~130 MB). Past
 * it the identity's oldest stream is ended, not the new one: a watcher reconnecting after its old
 * connection went silent is never locked out by its own ghosts.
 */
export const MAX_STREAMS_PER_CALLER = 32;

/** What of a server stream call this needs (grpc-js ServerWritableStream). */
export interface FeedCall {
  once(event: "cancelled" | "close" | "error", listener: () => void): unknown;
  emit(event: "error", err: unknown): boolean;
  end(): void;
}

/** One open stream; a feed adds its own per-stream state. */
export interface FeedStream<C extends FeedCall = FeedCall> {
  readonly call: C;
  /** callerLabel of who opened it (the per-identity bound counts by it) */
  readonly who: string;
  keepalive?: NodeJS.Timeout;
}

/** Only proxies ("proxy:<name>") watch what only they need; nodes and every other caller are refused. */
export function assertProxyCaller(caller: Caller, rpc: string): void {
  if (caller.kind === "agent" && caller.agentId.startsWith("proxy:")) return;
  throw new AccessDeniedError(`${rpc} serves proxies only`);
}

/** Runs a feed's admission checks; a refusal becomes the call's status. False when refused. */
export function admit(call: FeedCall, check: () => void): boolean {
  try {
    check();
    return true;
  } catch (err) {
    call.emit("error", toGrpcError(err));
    return false;
  }
}

export interface FeedStreamsOptions {
  /** Per identity; undefined: no bound. */
  maxPerCaller?: number;
  /** The status message of a stream ended by the bound. */
  limitMessage?: (max: number) => string;
  /** The last stream was dropped (a feed stops its sources). */
  onEmpty?: () => void;
}

export class FeedStreams<W extends FeedStream> {
  readonly #o: FeedStreamsOptions;
  readonly #all = new Set<W>();
  /** the same streams by identity, in the order they were opened */
  readonly #byCaller = new Map<string, Set<W>>();

  constructor(o: FeedStreamsOptions = {}) {
    this.#o = o;
  }

  get size(): number {
    return this.#all.size;
  }

  has(w: W): boolean {
    return this.#all.has(w);
  }

  /** A copy: sending may drop streams. */
  list(): W[] {
    return [...this.#all];
  }

  /**
   * Holds a new stream: dropped when the client cancels, closes or errs, `tick` every keepalive.
   * The identity's oldest streams past the bound are ended after it is added (so the set never
   * empties on the way and a feed's sources stay subscribed).
   */
  add(w: W, keepaliveMs: number, tick: (w: W) => void): void {
    w.keepalive = setInterval(() => tick(w), keepaliveMs);
    this.#all.add(w);
    const set = this.#byCaller.get(w.who) ?? new Set<W>();
    set.add(w);
    this.#byCaller.set(w.who, set);
    const drop = (): void => {
      this.drop(w);
    };
    w.call.once("cancelled", drop);
    w.call.once("close", drop);
    w.call.once("error", drop);
    const max = this.#o.maxPerCaller;
    if (max === undefined) return;
    const older = [...set].filter((x) => x !== w); // oldest first
    for (const old of older.slice(0, Math.max(0, older.length - max + 1))) {
      this.fail(
        old,
        new LimitExceededError(this.#o.limitMessage?.(max) ?? `at most ${max} streams per identity`),
      );
    }
  }

  /** Forgets a stream (its call is left as it is). False when it was not held. */
  drop(w: W): boolean {
    clearInterval(w.keepalive);
    if (!this.#all.delete(w)) return false;
    const set = this.#byCaller.get(w.who);
    set?.delete(w);
    if (set?.size === 0) this.#byCaller.delete(w.who);
    if (this.#all.size === 0) this.#o.onEmpty?.();
    return true;
  }

  /** Ends a stream with an error status. */
  fail(w: W, err: unknown): void {
    this.drop(w);
    w.call.emit("error", toGrpcError(err));
  }

  /** Ends every stream with an OK status: auth is shutting down. */
  endAll(): void {
    for (const w of this.list()) {
      this.drop(w);
      try {
        w.call.end();
      } catch {
        // already ended by the client
      }
    }
  }
}
