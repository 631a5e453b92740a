// Session recordings uploaded by agents: metadata under recordings/<id>, data in 64 KiB chunks
// under recording-data/<id>/<seq> (base64 in the JSON backend) so every replica can serve them.
import type { Backend } from "../../core/backend/backend.ts";
import {
  AlreadyExistsError,
  BadParameterError,
  isAlreadyExists,
  LimitExceededError,
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

/** Writes one recording as data arrives; `finish` makes it visible in lists. */
export class RecordingWriter {
  readonly #backend: Backend;
  readonly #meta: Omit<RecordingMeta, "size_bytes">;
  #buffer: Buffer[] = [];
  #buffered = 0;
  #size = 0;
  #seq = 0;

  constructor(backend: Backend, meta: Omit<RecordingMeta, "size_bytes">) {
    checkRecordingMeta(meta);
    this.#backend = backend;
    this.#meta = meta;
  }

  async begin(): Promise<void> {
    try {
      await this.#backend.create(
        `${META_PREFIX}${this.#meta.id}.pending`,
        { pending: true },
        { ttlMs: 3600_000 },
      );
    } catch (err) {
      if (isAlreadyExists(err)) throw new AlreadyExistsError("a recording with this id is being uploaded");
      throw err;
    }
    const existing = await this.#backend.range(`${META_PREFIX}${this.#meta.id}`, { limit: 2 });
    if (existing.some((i) => i.key === META_PREFIX + this.#meta.id)) {
      throw new AlreadyExistsError("a recording with this id exists");
    }
  }

  async write(chunk: Buffer): Promise<void> {
    this.#size += chunk.length;
    if (this.#size > MAX_RECORDING_BYTES) throw new LimitExceededError("recording is too large");
    this.#buffer.push(chunk);
    this.#buffered += chunk.length;
    while (this.#buffered >= CHUNK_BYTES) await this.#flush(CHUNK_BYTES);
  }

  async #flush(n: number): Promise<void> {
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
    const meta: RecordingMeta = { ...this.#meta, size_bytes: this.#size };
    await this.#backend.create(META_PREFIX + meta.id, meta as unknown as JsonObject);
    await this.#backend.delete(`${META_PREFIX}${meta.id}.pending`).catch(() => undefined);
    return meta;
  }

  async abort(): Promise<void> {
    await this.#backend.deleteRange(`${DATA_PREFIX}${this.#meta.id}/`).catch(() => undefined);
    await this.#backend.delete(`${META_PREFIX}${this.#meta.id}.pending`).catch(() => undefined);
  }
}

export async function listRecordings(
  backend: Backend,
  f: RecordingFilter,
): Promise<{ items: RecordingMeta[]; total: number }> {
  const all = (await backend.range(META_PREFIX))
    .filter((i) => !i.key.endsWith(".pending"))
    .map((i) => i.value as unknown as RecordingMeta)
    .filter(
      (r) => (f.user ? r.user_name === f.user : true) && (f.protocol ? r.protocol === f.protocol : true),
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
