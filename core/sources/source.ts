// The resource-source seam: a typed, cached view of the platform's resources (Role, User,
// Connector, JoinToken, AgentIdentity), fed either by Kubernetes informers or by a watched folder
// of YAML manifests. Auth and proxy decide from this cache; nothing above it knows which it has.
import type { AnyResource, ResourceKind, ResourceOf } from "../resources/index.ts";

export type SourceEventType = "add" | "update" | "delete";

export interface SourceEvent {
  type: SourceEventType;
  resource: AnyResource;
}

/** A problem with one manifest or object, reported instead of crashing. */
export interface SourceProblem {
  /** file path (folder source) or namespace/name (Kubernetes) */
  origin: string;
  /** document index in a multi-document file, when known */
  document?: number;
  kind?: string;
  name?: string;
  reason: string;
}

export interface ResourceSource {
  /** Begins listing and watching; resolves once started (not necessarily synced). */
  start(): Promise<void>;
  stop(): Promise<void>;
  /** True once every kind has been listed at least once. */
  synced(): boolean;
  /** Resolves when synced; rejects when the signal aborts. */
  waitSynced(signal?: AbortSignal): Promise<void>;
  list<K extends ResourceKind>(kind: K): ResourceOf<K>[];
  get<K extends ResourceKind>(kind: K, name: string): ResourceOf<K> | undefined;
  /** Called for every change after it is applied to the cache. Returns an unsubscribe function. */
  subscribe(listener: (event: SourceEvent) => void): () => void;
  /** Current problems (bad manifests, invalid objects); the last good version is kept. */
  problems(): SourceProblem[];
  /**
   * Seconds each kind has not been known current (Kubernetes: 0 while its watch is open, growing
   * while the apiserver is unreachable). Absent for sources that cannot go stale (a folder).
   */
  staleSeconds?(): Partial<Record<ResourceKind, number>>;
}

/** Write access, for the admin CLI and the operator's status updates. */
export interface ResourceWriter {
  /** Creates or replaces a resource (spec and metadata). */
  apply(resource: AnyResource): Promise<void>;
  /** Deletes; NotFoundError when absent. */
  remove(kind: ResourceKind, name: string): Promise<void>;
}
