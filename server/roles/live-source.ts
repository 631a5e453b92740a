// The view of a resource source that auth and proxy decide from in Kubernetes mode: objects whose
// deletion has begun (metadata.deletionTimestamp set, held by a finalizer) are gone for every
// access decision, even though the source keeps them so the operator can run its delete path.
// A change into "deleting" is announced as a delete, so listeners (e.g. auth revoking a User's
// sessions) react at once rather than when the finalizer is finally removed.
import type { AnyResource, ResourceKind, ResourceOf } from "../../core/resources/index.ts";
import type { ResourceSource, SourceEvent, SourceProblem } from "../../core/sources/source.ts";

export function isDeleting(resource: AnyResource): boolean {
  return Boolean(resource.metadata.deletionTimestamp);
}

export class LiveResources implements ResourceSource {
  readonly #inner: ResourceSource;

  constructor(inner: ResourceSource) {
    this.#inner = inner;
  }

  start(): Promise<void> {
    return this.#inner.start();
  }

  stop(): Promise<void> {
    return this.#inner.stop();
  }

  synced(): boolean {
    return this.#inner.synced();
  }

  waitSynced(signal?: AbortSignal): Promise<void> {
    return this.#inner.waitSynced(signal);
  }

  list<K extends ResourceKind>(kind: K): ResourceOf<K>[] {
    return this.#inner.list(kind).filter((r) => !isDeleting(r));
  }

  get<K extends ResourceKind>(kind: K, name: string): ResourceOf<K> | undefined {
    const r = this.#inner.get(kind, name);
    return r && !isDeleting(r) ? r : undefined;
  }

  subscribe(listener: (event: SourceEvent) => void): () => void {
    return this.#inner.subscribe((event) => {
      if (event.type === "delete") {
        // Already announced when its deletion began.
        if (!isDeleting(event.resource)) listener(event);
        return;
      }
      if (isDeleting(event.resource)) {
        listener({ type: "delete", resource: event.resource });
        return;
      }
      listener(event);
    });
  }

  problems(): SourceProblem[] {
    return this.#inner.problems();
  }

  staleSeconds(): Partial<Record<ResourceKind, number>> {
    return this.#inner.staleSeconds?.() ?? {};
  }
}
