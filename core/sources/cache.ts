// The in-memory cache shared by every resource source: a map per kind, listeners, and problems.
// Sources feed it; readers (auth, proxy) only ever read from it, so a decision never waits on I/O.
import type { AnyResource, ResourceKind, ResourceOf } from "../resources/index.ts";
import type { SourceEvent, SourceProblem } from "./source.ts";

export class ResourceCache {
  readonly #byKind = new Map<ResourceKind, Map<string, AnyResource>>();
  readonly #listeners = new Set<(event: SourceEvent) => void>();
  #problems: SourceProblem[] = [];

  list<K extends ResourceKind>(kind: K): ResourceOf<K>[] {
    const m = this.#byKind.get(kind);
    return m ? ([...m.values()] as ResourceOf<K>[]) : [];
  }

  get<K extends ResourceKind>(kind: K, name: string): ResourceOf<K> | undefined {
    return this.#byKind.get(kind)?.get(name) as ResourceOf<K> | undefined;
  }

  /** Inserts or replaces; emits add or update (nothing when the object is unchanged). */
  upsert(resource: AnyResource): void {
    const kind = resource.kind as ResourceKind;
    let m = this.#byKind.get(kind);
    if (!m) {
      m = new Map();
      this.#byKind.set(kind, m);
    }
    const prev = m.get(resource.metadata.name);
    if (prev && JSON.stringify(prev) === JSON.stringify(resource)) return;
    m.set(resource.metadata.name, resource);
    this.#emit({ type: prev ? "update" : "add", resource });
  }

  remove(kind: ResourceKind, name: string): void {
    const m = this.#byKind.get(kind);
    const prev = m?.get(name);
    if (!m || !prev) return;
    m.delete(name);
    this.#emit({ type: "delete", resource: prev });
  }

  /** Makes the cache hold exactly `resources` for `kind`, emitting the differences. */
  replaceKind(kind: ResourceKind, resources: AnyResource[]): void {
    const next = new Map(resources.map((r) => [r.metadata.name, r]));
    for (const name of [...(this.#byKind.get(kind)?.keys() ?? [])]) {
      if (!next.has(name)) this.remove(kind, name);
    }
    for (const r of next.values()) this.upsert(r);
  }

  subscribe(listener: (event: SourceEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  setProblems(problems: SourceProblem[]): void {
    this.#problems = problems;
  }

  problems(): SourceProblem[] {
    return [...this.#problems];
  }

  #emit(event: SourceEvent): void {
    for (const l of this.#listeners) {
      try {
        l(event);
      } catch {
        // A listener's failure must not stop the others or corrupt the cache.
      }
    }
  }
}
