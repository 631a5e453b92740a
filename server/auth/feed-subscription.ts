// A client's one stream to a pushed feed of auth (WatchTrust, WatchSessions, WatchInventory): open
// it, hand each message on, reopen it with backoff when it fails or ends, and treat it as dead when
// it stays silent past what its keepalive promises (a half-open connection reports nothing). What
// a message means, and when the stream counts as live, stays with the user of the stream.
import type { ClientReadableStream, Metadata, ServiceError } from "@grpc/grpc-js";
import type { Logger } from "pino";
import type { Counter } from "prom-client";
import { type AuthServiceClient, fromGrpcError } from "./client.ts";

/** A proxy's channel to auth as its feeds need it: the client and its "proxy:<name>" caller metadata. */
export interface FeedConnection {
  readonly client: AuthServiceClient;
  metadata(): Metadata;
}

/** Reconnect backoff: first delay and cap (ms). */
export interface Backoff {
  initialMs: number;
  maxMs: number;
}

export interface FeedSubscriptionOptions<T> {
  /** names the stream in errors and logs ("trust stream") */
  what: string;
  /** Opens the call; read at every (re)connect, so a new channel or identity is followed. Throwing counts as a loss. */
  open: () => ClientReadableStream<T>;
  message: (m: T) => void;
  /** The stream went down (before a reconnect is planned). */
  down: (err: Error) => void;
  backoff: Backoff;
  logger: Logger;
  /** counted once per planned reconnect */
  reconnects?: Counter | undefined;
  /** How a failed call is reported to `down` (default: the typed core error). */
  error?: (err: ServiceError) => Error;
  /**
   * Runs once per periodMs() while started; an Error returned means the stream is dead (it is
   * given the period it was armed with).
   */
  watchdog: { periodMs: () => number; check: (periodMs: number) => Error | undefined };
  /** the clock openedAt is read from (ms; default Date.now) */
  now?: () => number;
}

export class FeedSubscription<T> {
  readonly #o: FeedSubscriptionOptions<T>;
  #call: ClientReadableStream<T> | undefined;
  #stopped = true;
  #attempt = 0;
  #retry: NodeJS.Timeout | undefined;
  #watchdog: NodeJS.Timeout | undefined;
  #openedAt = 0;

  constructor(o: FeedSubscriptionOptions<T>) {
    this.#o = o;
  }

  /** A call is open (it may not have said anything yet). */
  get open(): boolean {
    return this.#call !== undefined;
  }

  /** When the current call was opened (ms): a call silent since then counts as silent too. */
  get openedAt(): number {
    return this.#openedAt;
  }

  get stopped(): boolean {
    return this.#stopped;
  }

  start(): void {
    if (!this.#stopped) return;
    this.#stopped = false;
    this.#open();
    this.#armWatchdog();
  }

  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#retry);
    clearTimeout(this.#watchdog);
    this.#drop();
  }

  /** The stream works: the next loss starts the backoff from its first delay. */
  healthy(): void {
    this.#attempt = 0;
  }

  /** Reconnect at once if a reconnect is waiting (auth was just seen answering). */
  reconnectNow(): void {
    if (this.#stopped || this.#call || this.#retry === undefined) return;
    clearTimeout(this.#retry);
    this.#retry = undefined;
    this.#attempt = 0;
    this.#open();
  }

  /** Ends the current call, reports it down, and plans the reconnect. */
  lost(err: Error): void {
    this.#drop();
    this.#o.down(err);
    if (this.#stopped) return;
    this.#o.reconnects?.inc();
    // Capped exponential backoff, each wait a random point in the upper half: a fleet (or the
    // proxy replicas) that lost auth together does not come back in lockstep.
    const { initialMs, maxMs } = this.#o.backoff;
    const ceiling = Math.min(maxMs, initialMs * 2 ** Math.min(this.#attempt, 20));
    this.#attempt++;
    const delayMs = Math.round(ceiling / 2 + Math.random() * (ceiling / 2));
    this.#o.logger.debug({ err: err.message, delayMs }, `${this.#o.what} down; reconnecting`);
    clearTimeout(this.#retry);
    this.#retry = setTimeout(() => {
      this.#retry = undefined;
      this.#open();
    }, delayMs);
    this.#retry.unref();
  }

  #open(): void {
    if (this.#stopped) return;
    let call: ClientReadableStream<T>;
    try {
      call = this.#o.open();
    } catch (err) {
      this.lost(err instanceof Error ? err : new Error(String(err)));
      return;
    }
    this.#call = call;
    this.#openedAt = (this.#o.now ?? Date.now)();
    call.on("data", (m: T) => {
      if (this.#call === call) this.#o.message(m);
    });
    call.on("error", (err: ServiceError) => {
      if (this.#call === call) this.lost((this.#o.error ?? fromGrpcError)(err));
    });
    call.on("end", () => {
      if (this.#call === call) this.lost(new Error(`auth ended the ${this.#o.what}`));
    });
  }

  #drop(): void {
    const call = this.#call;
    this.#call = undefined;
    if (call) {
      call.removeAllListeners("data");
      // cancel() reports CANCELLED through 'error': swallow it, the stream is ours to end.
      call.on("error", () => undefined);
      call.cancel();
    }
  }

  #armWatchdog(): void {
    clearTimeout(this.#watchdog);
    if (this.#stopped) return;
    const every = this.#o.watchdog.periodMs();
    this.#watchdog = setTimeout(() => {
      const dead = this.#o.watchdog.check(every);
      if (dead) this.lost(dead);
      this.#armWatchdog();
    }, every);
    this.#watchdog.unref();
  }
}
