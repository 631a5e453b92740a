// Where the CA rotation state lives: one small mutable document per cluster, written only by
// compare-and-swap so two auth replicas never both move a phase. Private keys are not here: they
// stay in the create-once CaKeyStore; this document only names which entries sign and are trusted.
import { randomBytes } from "node:crypto";
import { mkdir, open, readFile, rename, stat, unlink } from "node:fs/promises";
import { join } from "node:path";
import { BadParameterError, UnavailableError } from "../errors.ts";
import { parseDocument, type RotationDocument } from "./rotation.ts";

export interface StoredRotation {
  /** opaque: a counter in the file store, the resourceVersion in the Secret store */
  revision: string;
  doc: RotationDocument;
}

export interface RotationStateStore {
  /** the stored document, or undefined when no rotation ever happened */
  read(): Promise<StoredRotation | undefined>;
  /** stores `doc` if the stored revision is still `expected` (undefined: nothing stored) */
  compareAndSwap(expected: string | undefined, doc: RotationDocument): Promise<"swapped" | "conflict">;
}

/** For tests and single-process tools: the document lives in memory only. */
export class MemoryRotationStateStore implements RotationStateStore {
  #stored: StoredRotation | undefined;
  #n = 0;
  async read(): Promise<StoredRotation | undefined> {
    return this.#stored
      ? { revision: this.#stored.revision, doc: structuredClone(this.#stored.doc) }
      : undefined;
  }
  async compareAndSwap(expected: string | undefined, doc: RotationDocument): Promise<"swapped" | "conflict"> {
    if (this.#stored?.revision !== expected) return "conflict";
    this.#n += 1;
    this.#stored = { revision: String(this.#n), doc: structuredClone(doc) };
    return "swapped";
  }
}

const isCode = (err: unknown, code: string): boolean => (err as { code?: unknown } | null)?.code === code;

export const ROTATION_FILE = "ca-rotation.json";
const LOCK_FILE = ".ca-rotation.lock";
/** A lock older than this was left by a crashed process (a swap holds it for milliseconds). */
const STALE_LOCK_MS = 10_000;
const LOCK_WAIT_MS = 5_000;

/**
 * Embedded mode: `ca-rotation.json` beside the CA key files, `{revision, state}`. A swap holds an
 * exclusive lock file (O_EXCL) while it compares the revision and replaces the file atomically
 * (temp file, fsync, rename), so replicas sharing the data folder serialize their swaps.
 */
export class FileRotationStateStore implements RotationStateStore {
  readonly #dir: string;
  constructor(dir: string) {
    this.#dir = dir;
  }

  async #readRaw(): Promise<{ revision: number; doc: RotationDocument } | undefined> {
    let text: string;
    try {
      text = await readFile(join(this.#dir, ROTATION_FILE), "utf8");
    } catch (err) {
      if (isCode(err, "ENOENT")) return undefined;
      throw err;
    }
    let raw: { revision?: unknown; state?: unknown };
    try {
      raw = JSON.parse(text) as { revision?: unknown; state?: unknown };
    } catch (err) {
      throw new BadParameterError(`${ROTATION_FILE} is not valid JSON`, { cause: err });
    }
    if (typeof raw.revision !== "number" || !Number.isInteger(raw.revision))
      throw new BadParameterError(`${ROTATION_FILE} lacks a revision`);
    return { revision: raw.revision, doc: parseDocument(raw.state) };
  }

  async read(): Promise<StoredRotation | undefined> {
    const r = await this.#readRaw();
    return r ? { revision: String(r.revision), doc: r.doc } : undefined;
  }

  async #lock(): Promise<() => Promise<void>> {
    const path = join(this.#dir, LOCK_FILE);
    const deadline = Date.now() + LOCK_WAIT_MS;
    for (;;) {
      try {
        const fh = await open(path, "wx", 0o600);
        await fh.close();
        return () => unlink(path).catch(() => undefined);
      } catch (err) {
        if (!isCode(err, "EEXIST")) throw err;
      }
      const age = await stat(path).then(
        (s) => Date.now() - s.mtimeMs,
        () => 0,
      );
      if (age > STALE_LOCK_MS) await unlink(path).catch(() => undefined);
      else if (Date.now() > deadline)
        throw new UnavailableError("the CA rotation state is locked by another process");
      else await new Promise((r) => setTimeout(r, 10 + Math.random() * 20));
    }
  }

  async compareAndSwap(expected: string | undefined, doc: RotationDocument): Promise<"swapped" | "conflict"> {
    await mkdir(this.#dir, { recursive: true, mode: 0o700 });
    const unlock = await this.#lock();
    try {
      const now = await this.#readRaw();
      if ((now === undefined ? undefined : String(now.revision)) !== expected) return "conflict";
      const body = JSON.stringify({ revision: (now?.revision ?? 0) + 1, state: doc }, null, 2);
      const final = join(this.#dir, ROTATION_FILE);
      const tmp = join(this.#dir, `.${ROTATION_FILE}.${randomBytes(6).toString("hex")}.tmp`);
      const fh = await open(tmp, "wx", 0o600);
      try {
        await fh.writeFile(`${body}\n`);
        await fh.sync();
      } finally {
        await fh.close();
      }
      await rename(tmp, final).catch(async (err: unknown) => {
        await unlink(tmp).catch(() => undefined);
        throw err;
      });
      const dh = await open(this.#dir, "r");
      try {
        await dh.sync();
      } finally {
        await dh.close();
      }
      return "swapped";
    } finally {
      await unlock();
    }
  }
}
