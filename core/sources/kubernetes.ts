// The Kubernetes implementation of the resource source: one client-node informer (list + watch)
// per kind on one namespace. Each object is checked like the folder source checks a manifest
// (validateResource, then semanticProblems): an invalid object is reported as a problem and never
// enters the cache, and the last good version of that object stays. The custom resource is the
// source of truth; nothing is copied elsewhere.
//
// Recovery: client-node's informer reconnects by itself after a normal end of a watch and relists
// after 410 Gone, but it stops for good after any other error (apiserver down, list refused). We
// then replace it with a fresh informer after a capped exponential backoff; the fresh informer
// lists again, and that list is applied as a snapshot, so deletions missed while disconnected are
// caught. A periodic resync replays the informer's objects through validation. Watches ask for
// bookmarks and report whether they are open (watch-health.ts): staleSeconds() says how long each
// kind has not been known current.
import {
  CustomObjectsApi,
  type KubeConfig,
  type KubernetesListObject,
  type KubernetesObject,
  ListWatch,
  PatchStrategy,
  setHeaderOptions,
} from "@kubernetes/client-node";
import type { TSchema } from "@sinclair/typebox";
import { type TypeCheck, TypeCompiler } from "@sinclair/typebox/compiler";
import { BadParameterError, type SvcError } from "../errors.ts";
import {
  type AnyResource,
  kindInfo,
  RESOURCE_KINDS,
  type ResourceKind,
  type ResourceOf,
  type SemanticContext,
  semanticProblems,
  validateResource,
} from "../resources/index.ts";
import { ResourceCache } from "./cache.ts";
import { crCoordinates, crPath, kubeError, kubeStatusCode } from "./kube-api.ts";
import type { ResourceSource, ResourceWriter, SourceEvent, SourceProblem } from "./source.ts";
import { BookmarkWatch, Freshness } from "./watch-health.ts";

export interface KubernetesSourceOptions {
  kubeConfig: KubeConfig;
  /** The namespace whose custom resources this source reads and writes. */
  namespace: string;
  /** Kinds to watch (default: all five). */
  kinds?: readonly ResourceKind[];
  /** Replay of the informer caches through validation; 0 turns it off (default 5 min). */
  resyncMs?: number;
  /** First delay before replacing a failed informer (default 500 ms), doubled per failure… */
  backoffInitialMs?: number;
  /** …up to this cap (default 10 s). */
  backoffMaxMs?: number;
  /** How long apply()/remove() wait for their own change to reach the cache (default 10 s). */
  writeVisibleTimeoutMs?: number;
  /** Passed to semanticProblems (e.g. a clock, to treat expired JoinTokens as problems). */
  semantic?: SemanticContext;
  /** Called for each new or changed problem. */
  onProblem?: (problem: SourceProblem) => void;
  /** Called when a kind's list or watch fails, before the backoff (a typed error, no secrets). */
  onWatchError?: (kind: ResourceKind, error: SvcError) => void;
}

type RawObject = KubernetesObject & Record<string, unknown>;

const RECONNECT_AFTER_CLOSE_MAX_MS = 1_000;
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

interface Seen {
  resourceVersion: string;
  deleting: boolean;
}

interface KindState {
  kind: ResourceKind;
  informer: ListWatch<RawObject> | undefined;
  /** Bumped for every informer instance; events of an older instance are ignored. */
  generation: number;
  /** Some informer of this kind has listed once (for synced()). */
  listed: boolean;
  /** The current informer has listed: its own cache is complete enough to resync from. */
  informerListed: boolean;
  failures: number;
  retry: NodeJS.Timeout | undefined;
  /** Last processed resourceVersion per name (valid or not). */
  seen: Map<string, Seen>;
}

interface Waiter {
  kind: ResourceKind;
  name: string;
  done: (seen: Seen | undefined) => boolean;
  resolve: () => void;
}

const statusCheckers = new Map<ResourceKind, TypeCheck<TSchema>>();
function statusChecker(kind: ResourceKind): TypeCheck<TSchema> {
  let checker = statusCheckers.get(kind);
  if (!checker) {
    checker = TypeCompiler.Compile(kindInfo[kind].statusSchema);
    statusCheckers.set(kind, checker);
  }
  return checker;
}

function nameOf(obj: KubernetesObject): string {
  return obj.metadata?.name ?? "";
}

