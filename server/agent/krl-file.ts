// `svcd agent --krl-file PATH`: keeps the cluster's OpenSSH revocation list (ExportKrl) in a file a
// local sshd reads through RevokedKeys (docs/locks.md "Agentless nodes (KRL)"). Refreshed when the
// trust snapshot changes (a lock added, removed or expired, a CA key added) and on a slow timer as
// a safety net; written only when auth's digest changes, atomically (temp + rename, mode 0644), so
// sshd, which re-reads the file on every authentication, never reads half of it.
import type { Logger } from "pino";
import { writeFileAtomic } from "../../core/atomic-file.ts";

export interface KrlFileOptions {
  path: string;
  /** one ExportKrl call */
  fetch: () => Promise<{ krl: Uint8Array; digest: string }>;
  logger: Logger;
  /** safety-net refresh period; default 5 min */
  intervalMs?: number;
  /** retry after a failed refresh; default 10 s */
  retryMs?: number;
  /**
   * after a snapshot, fetch once more this much later (default 5 s): another auth replica may
   * answer ExportKrl before its own copy of the locks has caught up with the snapshot's
   */
  settleMs?: number;
}

export class KrlFile {
  readonly #o: KrlFileOptions;
  #written: string | undefined;
  #running: Promise<void> | undefined;
  #again = false;
  #timer: NodeJS.Timeout | undefined;
  #closed = false;
  #settle = false;

  constructor(o: KrlFileOptions) {
    this.#o = o;
  }

  /** The digest of the KRL last written (undefined before the first write). */
  get digest(): string | undefined {
    return this.#written;
  }

  start(): void {
    void this.refresh();
  }

  /** A new trust snapshot arrived: fetch now, and once more after settleMs. */
  onSnapshot(): Promise<void> {
    this.#settle = true;
    return this.refresh();
  }

  /** Fetches and writes if changed; calls during a refresh run once more after it. */
  refresh(): Promise<void> {
    if (this.#closed) return Promise.resolve();
    if (this.#running) {
      this.#again = true;
      return this.#running;
    }
    this.#running = this.#once().finally(() => {
      this.#running = undefined;
      if (this.#again && !this.#closed) {
        this.#again = false;
        void this.refresh();
      }
    });
    return this.#running;
  }

  async #once(): Promise<void> {
    let next = this.#o.intervalMs ?? 300_000;
    if (this.#settle) {
      this.#settle = false;
      next = Math.min(next, this.#o.settleMs ?? 5_000);
    }
    try {
      const res = await this.#o.fetch();
      if (res.digest !== this.#written && !this.#closed) {
        await writeFileAtomic(this.#o.path, res.krl, 0o644);
        this.#written = res.digest;
        this.#o.logger.info({ path: this.#o.path, digest: res.digest.slice(0, 16) }, "KRL file written");
      }
    } catch (err) {
      next = this.#o.retryMs ?? 10_000;
      // The file keeps its last content: sshd goes on refusing what it refused (a missing file
      // on the first start makes sshd refuse every key, which fails closed).
      this.#o.logger.warn(
        { path: this.#o.path, err: err instanceof Error ? err.message : String(err) },
        "KRL refresh failed; keeping the last file",
      );
    }
    if (this.#closed) return;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = setTimeout(() => void this.refresh(), next);
    this.#timer.unref();
  }

  async close(): Promise<void> {
    this.#closed = true;
    if (this.#timer) clearTimeout(this.#timer);
    await this.#running?.catch(() => undefined);
  }
}
