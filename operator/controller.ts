// The controller: one informer per kind feeding keys ("Kind/name") into the work queue, and the
// queue's handler dispatching each key to its kind's reconciler. Informers only say *which* object
// to look at; a reconciler always reads the object itself (level-triggered, so a missed event is
// repaired by the next event or the resync). A Role appearing or going re-queues the kinds that
// name roles, so UnknownRole clears (or appears) without waiting for the resync. Watches ask for
// bookmarks and report whether they are open (core/sources/watch-health.ts), for readiness.
import {
  CustomObjectsApi,
  type Informer,
  type KubeConfig,
  type KubernetesListObject,
  type KubernetesObject,
  ListWatch,
  type ObjectCache,
} from "@kubernetes/client-node";
import type { Logger } from "pino";
import type { Clock } from "../core/clock.ts";
import { UnavailableError } from "../core/errors.ts";
import { isResourceKind, RESOURCE_KINDS, type ResourceKind } from "../core/resources/index.ts";
import { crCoordinates, crPath, kubeError } from "../core/sources/kube-api.ts";
import { PRESET_ROLE_NAMES } from "../core/sources/preset-roles.ts";
import { BookmarkWatch, Freshness } from "../core/sources/watch-health.ts";
import type { SessionRevoker, TokenUsage } from "./auth-hooks.ts";
import type { EventRecorder } from "./events.ts";
import type { ObjectClient } from "./kube.ts";
import type { OperatorMetrics } from "./metrics.ts";
import { type ReconcileResult, WorkQueue } from "./queue.ts";
import { type ReconcileContext, reconcilers } from "./reconcilers/index.ts";

export interface ControllerOptions {
  kubeConfig: KubeConfig;
  namespace: string;
  objects: ObjectClient;
  events: EventRecorder;
  clock: Clock;
  logger: Logger;
  sessionRevoker?: SessionRevoker | undefined;
  tokenUsage?: TokenUsage | undefined;
  /** Whether the CA Secrets exist; no key is reconciled while this is false. */
  caReady: () => boolean;
  /** Every object is reconciled again this often (default 5 min). */
  resyncMs?: number;
  /** How soon to look again at a missing Secret (default 30 s). */
  recheckMs?: number;
  concurrency?: number;
  metrics?: OperatorMetrics | undefined;
  backoffBaseMs?: number;
  backoffMaxMs?: number;
  /** Whether the preset Roles count as existing without their custom resources (default true). */
  presetRoles?: boolean;
  /** A deleted User's finalizer goes after this long even when auth never answered (default 2 min). */
  finalizerTimeoutMs?: number;
  /** …or after this many failed tries, whichever comes first (default 10). */
  finalizerMaxTries?: number;
}

type ListableInformer = Informer<KubernetesObject> & ObjectCache<KubernetesObject>;

/** Kinds whose validity depends on which Roles exist. */
const ROLE_DEPENDENTS: readonly ResourceKind[] = ["User", "Connector", "AgentIdentity"];

export function keyOf(kind: ResourceKind, name: string): string {
  return `${kind}/${name}`;
}

export function parseKey(key: string): { kind: ResourceKind; name: string } | undefined {
  const slash = key.indexOf("/");
  const kind = key.slice(0, slash);
  if (slash < 0 || !isResourceKind(kind)) return undefined;
  return { kind, name: key.slice(slash + 1) };
}

export class Controller {
  readonly #o: ControllerOptions;
  readonly #queue: WorkQueue;
  readonly #ctx: ReconcileContext;
  readonly #api: CustomObjectsApi;
  readonly #informers = new Map<ResourceKind, ListableInformer>();
  readonly #listed = new Set<ResourceKind>();
  readonly #retries = new Set<NodeJS.Timeout>();
  #running = false;
  readonly #freshness = new Freshness<ResourceKind>(RESOURCE_KINDS);