/** kubectl's copy of the raw input of a client-side apply. */
const LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration";

/**
 * The object without what we never read: managedFields (large), and kubectl's last-applied
 * annotation, which holds the raw input, including any field the apiserver pruned (an inlined
 * secret applied with validation off must not live on in our cache).
 */
function trimmed(obj: RawObject): unknown {
  const copy = structuredClone(obj) as RawObject;
  if (copy.metadata) {
    delete copy.metadata.managedFields;
    const annotations = copy.metadata.annotations;
    if (annotations && LAST_APPLIED in annotations) {
      delete annotations[LAST_APPLIED];
      if (Object.keys(annotations).length === 0) delete copy.metadata.annotations;
    }
  }
  return copy;
}

export class KubernetesSource implements ResourceSource, ResourceWriter {
  readonly #namespace: string;
  readonly #kubeConfig: KubeConfig;
  readonly #api: CustomObjectsApi;
  readonly #cache = new ResourceCache();
  readonly #states: KindState[];
  readonly #resyncMs: number;
  readonly #backoffInitialMs: number;
  readonly #backoffMaxMs: number;
  readonly #writeVisibleTimeoutMs: number;
  readonly #semantic: SemanticContext;
  readonly #onProblem: ((p: SourceProblem) => void) | undefined;
  readonly #onWatchError: ((kind: ResourceKind, error: SvcError) => void) | undefined;
  readonly #problems = new Map<string, SourceProblem>();
  #running = false;
  #synced = false;
  #syncWaiters: Array<() => void> = [];
  #writeWaiters = new Set<Waiter>();
  #resyncTimer: NodeJS.Timeout | undefined;
  readonly #freshness: Freshness<ResourceKind>;

