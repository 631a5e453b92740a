// Where CA private material lives. Kept tiny on purpose: a file store here (embedded mode) and a
// Kubernetes Secret store elsewhere. A CA is created once and never overwritten.
import { randomBytes } from "node:crypto";
import { chmod, link, mkdir, open, readFile, unlink } from "node:fs/promises";
import { join } from "node:path";
import { BadParameterError } from "../errors.ts";

export interface CaKeyStore {
  get(name: string): Promise<Uint8Array | undefined>;
  /** stores `data` under `name` unless something is already there; never overwrites */
  createOnce(name: string, data: Uint8Array): Promise<"created" | "exists">;
}

const NAME = /^[a-z0-9][a-z0-9-]{0,62}$/;

export function checkCaName(name: string): string {
  if (!NAME.test(name)) throw new BadParameterError(`invalid CA key name ${JSON.stringify(name)}`);
  return name;
}

const isCode = (err: unknown, code: string): boolean => (err as { code?: unknown } | null)?.code === code;

/** Files in one folder (mode 0700), one file per CA (mode 0600). */
export class FileCaKeyStore implements CaKeyStore {
  readonly #dir: string;
  constructor(dir: string) {
    this.#dir = dir;
  }

  async #ensureDir(): Promise<void> {
    await mkdir(this.#dir, { recursive: true, mode: 0o700 });
    await chmod(this.#dir, 0o700);
  }

  async get(name: string): Promise<Uint8Array | undefined> {
    try {
      return await readFile(join(this.#dir, `${checkCaName(name)}.json`));
    } catch (err) {
      if (isCode(err, "ENOENT")) return undefined;
      throw err;
    }
  }

  async createOnce(name: string, data: Uint8Array): Promise<"created" | "exists"> {
    await this.#ensureDir();
    const final = join(this.#dir, `${checkCaName(name)}.json`);
    // Write a private temp file (O_EXCL, 0600), flush it, then link() it into place: link fails
    // with EEXIST when the CA exists, so a reader never sees a half-written file and a CA is
    // never replaced, even by two processes racing.
    const tmp = join(this.#dir, `.${name}.${randomBytes(8).toString("hex")}.tmp`);
    const fh = await open(tmp, "wx", 0o600);
    try {
      await fh.writeFile(data);
      await fh.sync();
    } finally {
      await fh.close();
    }
    try {
      await link(tmp, final);
      const dh = await open(this.#dir, "r");
      try {
        await dh.sync();
      } finally {
        await dh.close();
      }
      return "created";
    } catch (err) {
      if (isCode(err, "EEXIST")) return "exists";
      throw err;
    } finally {
      await unlink(tmp);
    }
  }
}
