// A resource source held entirely in memory: for tests and for tools that build resources in code.
// It validates like the other sources, so it never holds what they would refuse.
import { NotFoundError } from "../errors.ts";
import type { AnyResource, ResourceKind, ResourceOf } from "../resources/index.ts";
import { parseResource } from "../resources/index.ts";
import { ResourceCache } from "./cache.ts";
import type { ResourceSource, ResourceWriter, SourceEvent, SourceProblem } from "./source.ts";

export class MemorySource implements ResourceSource, ResourceWriter {
  readonly #cache = new ResourceCache();

  constructor(initial: unknown[] = []) {
    for (const r of initial) this.#cache.upsert(parseResource(r));
  }

  async start(): Promise<void> {}
  async stop(): Promise<void> {}
  synced(): boolean {
    return true;
  }
  async waitSynced(): Promise<void> {}
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
  async apply(resource: AnyResource): Promise<void> {
    this.#cache.upsert(parseResource(resource));
  }
  async remove(kind: ResourceKind, name: string): Promise<void> {
    if (!this.#cache.get(kind, name)) throw new NotFoundError(`${kind} "${name}" not found`);
    this.#cache.remove(kind, name);
  }
}
