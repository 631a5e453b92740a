// Session recordings uploaded by agents: metadata under recordings/<id>, data in 64 KiB chunks
// under recording-data/<id>/<seq> (base64 in the JSON backend) so every replica can serve them.
import type { Backend } from "../../core/backend/backend.ts";
import {
  AlreadyExistsError,
  BadParameterError,
  isAlreadyExists,
  isCompareFailed,
  isNotFound,
  LimitExceededError,
  UnavailableError,
} from "../../core/errors.ts";
import type { JsonObject } from "../../core/json.ts";

const META_PREFIX = "recordings/";
const DATA_PREFIX = "recording-data/";
export const MAX_RECORDING_BYTES = 64 * 1024 * 1024;
const CHUNK_BYTES = 64 * 1024;

export interface RecordingMeta {
  id: string;
  user_name: string;
  protocol: string;
  node: string;
  login: string;
  start_unix_ms: number;
  end_unix_ms: number;
  size_bytes: number;
  format: string;
}

export interface RecordingFilter {
  user?: string;
  protocol?: string;
  node?: string;
  /** start time bounds: start inclusive, end exclusive (as audit search) */
  startTime?: Date;
  endTime?: Date;
  limit: number;
  offset: number;
}

const ID = /^[A-Za-z0-9_-]{8,64}$/;

export function checkRecordingMeta(m: Omit<RecordingMeta, "size_bytes">): void {
  if (!ID.test(m.id)) throw new BadParameterError("recording id must be 8..64 characters of [A-Za-z0-9_-]");
  for (const [k, v] of [
    ["user_name", m.user_name],
    ["protocol", m.protocol],
    ["login", m.login],
    ["format", m.format],
  ] as const) {
    if (v.length === 0 || v.length > 253)
      throw new BadParameterError(`${k} is required (at most 253 characters)`);
  }
  if (m.end_unix_ms < m.start_unix_ms) throw new BadParameterError("end_unix_ms is before start_unix_ms");
}

/**
 * How long an upload holds its recording id without progress. A crashed auth (or agent) leaves
 * the lease behind; it expires after this, so the agent's retry takes over instead of being told
 * the recording exists. Renewed while data arrives.
 */
export const UPLOAD_LEASE_MS = 15_000;

/**
 * Writes one recording as data arrives; `finish` makes it visible in lists. An upload is
 * idempotent by recording id: a complete recording is never written twice (AlreadyExists, which
 * the agent takes as "delivered"), a live upload of the same id is refused as Unavailable (retry
 * later, keep the local copy), and an upload that died half-way is restarted from its first
 * byte (its chunks are overwritten; the metadata, written last, is what makes it visible).
 */
export class RecordingWriter {
  readonly #backend: Backend;
  readonly #meta: Omit<RecordingMeta, "size_bytes">;
  readonly #leaseMs: number;
  #buffer: Buffer[] = [];
  #buffered = 0;
  #size = 0;
  #seq = 0;
  /** revision of our lease key while we hold it */
  #lease: number | undefined;
  #renewedAt = 0;

  constructor(backend: Backend, meta: Omit<RecordingMeta, "size_bytes">, opts: { leaseMs?: number } = {}) {
    checkRecordingMeta(meta);
    this.#backend = backend;
    this.#meta = meta;
    this.#leaseMs = opts.leaseMs ?? UPLOAD_LEASE_MS;
  }

