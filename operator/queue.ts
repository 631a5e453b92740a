// A keyed work queue in the manner of client-go's workqueue: a key waiting to be processed is held
// once however often it is added; a key is never handed to two workers at once (an add while it is
// being processed marks it dirty and it runs again afterwards); a failure is retried after a capped
// exponential backoff with jitter; a periodic resync adds every known key so drift is corrected even
// when no watch event arrives.

export interface ReconcileResult {
  /** Process the key again after this many milliseconds (e.g. when a token is due to expire). */
  requeueAfterMs?: number;
}

export type ReconcileHandler = (key: string) => Promise<ReconcileResult | undefined>;

export interface WorkQueueOptions {
  handler: ReconcileHandler;
  /** Workers running at once (different keys only); default 2. */
  concurrency?: number;
  /** First retry delay after a failure (default 200 ms)… */
  backoffBaseMs?: number;
  /** …doubled per consecutive failure of the same key, up to this cap (default 60 s). */
  backoffMaxMs?: number;
  /** Random spread applied to every backoff delay, as a fraction (default 0.2 → ±20 %). */
  jitter?: number;
  /** Every this many ms, add every key `resyncKeys` returns; 0 turns it off (default). */
  resyncMs?: number;
  resyncKeys?: () => Iterable<string>;
  /** Source of randomness for the jitter (tests pass a fixed one). */
  random?: () => number;
  /** Told about every failure, with the delay before its retry. */
  onError?: (key: string, error: unknown, failures: number, retryInMs: number) => void;
}

export class WorkQueue {
  readonly #handler: ReconcileHandler;
  readonly #concurrency: number;
  readonly #backoffBaseMs: number;
  readonly #backoffMaxMs: number;
  readonly #jitter: number;
  readonly #resyncMs: number;
  readonly #resyncKeys: (() => Iterable<string>) | undefined;
  readonly #random: () => number;
  readonly #onError: WorkQueueOptions["onError"];

  /** Keys waiting, in order; each also in #dirty. */
  #order: string[] = [];
  /** Keys that must be processed (waiting, or re-added while processing). */
  readonly #dirty = new Set<string>();
  readonly #processing = new Set<string>();
  readonly #failures = new Map<string, number>();
  readonly #delayed = new Map<string, { at: number; timer: NodeJS.Timeout }>();
  readonly #running = new Set<Promise<void>>();
  #resyncTimer: NodeJS.Timeout | undefined;
  #started = false;
  #stopped = false;
  #idleWaiters: Array<() => void> = [];

  constructor(opts: WorkQueueOptions) {
    this.#handler = opts.handler;
    this.#concurrency = Math.max(1, opts.concurrency ?? 2);
    this.#backoffBaseMs = opts.backoffBaseMs ?? 200;
    this.#backoffMaxMs = opts.backoffMaxMs ?? 60_000;
    this.#jitter = opts.jitter ?? 0.2;
    this.#resyncMs = opts.resyncMs ?? 0;
    this.#resyncKeys = opts.resyncKeys;
    this.#random = opts.random ?? Math.random;
    this.#onError = opts.onError;
  }

  /** Starts the workers (keys added before start wait until then). */
  start(): void {
    if (this.#started || this.#stopped) return;
    this.#started = true;
    if (this.#resyncMs > 0 && this.#resyncKeys) {
      const keys = this.#resyncKeys;
      this.#resyncTimer = setInterval(() => {
        for (const key of keys()) this.add(key);
      }, this.#resyncMs);
      this.#resyncTimer.unref();
    }
    this.#pump();
  }

  /** Stops taking work, cancels pending retries and waits for running handlers to finish. */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#resyncTimer) clearInterval(this.#resyncTimer);
    for (const { timer } of this.#delayed.values()) clearTimeout(timer);
    this.#delayed.clear();
    this.#order = [];
    this.#dirty.clear();
    await Promise.all([...this.#running]);
    this.#notifyIdle();
  }

  /** Queues `key` unless it is already waiting. */
  add(key: string): void {
    if (this.#stopped || this.#dirty.has(key)) return;
    this.#dirty.add(key);
    if (!this.#processing.has(key)) this.#order.push(key);
    this.#pump();
  }

  /** Queues `key` after `ms`; an earlier pending delay for the same key wins. */
  addAfter(key: string, ms: number): void {
    if (this.#stopped) return;
    if (ms <= 0) {
      this.add(key);
      return;
    }
    // setTimeout's range is about 24.8 days; longer waits are covered by resync anyway.
    const delay = Math.min(ms, 2 ** 31 - 1);
    const at = Date.now() + delay;
    const pending = this.#delayed.get(key);
    if (pending && pending.at <= at) return;
    if (pending) clearTimeout(pending.timer);
    const timer = setTimeout(() => {
      this.#delayed.delete(key);
      this.add(key);
    }, delay);
    timer.unref();
    this.#delayed.set(key, { at, timer });
  }

  /** Consecutive failures recorded for `key` (0 after a success). */
  failures(key: string): number {
    return this.#failures.get(key) ?? 0;
  }

  /** Keys waiting or being processed right now (delayed retries not counted). */
  get busy(): number {
    return this.#dirty.size + this.#processing.size;
  }

  /** Resolves when nothing is waiting or running (delayed retries may still be pending). */
  idle(): Promise<void> {
    if (this.busy === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  /** The retry delay after `failures` consecutive failures, with jitter. */
  backoffMs(failures: number): number {
    const exp = Math.min(this.#backoffMaxMs, this.#backoffBaseMs * 2 ** Math.min(failures - 1, 30));
    const spread = 1 + this.#jitter * (2 * this.#random() - 1);
    return Math.max(1, Math.round(Math.min(this.#backoffMaxMs, exp * spread)));
  }

  #pump(): void {
    if (!this.#started || this.#stopped) return;
    while (this.#processing.size < this.#concurrency && this.#order.length > 0) {
      const key = this.#order.shift() as string;
      this.#dirty.delete(key);
      this.#processing.add(key);
      const run = this.#process(key);
      this.#running.add(run);
      void run.finally(() => this.#running.delete(run));
    }
    if (this.busy === 0) this.#notifyIdle();
  }

  async #process(key: string): Promise<void> {
    let retryInMs: number | undefined;
    try {
      const result = await this.#handler(key);
      this.#failures.delete(key);
      if (result?.requeueAfterMs !== undefined) this.addAfter(key, result.requeueAfterMs);
    } catch (error) {
      const failures = (this.#failures.get(key) ?? 0) + 1;
      this.#failures.set(key, failures);
      retryInMs = this.backoffMs(failures);
      try {
        this.#onError?.(key, error, failures, retryInMs);
      } catch {
        // a reporting callback must not break the queue
      }
    } finally {
      this.#processing.delete(key);
      // Re-added while it ran: it goes to the back of the line now that no worker holds it.
      if (this.#dirty.has(key) && !this.#stopped) this.#order.push(key);
      if (retryInMs !== undefined) this.addAfter(key, retryInMs);
      this.#pump();
    }
  }

  #notifyIdle(): void {
    for (const w of this.#idleWaiters.splice(0)) w();
  }
}
