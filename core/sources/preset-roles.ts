// The preset Roles (admin, access) as part of a source, for Kubernetes mode with preset roles on
// (`source.preset_roles`, the operator's --preset-roles; the chart's `presetRoles` sets both): a
// preset exists whether or not its custom resource does, and a Role custom resource of the same
// name replaces it. Auth, proxy and the operator then agree on which Roles exist: with the switch
// off, only custom resources count everywhere.
import { presets, type ResourceKind, type ResourceOf, type Role } from "../resources/index.ts";
import type { ResourceSource, ResourceWriter, SourceEvent, SourceProblem } from "./source.ts";

/** Names of the preset Roles. */
export const PRESET_ROLE_NAMES: readonly string[] = presets().map((r) => r.metadata.name);

const deleting = (r: { metadata: { deletionTimestamp?: unknown } }) => Boolean(r.metadata.deletionTimestamp);

export class WithPresetRoles implements ResourceSource, ResourceWriter {
  readonly #inner: ResourceSource & ResourceWriter;
  readonly #presets: ReadonlyMap<string, Role>;

  constructor(inner: ResourceSource & ResourceWriter) {
    this.#inner = inner;
    this.#presets = new Map(presets().map((r) => [r.metadata.name, r]));
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
    const items = this.#inner.list(kind);
    if (kind !== "Role") return items;
    // A replacing Role whose deletion has begun gives way to the preset at once.
    const kept = items.filter((r) => !(this.#presets.has(r.metadata.name) && deleting(r)));
    const names = new Set(kept.map((r) => r.metadata.name));
    const missing = [...this.#presets.values()].filter((p) => !names.has(p.metadata.name));
    return [...kept, ...(missing as ResourceOf<K>[])];
  }

  get<K extends ResourceKind>(kind: K, name: string): ResourceOf<K> | undefined {
    const found = this.#inner.get(kind, name);
    if (kind !== "Role" || (found && !deleting(found))) return found;
    return (this.#presets.get(name) as ResourceOf<K> | undefined) ?? found;
  }

  subscribe(listener: (event: SourceEvent) => void): () => void {
    return this.#inner.subscribe((event) => {
      const preset =
        event.resource.kind === "Role" ? this.#presets.get(event.resource.metadata.name) : undefined;
      // The custom resource that replaced a preset is gone: the preset is back.
      if (preset && (event.type === "delete" || deleting(event.resource)))
        listener({ type: "update", resource: preset });
      else listener(event);
    });
  }

  problems(): SourceProblem[] {
    return this.#inner.problems();
  }

  staleSeconds(): Partial<Record<ResourceKind, number>> {
    return this.#inner.staleSeconds?.() ?? {};
  }

  apply: ResourceWriter["apply"] = (resource) => this.#inner.apply(resource);
  remove: ResourceWriter["remove"] = (kind, name) => this.#inner.remove(kind, name);
}