  get #leaseKey(): string {
    return `${META_PREFIX}${this.#meta.id}.pending`;
  }

  async begin(): Promise<void> {
    await this.#refuseIfComplete();
    try {
      const item = await this.#backend.create(this.#leaseKey, { pending: true }, { ttlMs: this.#leaseMs });
      this.#lease = item.revision;
      this.#renewedAt = Date.now();
    } catch (err) {
      if (isAlreadyExists(err))
        throw new UnavailableError("a recording with this id is being uploaded; retry later");
      throw err;
    }
    // A concurrent upload may have finished between the check and the lease.
    try {
      await this.#refuseIfComplete();
    } catch (err) {
      await this.#release();
      throw err;
    }
  }

  async #refuseIfComplete(): Promise<void> {
    const existing = await this.#backend.range(`${META_PREFIX}${this.#meta.id}`, { limit: 2 });
    if (existing.some((i) => i.key === META_PREFIX + this.#meta.id)) {
      throw new AlreadyExistsError("a recording with this id exists");
    }
  }

  /** Extends the lease (at most every third of its length); fails when another upload took it. */
  async #renew(force: boolean): Promise<void> {
    if (this.#lease === undefined) throw new UnavailableError("the upload lease is not held");
    if (!force && Date.now() - this.#renewedAt < this.#leaseMs / 3) return;
    try {
      const item = await this.#backend.compareAndSwap(
        this.#leaseKey,
        this.#lease,
        { pending: true },
        {
          ttlMs: this.#leaseMs,
        },
      );
      this.#lease = item.revision;
      this.#renewedAt = Date.now();
    } catch (err) {
      if (isNotFound(err) || isCompareFailed(err)) {
        this.#lease = undefined;
        throw new UnavailableError("the upload lease expired and was taken over; retry later");
      }
      throw err;
    }
  }

  /** Bytes received so far. */
  get size(): number {
    return this.#size;
  }

  async write(chunk: Buffer): Promise<void> {
    this.#size += chunk.length;
    if (this.#size > MAX_RECORDING_BYTES) throw new LimitExceededError("recording is too large");
    this.#buffer.push(chunk);
    this.#buffered += chunk.length;
    while (this.#buffered >= CHUNK_BYTES) await this.#flush(CHUNK_BYTES);
  }

  async #flush(n: number): Promise<void> {
    await this.#renew(false);
    const all = Buffer.concat(this.#buffer);
    const out = all.subarray(0, n);
    const rest = all.subarray(n);
    this.#buffer = rest.length > 0 ? [rest] : [];
    this.#buffered = rest.length;
    const key = chunkKey(this.#meta.id, this.#seq++);
    await this.#backend.put(key, { b64: out.toString("base64") });
  }

  async finish(): Promise<RecordingMeta> {
    if (this.#buffered > 0) await this.#flush(this.#buffered);
    // Still ours: no other upload is overwriting these chunks.
    await this.#renew(true);
    const meta: RecordingMeta = { ...this.#meta, size_bytes: this.#size };
    await this.#backend.create(META_PREFIX + meta.id, meta as unknown as JsonObject);
    await this.#release();
    return meta;
  }

  async abort(): Promise<void> {
    // Only the lease holder removes the chunks: after a takeover they belong to the new upload.
    if (this.#lease === undefined) return;
    const held = await this.#backend.get(this.#leaseKey).catch(() => undefined);
    if (held?.revision !== this.#lease) return;
    await this.#backend.deleteRange(`${DATA_PREFIX}${this.#meta.id}/`).catch(() => undefined);
    await this.#release();
  }

  async #release(): Promise<void> {
    if (this.#lease === undefined) return;
    const rev = this.#lease;
    this.#lease = undefined;
    await this.#backend.compareAndDelete(this.#leaseKey, rev).catch(() => undefined);
  }
}

export async function listRecordings(
  backend: Backend,
  f: RecordingFilter,
): Promise<{ items: RecordingMeta[]; total: number }> {
  const from = f.startTime?.getTime();
  const to = f.endTime?.getTime();
  const all = (await backend.range(META_PREFIX))
    .filter((i) => !i.key.endsWith(".pending"))
    .map((i) => i.value as unknown as RecordingMeta)
    .filter(
      (r) =>
        (f.user ? r.user_name === f.user : true) &&
        (f.protocol ? r.protocol === f.protocol : true) &&
        (f.node ? r.node === f.node : true) &&
        (from === undefined || r.start_unix_ms >= from) &&
        (to === undefined || r.start_unix_ms < to),
    )
    .sort((a, b) => b.start_unix_ms - a.start_unix_ms || (a.id < b.id ? -1 : 1));
  return { items: all.slice(f.offset, f.offset + f.limit), total: all.length };
}

export async function getRecordingMeta(backend: Backend, id: string): Promise<RecordingMeta> {
  if (!ID.test(id)) throw new BadParameterError("recording id is malformed");
  return (await backend.get(META_PREFIX + id)).value as unknown as RecordingMeta;
}

function chunkKey(id: string, seq: number): string {
  return `${DATA_PREFIX}${id}/${String(seq).padStart(8, "0")}`;
}

/**
 * The recording's bytes, one 64 KiB chunk per backend read, read only when the consumer asks for
 * the next one: GetRecording writes each with back-pressure, so a slow client holds one chunk in
 * auth's memory, not the recording. Every chunk but the last is exactly CHUNK_BYTES (the writer
 * flushes at that size), so the chunk count follows from the size in the metadata.
 */
export async function* readRecording(backend: Backend, meta: RecordingMeta): AsyncGenerator<Buffer> {
  const chunks = Math.ceil(meta.size_bytes / CHUNK_BYTES);
  for (let seq = 0; seq < chunks; seq++) {
    const item = await backend.get(chunkKey(meta.id, seq));
    yield Buffer.from(String((item.value as JsonObject)["b64"]), "base64");
  }
}
