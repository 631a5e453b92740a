// The folder implementation of the resource source: multi-document YAML manifests of the same kinds
// and fields as the custom resources. It reloads on change; a bad document is reported (file,
// document index, reason) and the last good version of what that document held is kept, so an
// editing mistake never revokes or grants access by accident and never crashes the process.
import { type FSWatcher, watch } from "node:fs";
import { mkdir, readdir, readFile, rm } from "node:fs/promises";
import { join, relative } from "node:path";
import { parseAllDocuments, stringify } from "yaml";
import { writeFileAtomic } from "../atomic-file.ts";
import { BadParameterError, NotFoundError } from "../errors.ts";
import type { AnyResource, ResourceKind, ResourceOf } from "../resources/index.ts";
import { validateResource } from "../resources/index.ts";
import { ResourceCache } from "./cache.ts";
import type { ResourceSource, ResourceWriter, SourceEvent, SourceProblem } from "./source.ts";

const KINDS: ResourceKind[] = ["Role", "User", "Connector", "JoinToken", "AgentIdentity", "Lock", "App"];
/** Where resources written through the writer (admin CLI) live, one file each. */
export const MANAGED_DIR = "managed";
const MAX_FILE_BYTES = 4 * 1024 * 1024;

export interface FolderSourceOptions {
  dir: string;
  /** Debounce for bursts of file events. */
  debounceMs?: number;
  onProblem?: (problem: SourceProblem) => void;
}

type DocKey = string; // `${file}#${index}`

export class FolderSource implements ResourceSource, ResourceWriter {
  readonly #dir: string;
  readonly #debounceMs: number;
  readonly #onProblem: ((p: SourceProblem) => void) | undefined;
  readonly #cache = new ResourceCache();
  /** Last good resource per document, kept when that document later turns bad. */
  #lastGood = new Map<DocKey, AnyResource>();
  /** Which file each (kind/name) came from, to refuse writes to hand-written files. */
  #origin = new Map<string, string>();
  #synced = false;
  #syncWaiters: Array<() => void> = [];
  #watcher: FSWatcher | undefined;
  #timer: NodeJS.Timeout | undefined;
  #reloading: Promise<void> = Promise.resolve();

  constructor(opts: FolderSourceOptions) {
    this.#dir = opts.dir;
    this.#debounceMs = opts.debounceMs ?? 100;
    this.#onProblem = opts.onProblem;
  }

