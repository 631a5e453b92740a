// How current an informer is. client-node's ListWatch neither asks for watch bookmarks nor says
// whether its watch is open, so its Watch is wrapped here: every watch asks for bookmarks
// (allowWatchBookmarks; ListWatch already moves its resourceVersion to a bookmark's, so a
// reconnect resumes from there instead of relisting after a 410), and the wrapper reports when a
// watch opens, delivers anything (bookmarks included) and ends. A kind is current while its watch
// is open; once it ends, the kind grows stale until a list or a new watch succeeds. Auth, proxy
// and the operator show that as a gauge and fail readiness past a limit: a cache that cannot
// learn of a deleted User or Role must not keep deciding.
import { type KubeConfig, Watch } from "@kubernetes/client-node";

export interface WatchHooks {
  /** The apiserver accepted the watch (HTTP 200). */
  onOpen(): void;
  /** An event arrived (ADDED, MODIFIED, DELETED, BOOKMARK, ERROR). */
  onEvent(type: string): void;
  /** The watch ended (normally, by timeout or by an error). */
  onClose(): void;
}

/** A Watch whose every request asks for bookmarks and reports to `hooks`. */
export class BookmarkWatch extends Watch {
  readonly #hooks: WatchHooks;

  constructor(kubeConfig: KubeConfig, hooks: WatchHooks) {
    super(kubeConfig);
    this.#hooks = hooks;
  }

  override async watch(
    path: string,
    // biome-ignore lint/suspicious/noExplicitAny: the signature client-node declares
    queryParams: Record<string, any>,
    // biome-ignore lint/suspicious/noExplicitAny: the signature client-node declares
    callback: (phase: string, apiObj: any, watchObj?: any) => void,
    done: (err: unknown) => void,
  ): Promise<AbortController> {
    const controller = await super.watch(
      path,
      { ...queryParams, allowWatchBookmarks: true },
      (phase, obj, watchObj) => {
        this.#hooks.onEvent(phase);
        callback(phase, obj, watchObj);
      },
      (err) => {
        this.#hooks.onClose();
        done(err);
      },
    );
    // super.watch resolves after the response headers (or after calling done on a failure).
    if (!controller.signal.aborted) this.#hooks.onOpen();
    return controller;
  }
}

/** Per kind: whether its watch is open, and since when it is not known to be current. */
export class Freshness<K extends string> {
  readonly #open = new Map<K, boolean>();
  /** When the kind was last known current (list done, watch open or an event), ms epoch. */
  readonly #lastCurrent = new Map<K, number>();
  readonly #now: () => number;

  constructor(kinds: readonly K[], now: () => number = Date.now) {
    this.#now = now;
    const start = now();
    for (const k of kinds) {
      this.#open.set(k, false);
      this.#lastCurrent.set(k, start);
    }
  }

  /** A list succeeded or something arrived on the watch. */
  current(kind: K): void {
    this.#lastCurrent.set(kind, this.#now());
  }

  opened(kind: K): void {
    this.#open.set(kind, true);
    this.current(kind);
  }

  closed(kind: K): void {
    if (this.#open.get(kind)) this.current(kind);
    this.#open.set(kind, false);
  }

  hooks(kind: K): WatchHooks {
    return {
      onOpen: () => this.opened(kind),
      onEvent: () => this.current(kind),
      onClose: () => this.closed(kind),
    };
  }

  /** Seconds each kind has not been known current: 0 while its watch is open. */
  staleSeconds(): Record<K, number> {
    const now = this.#now();
    const out = {} as Record<K, number>;
    for (const [k, open] of this.#open) {
      out[k] = open ? 0 : Math.max(0, (now - (this.#lastCurrent.get(k) ?? now)) / 1000);
    }
    return out;
  }

  /** The stalest kind's seconds. */
  maxStaleSeconds(): number {
    return Math.max(0, ...Object.values<number>(this.staleSeconds()));
  }
}