  constructor(o: ControllerOptions) {
    this.#o = o;
    this.#api = o.kubeConfig.makeApiClient(CustomObjectsApi);
    this.#ctx = {
      objects: o.objects,
      events: o.events,
      clock: o.clock,
      logger: o.logger,
      roleNames: () => this.#roleNames(),
      sessionRevoker: o.sessionRevoker,
      tokenUsage: o.tokenUsage,
      recheckMs: o.recheckMs ?? 30_000,
      finalizerAttempts: new Map(),
      finalizerTimeoutMs: o.finalizerTimeoutMs ?? 120_000,
      finalizerMaxTries: o.finalizerMaxTries ?? 10,
      ...(o.metrics
        ? { onFinalizerSkipped: (kind, finalizer) => o.metrics?.finalizersSkipped.inc({ kind, finalizer }) }
        : {}),
    };
    this.#queue = new WorkQueue({
      handler: (key) => this.#reconcile(key),
      concurrency: o.concurrency ?? 2,
      backoffBaseMs: o.backoffBaseMs ?? 200,
      backoffMaxMs: o.backoffMaxMs ?? 60_000,
      resyncMs: o.resyncMs ?? 5 * 60_000,
      resyncKeys: () => this.#allKeys(),
      onError: (key, error, failures, retryInMs) =>
        o.logger.warn(
          { key, failures, retryInMs, err: error instanceof Error ? error.message : String(error) },
          "reconcile failed; will retry",
        ),
    });
  }

  /** Starts the informers, waits until each has listed once, then starts reconciling. */
  async start(signal?: AbortSignal): Promise<void> {
    if (this.#running) return;
    this.#running = true;
    for (const kind of RESOURCE_KINDS) this.#launch(kind);
    // Informers retry on their own (each refused list is logged), so wait for as long as this
    // process leads: reconciling from a partial view would report false UnknownRoles.
    while (this.#listed.size < RESOURCE_KINDS.length) {
      if (!this.#running || signal?.aborted) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    this.#queue.start();
    this.#o.logger.info({ namespace: this.#o.namespace }, "controller started");
  }

  async stop(): Promise<void> {
    if (!this.#running) return;
    this.#running = false;
    for (const t of this.#retries) clearTimeout(t);
    this.#retries.clear();
    await Promise.all([...this.#informers.values()].map((i) => i.stop().catch(() => undefined)));
    this.#informers.clear();
    await this.#queue.stop();
  }

  /** Every kind listed once by this controller. */
  synced(): boolean {
    return this.#running && this.#listed.size === RESOURCE_KINDS.length;
  }

  /** Seconds each kind's informer has not been known current (0 while its watch is open). */
  staleSeconds(): Record<ResourceKind, number> {
    return this.#freshness.staleSeconds();
  }

  /** Waits until no key is waiting or being reconciled (tests). */
  idle(): Promise<void> {
    return this.#queue.idle();
  }

  #launch(kind: ResourceKind): void {
    const listFn = async (): Promise<KubernetesListObject<KubernetesObject>> => {
      const list = (await this.#api.listNamespacedCustomObject({
        ...crCoordinates(kind),
        namespace: this.#o.namespace,
      })) as KubernetesListObject<KubernetesObject>;
      if (this.#running) this.#listed.add(kind);
      this.#freshness.current(kind);
      return list;
    };
    const informer: ListableInformer = new ListWatch(
      crPath(this.#o.namespace, kind),
      new BookmarkWatch(this.#o.kubeConfig, this.#freshness.hooks(kind)),
      listFn,
      false,
    );
    this.#informers.set(kind, informer);
    const enqueue = (obj: KubernetesObject) => {
      const name = obj.metadata?.name;
      if (name) this.#queue.add(keyOf(kind, name));
    };
    informer.on("add", (obj) => {
      enqueue(obj);
      if (kind === "Role") this.#requeueRoleDependents();
    });
    informer.on("update", enqueue);
    informer.on("delete", (obj) => {
      enqueue(obj);
      if (kind === "Role") this.#requeueRoleDependents();
    });
    let failures = 0;
    informer.on("connect", () => {
      failures = 0;
    });
    informer.on("error", (err: unknown) => {
      if (!this.#running) return; // includes the "aborted" error stop() causes
      this.#freshness.closed(kind);
      failures++;
      const delayMs = Math.min(30_000, 500 * 2 ** Math.min(failures - 1, 10));
      this.#o.logger.warn(
        { kind, delayMs, err: kubeError(err, `${kind} list/watch`).message },
        "list/watch failed; restarting",
      );
      // client-node's informer stops on errors other than a normal watch end; start it again.
      const t = setTimeout(() => {
        this.#retries.delete(t);
        if (this.#running) informer.start().catch(() => undefined);
      }, delayMs);
      this.#retries.add(t);
    });
    informer.start().catch(() => undefined); // failures also arrive as "error" events
  }

  #requeueRoleDependents(): void {
    for (const kind of ROLE_DEPENDENTS) {
      for (const obj of this.#informers.get(kind)?.list() ?? []) {
        if (obj.metadata?.name) this.#queue.add(keyOf(kind, obj.metadata.name));
      }
    }
  }

  #roleNames(): ReadonlySet<string> {
    const names = new Set(this.#o.presetRoles === false ? [] : PRESET_ROLE_NAMES);
    for (const obj of this.#informers.get("Role")?.list() ?? []) {
      if (obj.metadata?.name && !obj.metadata.deletionTimestamp) names.add(obj.metadata.name);
    }
    return names;
  }

  *#allKeys(): Iterable<string> {
    for (const [kind, informer] of this.#informers) {
      for (const obj of informer.list()) if (obj.metadata?.name) yield keyOf(kind, obj.metadata.name);
    }
  }

  async #reconcile(key: string): Promise<ReconcileResult | undefined> {
    const parsed = parseKey(key);
    if (!parsed) return undefined; // cannot happen for keys we made; never retry junk
    if (!this.#o.caReady()) throw new UnavailableError("CA Secrets do not exist yet");
    const metrics = this.#o.metrics;
    metrics?.queueBusy.set(this.#queue.busy);
    const timer = metrics?.reconcileSeconds.startTimer({ kind: parsed.kind });
    try {
      const result = await reconcilers[parsed.kind](this.#ctx, parsed.name);
      metrics?.reconciles.inc({ kind: parsed.kind, result: "ok" });
      return result;
    } catch (err) {
      metrics?.reconciles.inc({ kind: parsed.kind, result: "error" });
      throw err;
    } finally {
      timer?.();
    }
  }
}