  async start(): Promise<void> {
    await mkdir(this.#dir, { recursive: true });
    await this.reload();
    this.#watcher = watch(this.#dir, { recursive: true }, () => this.#schedule());
    this.#watcher.on("error", () => this.#schedule());
  }

  async stop(): Promise<void> {
    this.#watcher?.close();
    this.#watcher = undefined;
    if (this.#timer) clearTimeout(this.#timer);
    await this.#reloading;
  }

  synced(): boolean {
    return this.#synced;
  }

  waitSynced(signal?: AbortSignal): Promise<void> {
    if (this.#synced) return Promise.resolve();
    return new Promise((resolve, reject) => {
      this.#syncWaiters.push(resolve);
      signal?.addEventListener("abort", () => reject(signal.reason), { once: true });
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

  /** Re-reads the folder now; serialised so overlapping reloads never interleave. */
  reload(): Promise<void> {
    this.#reloading = this.#reloading.then(
      () => this.#reloadOnce(),
      () => this.#reloadOnce(),
    );
    return this.#reloading;
  }

  async apply(resource: AnyResource): Promise<void> {
    const checked = validateResource(resource);
    if (!checked.ok) throw new BadParameterError(`invalid ${resource.kind}: ${checked.errors.join("; ")}`);
    const file = this.#managedPath(resource.kind as ResourceKind, resource.metadata.name);
    const existing = this.#origin.get(`${resource.kind}/${resource.metadata.name}`);
    if (existing && existing !== file) {
      throw new BadParameterError(
        `${resource.kind} "${resource.metadata.name}" is defined in ${relative(this.#dir, existing)}; edit that file instead`,
      );
    }
    await mkdir(join(this.#dir, MANAGED_DIR), { recursive: true });
    await writeFileAtomic(file, stringify(checked.resource), 0o600);
    await this.reload();
  }

  async remove(kind: ResourceKind, name: string): Promise<void> {
    const origin = this.#origin.get(`${kind}/${name}`);
    if (!origin) throw new NotFoundError(`${kind} "${name}" not found`);
    if (origin !== this.#managedPath(kind, name)) {
      throw new BadParameterError(
        `${kind} "${name}" is defined in ${relative(this.#dir, origin)}; edit that file instead`,
      );
    }
    await rm(origin, { force: true });
    await this.reload();
  }

  #managedPath(kind: ResourceKind, name: string): string {
    return join(this.#dir, MANAGED_DIR, `${kind.toLowerCase()}-${name}.yaml`);
  }

  #schedule(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      this.reload().catch(() => undefined);
    }, this.#debounceMs);
  }

  async #reloadOnce(): Promise<void> {
    const files = await listManifests(this.#dir);
    const problems: SourceProblem[] = [];
    const next = new Map<string, { resource: AnyResource; origin: string }>();
    const nextGood = new Map<DocKey, AnyResource>();

    for (const file of files) {
      const docs = await this.#readFile(file, problems);
      if (docs === undefined) {
        // Unreadable file (syntax error, too big): keep every last-good resource it held.
        for (const [key, r] of this.#lastGood) {
          if (key.startsWith(`${file}#`)) {
            nextGood.set(key, r);
            this.#take(next, r, file, problems);
          }
        }
        continue;
      }
      docs.forEach((doc, index) => {
        const key: DocKey = `${file}#${index}`;
        if (doc.error) {
          problems.push({ origin: file, document: index, reason: doc.error });
          const prev = this.#lastGood.get(key);
          if (prev) {
            nextGood.set(key, prev);
            this.#take(next, prev, file, problems);
          }
          return;
        }
        if (doc.value === null || doc.value === undefined) return; // empty document
        const checked = validateResource(doc.value);
        if (!checked.ok) {
          const meta = describe(doc.value);
          problems.push({ origin: file, document: index, ...meta, reason: checked.errors.join("; ") });
          const prev = this.#lastGood.get(key);
          if (prev) {
            nextGood.set(key, prev);
            this.#take(next, prev, file, problems);
          }
          return;
        }
        nextGood.set(key, checked.resource);
        this.#take(next, checked.resource, file, problems);
      });
    }

    this.#lastGood = nextGood;
    this.#origin = new Map([...next].map(([k, v]) => [k, v.origin]));
    for (const kind of KINDS) {
      this.#cache.replaceKind(
        kind,
        [...next.values()].filter((v) => v.resource.kind === kind).map((v) => v.resource),
      );
    }
    this.#cache.setProblems(problems);
    for (const p of problems) this.#onProblem?.(p);
    if (!this.#synced) {
      this.#synced = true;
      for (const w of this.#syncWaiters.splice(0)) w();
    }
  }

  #take(
    next: Map<string, { resource: AnyResource; origin: string }>,
    resource: AnyResource,
    file: string,
    problems: SourceProblem[],
  ): void {
    const id = `${resource.kind}/${resource.metadata.name}`;
    const prior = next.get(id);
    if (prior) {
      problems.push({
        origin: file,
        kind: resource.kind,
        name: resource.metadata.name,
        reason: `duplicate ${id}: already defined in ${relative(this.#dir, prior.origin)}; this one is ignored`,
      });
      return;
    }
    next.set(id, { resource, origin: file });
  }

  async #readFile(
    file: string,
    problems: SourceProblem[],
  ): Promise<Array<{ value?: unknown; error?: string }> | undefined> {
    let text: string;
    try {
      text = await readFile(file, "utf8");
    } catch (err) {
      problems.push({ origin: file, reason: `cannot read: ${(err as Error).message}` });
      return undefined;
    }
    if (text.length > MAX_FILE_BYTES) {
      problems.push({ origin: file, reason: `file larger than ${MAX_FILE_BYTES} bytes` });
      return undefined;
    }
    return parseAllDocuments(text).map((d) =>
      d.errors.length > 0 ? { error: d.errors.map((e) => e.message).join("; ") } : { value: d.toJS() },
    );
  }
}

function describe(value: unknown): { kind?: string; name?: string } {
  if (typeof value !== "object" || value === null) return {};
  const v = value as { kind?: unknown; metadata?: { name?: unknown } };
  const out: { kind?: string; name?: string } = {};
  if (typeof v.kind === "string") out.kind = v.kind;
  if (typeof v.metadata?.name === "string") out.name = v.metadata.name;
  return out;
}

async function listManifests(dir: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (d: string): Promise<void> => {
    let entries: import("node:fs").Dirent[];
    try {
      entries = await readdir(d, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      if (e.name.startsWith(".")) continue;
      const p = join(d, e.name);
      if (e.isDirectory()) await walk(p);
      else if (e.isFile() && /\.ya?ml$/.test(e.name)) out.push(p);
    }
  };
  await walk(dir);
  return out.sort();
}