  constructor(opts: KubernetesSourceOptions) {
    this.#namespace = opts.namespace;
    this.#kubeConfig = opts.kubeConfig;
    this.#api = opts.kubeConfig.makeApiClient(CustomObjectsApi);
    this.#resyncMs = opts.resyncMs ?? 5 * 60_000;
    this.#backoffInitialMs = opts.backoffInitialMs ?? 500;
    this.#backoffMaxMs = opts.backoffMaxMs ?? 10_000;
    this.#writeVisibleTimeoutMs = opts.writeVisibleTimeoutMs ?? 10_000;
    this.#semantic = opts.semantic ?? {};
    this.#onProblem = opts.onProblem;
    this.#onWatchError = opts.onWatchError;
    this.#states = [...new Set(opts.kinds ?? RESOURCE_KINDS)].map((kind) => ({
      kind,
      informer: undefined,
      generation: 0,
      listed: false,
      informerListed: false,
      failures: 0,
      retry: undefined,
      seen: new Map(),
    }));
    this.#freshness = new Freshness(this.#states.map((s) => s.kind));
  }

  /** Seconds each kind has not been known current (0 while its watch is open). */
  staleSeconds(): Partial<Record<ResourceKind, number>> {
    return this.#freshness.staleSeconds();
  }

  get namespace(): string {
    return this.#namespace;
  }

  async start(): Promise<void> {
    if (this.#running) return;
    this.#running = true;
    for (const state of this.#states) this.#launch(state);
    if (this.#resyncMs > 0) {
      this.#resyncTimer = setInterval(() => this.resync(), this.#resyncMs);
      this.#resyncTimer.unref();
    }
  }

  async stop(): Promise<void> {
    if (!this.#running) return;
    this.#running = false;
    if (this.#resyncTimer) clearInterval(this.#resyncTimer);
    this.#resyncTimer = undefined;
    const stops: Promise<void>[] = [];
    for (const state of this.#states) {
      if (state.retry) clearTimeout(state.retry);
      state.retry = undefined;
      state.generation++; // its "aborted" error, and anything later, is ignored
      if (state.informer) stops.push(state.informer.stop().catch(() => undefined));
      state.informer = undefined;
    }
    await Promise.all(stops);
    for (const w of this.#writeWaiters) w.resolve();
    this.#writeWaiters.clear();
  }

  synced(): boolean {
    return this.#synced;
  }

  waitSynced(signal?: AbortSignal): Promise<void> {
    if (this.#synced) return Promise.resolve();
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        this.#syncWaiters = this.#syncWaiters.filter((w) => w !== done);
        reject(signal?.reason);
      };
      const done = () => {
        signal?.removeEventListener("abort", onAbort);
        resolve();
      };
      this.#syncWaiters.push(done);
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  list<K extends ResourceKind>(kind: K): ResourceOf<K>[] {
    return this.#cache.list(kind);
  }

  get<K extends ResourceKind>(kind: K, name: string): ResourceOf<K> | undefined {
    return this.#cache.get(kind, name);
  }

  subscribe(listener: (event: SourceEvent) => void): () => void {
    return this.#cache.subscribe(listener);
  }

  problems(): SourceProblem[] {
    return this.#cache.problems();
  }

  /** Replays every kind's informer objects through validation now (also runs on a timer). */
  resync(): void {
    for (const state of this.#states) {
      // A fresh informer that has not listed yet holds nothing: replaying it would empty the cache.
      if (state.informer && state.informerListed) this.#snapshot(state, [...state.informer.list()], true);
    }
  }

  // ---- writer ----

  /**
   * Creates the custom resource, or replaces spec, labels and annotations of an existing one
   * (finalizers, owner references and status are left to their owners). Resolves once the
   * change has reached this source's cache (or after writeVisibleTimeoutMs).
   */
  async apply(resource: AnyResource): Promise<void> {
    const checked = validateResource(resource);
    if (!checked.ok) throw new BadParameterError(`invalid ${resource.kind}: ${checked.errors.join("; ")}`);
    const r = checked.resource;
    const kind = r.kind as ResourceKind;
    const name = r.metadata.name;
    const what = `${kind} "${name}"`;
    const coords = crCoordinates(kind);
    const base = { ...coords, namespace: this.#namespace };
    const meta: Record<string, unknown> = { name, namespace: this.#namespace };
    if (r.metadata.labels) meta["labels"] = r.metadata.labels;
    if (r.metadata.annotations) meta["annotations"] = r.metadata.annotations;

    for (let attempt = 1; ; attempt++) {
      let existing: RawObject | undefined;
      try {
        existing = (await this.#api.getNamespacedCustomObject({ ...base, name })) as RawObject;
      } catch (err) {
        if (kubeStatusCode(err) !== 404) throw kubeError(err, what);
      }
      try {
        let written: RawObject;
        if (!existing) {
          written = (await this.#api.createNamespacedCustomObject({
            ...base,
            body: { apiVersion: r.apiVersion, kind, metadata: meta, spec: r.spec },
          })) as RawObject;
        } else {
          const body = {
            apiVersion: r.apiVersion,
            kind,
            // managedFields left out: the apiserver keeps them (sending them would reset ownership).
            metadata: { ...existing.metadata, managedFields: undefined, ...meta },
            spec: r.spec,
          };
          written = (await this.#api.replaceNamespacedCustomObject({ ...base, name, body })) as RawObject;
        }
        await this.#waitVisible(kind, name, written.metadata?.resourceVersion);
        return;
      } catch (err) {
        // Lost a race with another writer (create vs create, or a stale resourceVersion): retry.
        if (kubeStatusCode(err) === 409 && attempt < 5) continue;
        throw kubeError(err, what);
      }
    }
  }

  /** Deletes the custom resource; NotFoundError when it does not exist. */
  async remove(kind: ResourceKind, name: string): Promise<void> {
    const what = `${kind} "${name}"`;
    try {
      await this.#api.deleteNamespacedCustomObject({
        ...crCoordinates(kind),
        namespace: this.#namespace,
        name,
      });
    } catch (err) {
      throw kubeError(err, what);
    }
    // Gone, or being finalized (the operator's finalizer keeps it until its delete path ran).
    await this.#wait(kind, name, (seen) => seen === undefined || seen.deleting);
  }

  /**
   * Merge-patches `status` through the status subresource (for the operator). The status is
   * checked against the kind's status schema first; NotFoundError when the object is gone.
   */
  async patchStatus<K extends ResourceKind>(
    kind: K,
    name: string,
    status: NonNullable<ResourceOf<K>["status"]>,
  ): Promise<void> {
    await patchResourceStatus(this.#kubeConfig, this.#namespace, kind, name, status, this.#api);
  }

  // ---- informers ----

  #launch(state: KindState): void {
    if (!this.#running) return;
    const generation = ++state.generation;
    state.informerListed = false;
    const current = () => this.#running && state.generation === generation;
    const listFn = async (): Promise<KubernetesListObject<RawObject>> => {
      const list = (await this.#api.listNamespacedCustomObject({
        ...crCoordinates(state.kind),
        namespace: this.#namespace,
      })) as KubernetesListObject<RawObject>;
      // The list is the truth at its resourceVersion: apply it as a snapshot before the informer
      // diffs it against its own (possibly empty) cache, so nothing vanished goes unnoticed.
      // A list that returns after this informer was replaced or stopped must not open a watch.
      if (!current()) throw new Error("aborted: informer replaced");
      state.failures = 0;
      this.#freshness.current(state.kind);
      this.#snapshot(state, list.items ?? [], false);
      this.#markListed(state);
      // The informer fills its own cache from this list right after we return; resync may use it
      // from the next tick on.
      setImmediate(() => {
        if (current()) state.informerListed = true;
      });
      return list;
    };
    // The informer makeInformer() builds, plus a delay hook: client-node waits up to 30 s before
    // re-watching after a clean server-side close (routine: the apiserver ends watches on its own
    // schedule); we cap that at 1 s, and a delay that outlives this informer never wakes, so no
    // watch is opened after stop().
    const delayFn = async (ms: number): Promise<void> => {
      await sleep(Math.min(ms, RECONNECT_AFTER_CLOSE_MAX_MS));
      if (!current()) await new Promise<void>(() => undefined);
    };
    const informer = new ListWatch<RawObject>(
      crPath(this.#namespace, state.kind),
      new BookmarkWatch(this.#kubeConfig, {
        onOpen: () => {
          if (current()) this.#freshness.opened(state.kind);
        },
        onEvent: () => {
          if (current()) this.#freshness.current(state.kind);
        },
        onClose: () => {
          if (current()) this.#freshness.closed(state.kind);
        },
      }),
      listFn,
      false,
      undefined,
      undefined,
      { delayFn },
    );
    state.informer = informer;
    // A watch that was still connecting when its informer was stopped can outlive it: the first
    // event it delivers stops it for good.
    const stale = (): boolean => {
      if (current()) return false;
      informer.stop().catch(() => undefined);
      return true;
    };
    const onObject = (obj: RawObject) => {
      if (stale()) return;
      state.failures = 0;
      this.#process(state, obj, false);
    };
    informer.on("add", onObject);
    informer.on("update", onObject);
    informer.on("delete", (obj: RawObject) => {
      if (stale()) return;
      state.failures = 0;
      this.#delete(state, nameOf(obj));
    });
    informer.on("error", (err: unknown) => {
      if (!current()) return; // includes the "aborted" error that stop() causes
      this.#failed(state, generation, err);
    });
    informer.start().catch((err: unknown) => {
      if (current()) this.#failed(state, generation, err);
    });
  }

  #failed(state: KindState, generation: number, err: unknown): void {
    if (state.generation !== generation || state.retry) return;
    state.failures++;
    this.#freshness.closed(state.kind);
    try {
      this.#onWatchError?.(state.kind, kubeError(err, `list/watch of ${kindInfo[state.kind].plural}`));
    } catch {
      // a reporting callback must not break recovery
    }
    const old = state.informer;
    state.generation++; // silence the old informer before stopping it
    state.informer = undefined;
    old?.stop().catch(() => undefined);
    const exp = Math.min(this.#backoffMaxMs, this.#backoffInitialMs * 2 ** Math.min(state.failures - 1, 20));
    const delay = Math.round(exp * (0.8 + Math.random() * 0.4));
    state.retry = setTimeout(() => {
      state.retry = undefined;
      this.#launch(state);
    }, delay);
  }

  #markListed(state: KindState): void {
    if (state.listed) return;
    state.listed = true;
    if (!this.#synced && this.#states.every((s) => s.listed)) {
      this.#synced = true;
      for (const w of this.#syncWaiters.splice(0)) w();
    }
  }

  /** Makes the cache match `items` for the kind; `force` re-validates unchanged objects too. */
  #snapshot(state: KindState, items: RawObject[], force: boolean): void {
    const names = new Set(items.map(nameOf));
    for (const name of [...state.seen.keys()]) if (!names.has(name)) this.#delete(state, name);
    for (const r of this.#cache.list(state.kind)) {
      if (!names.has(r.metadata.name)) this.#delete(state, r.metadata.name);
    }
    for (const obj of items) this.#process(state, obj, force);
  }

  #process(state: KindState, obj: RawObject, force: boolean): void {
    const name = nameOf(obj);
    const resourceVersion = obj.metadata?.resourceVersion ?? "";
    const prev = state.seen.get(name);
    if (!force && prev && resourceVersion !== "" && prev.resourceVersion === resourceVersion) return;
    const seen = { resourceVersion, deleting: Boolean(obj.metadata?.deletionTimestamp) };
    state.seen.set(name, seen);

    const key = `${state.kind}/${name}`;
    const checked = validateResource(trimmed(obj));
    const reasons = checked.ok ? semanticProblems(checked.resource, this.#semantic) : checked.errors;
    if (!checked.ok || reasons.length > 0) {
      const problem: SourceProblem = {
        origin: `${this.#namespace}/${name}`,
        kind: state.kind,
        name,
        reason: reasons.join("; "),
      };
      const before = this.#problems.get(key);
      this.#problems.set(key, problem);
      this.#publishProblems();
      if (!before || before.reason !== problem.reason) {
        try {
          this.#onProblem?.(problem);
        } catch {
          // reporting must not break the informer
        }
      }
      // The last good version (if any) stays in the cache.
    } else {
      if (this.#problems.delete(key)) this.#publishProblems();
      this.#cache.upsert(checked.resource);
    }
    this.#notifyWriters(state.kind, name, seen);
  }

  #delete(state: KindState, name: string): void {
    state.seen.delete(name);
    if (this.#problems.delete(`${state.kind}/${name}`)) this.#publishProblems();
    this.#cache.remove(state.kind, name);
    this.#notifyWriters(state.kind, name, undefined);
  }

  #publishProblems(): void {
    this.#cache.setProblems([...this.#problems.values()]);
  }

  // ---- read-your-writes ----

  #seen(kind: ResourceKind, name: string): Seen | undefined {
    return this.#states.find((s) => s.kind === kind)?.seen.get(name);
  }

  #waitVisible(kind: ResourceKind, name: string, resourceVersion: string | undefined): Promise<void> {
    if (!resourceVersion) return Promise.resolve();
    return this.#wait(kind, name, (seen) => seen?.resourceVersion === resourceVersion);
  }

  /** Resolves when `done` holds for the kind/name, or after the visibility timeout. */
  #wait(kind: ResourceKind, name: string, done: (seen: Seen | undefined) => boolean): Promise<void> {
    const state = this.#states.find((s) => s.kind === kind);
    if (!this.#running || !state || done(this.#seen(kind, name))) return Promise.resolve();
    return new Promise((resolve) => {
      const waiter: Waiter = {
        kind,
        name,
        done,
        resolve: () => {
          clearTimeout(timer);
          this.#writeWaiters.delete(waiter);
          resolve();
        },
      };
      const timer = setTimeout(() => waiter.resolve(), this.#writeVisibleTimeoutMs);
      this.#writeWaiters.add(waiter);
    });
  }

  #notifyWriters(kind: ResourceKind, name: string, seen: Seen | undefined): void {
    for (const w of [...this.#writeWaiters]) {
      if (w.kind === kind && w.name === name && w.done(seen)) w.resolve();
    }
  }
}

/**
 * Merge-patches the status subresource of one custom resource. Standalone so a process that only
 * writes status does not need a running source. Throws BadParameterError for a status that does not
 * match the kind's schema, NotFoundError when the object is gone.
 */
export async function patchResourceStatus<K extends ResourceKind>(
  kubeConfig: KubeConfig,
  namespace: string,
  kind: K,
  name: string,
  status: NonNullable<ResourceOf<K>["status"]>,
  api: CustomObjectsApi = kubeConfig.makeApiClient(CustomObjectsApi),
): Promise<void> {
  const checker = statusChecker(kind);
  if (!checker.Check(status)) {
    const first = [...checker.Errors(status)][0];
    throw new BadParameterError(
      `invalid ${kind} status${first ? ` at ${first.path || "(root)"}: ${first.message}` : ""}`,
    );
  }
  try {
    await api.patchNamespacedCustomObjectStatus(
      { ...crCoordinates(kind), namespace, name, body: { status } },
      setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
    );
  } catch (err) {
    throw kubeError(err, `${kind} "${name}" status`);
  }
}
