// Uploads finished recordings to auth (UploadRecording: metadata, then 64 KiB chunks, with
// back-pressure) and removes the local copy once auth has it. A recording that could not be sent
// stays on disk and is retried by `uploadPending` (at start and on every heartbeat tick). Retries
// are safe: auth answers AlreadyExists only for a complete recording of that id (the local copy
// then goes), and Unavailable while another upload of it holds the lease (server/auth/recordings.ts).
import { createReadStream } from "node:fs";
import { readdir, readFile, rename, stat, truncate, unlink, writeFile } from "node:fs/promises";
import type { Metadata, ServiceError } from "@grpc/grpc-js";
import type { Logger } from "pino";
import { isAlreadyExists } from "../../core/errors.ts";
import type { UploadRecordingResponse } from "../../proto/generated/svc/v1/UploadRecordingResponse.ts";
import { type AuthServiceClient, fromGrpcError } from "../auth/client.ts";
import { castPathOf, metaPathOf, type RecordingFileMeta } from "./recorder.ts";

const CHUNK = 64 * 1024;

export async function uploadRecordingFile(
  client: AuthServiceClient,
  metadata: Metadata,
  meta: RecordingFileMeta,
  castPath: string,
  timeoutMs = 120_000,
): Promise<UploadRecordingResponse> {
  // Announced up front: auth stores the recording only if exactly this many bytes arrive.
  const size = (await stat(castPath)).size;
  return new Promise<UploadRecordingResponse>((resolve, reject) => {
    const call = client.UploadRecording(
      metadata,
      { deadline: Date.now() + timeoutMs },
      (err: ServiceError | null, res?: UploadRecordingResponse) => {
        if (err) reject(fromGrpcError(err));
        else resolve(res ?? { id: meta.id });
      },
    );
    call.write({
      metadata: {
        id: meta.id,
        user_name: meta.user_name,
        protocol: meta.protocol,
        login: meta.login,
        start_unix_ms: meta.start_unix_ms,
        end_unix_ms: meta.end_unix_ms,
        format: meta.format,
        size_bytes: size,
      },
    });
    const file = createReadStream(castPath, { highWaterMark: CHUNK });
    file.on("data", (chunk) => {
      if (!call.write({ chunk })) {
        file.pause();
        call.once("drain", () => file.resume());
      }
    });
    file.on("end", () => call.end());
    file.on("error", (err) => {
      call.cancel();
      reject(err);
    });
  });
}

/** Uploads one finished recording and deletes it locally; false when it must be retried later. */
export async function uploadAndRemove(
  client: AuthServiceClient,
  metadata: () => Metadata,
  dir: string,
  meta: RecordingFileMeta,
  logger: Logger,
): Promise<boolean> {
  const castPath = castPathOf(dir, meta.id);
  try {
    await uploadRecordingFile(client, metadata(), meta, castPath);
  } catch (err) {
    // Sent before (a lost answer): auth has it, so the local copy can go.
    if (!isAlreadyExists(err)) {
      logger.warn(
        { err: err instanceof Error ? err.message : String(err), recording: meta.id },
        "recording upload failed; will retry",
      );
      return false;
    }
  }
  await unlink(castPath).catch(() => undefined);
  await unlink(metaPathOf(dir, meta.id)).catch(() => undefined);
  return true;
}

/** Retries every complete recording left in `dir` (those with a metadata sidecar). */
export async function uploadPending(
  client: AuthServiceClient,
  metadata: () => Metadata,
  dir: string,
  logger: Logger,
  skip: ReadonlySet<string> = new Set(),
): Promise<number> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return 0;
  }
  let sent = 0;
  for (const name of names) {
    if (!name.endsWith(".json")) continue;
    const id = name.slice(0, -".json".length);
    if (skip.has(id)) continue;
    let meta: RecordingFileMeta;
    try {
      meta = JSON.parse(await readFile(metaPathOf(dir, id), "utf8")) as RecordingFileMeta;
    } catch {
      continue;
    }
    if (meta.id !== id) continue;
    if (meta.in_progress) {
      meta = await finishInterrupted(dir, meta).catch(() => meta);
      if (meta.in_progress) continue;
    }
    if (await uploadAndRemove(client, metadata, dir, meta, logger)) sent++;
  }
  return sent;
}

/**
 * A recording of a session the agent died in (its sidecar still says in progress, and no live
 * session of this process owns it): cut after the last whole line, marked truncated, ended at the
 * file's last write, and then uploaded like any other.
 */
async function finishInterrupted(dir: string, meta: RecordingFileMeta): Promise<RecordingFileMeta> {
  const castPath = castPathOf(dir, meta.id);
  const data = await readFile(castPath);
  const whole = data.lastIndexOf(0x0a) + 1;
  if (whole < data.length) await truncate(castPath, whole);
  const { in_progress: _, ...rest } = meta;
  const done: RecordingFileMeta = {
    ...rest,
    end_unix_ms: Math.max(meta.start_unix_ms, Math.floor((await stat(castPath)).mtimeMs)),
    truncated: true,
  };
  const sidecar = metaPathOf(dir, meta.id);
  await writeFile(`${sidecar}.tmp`, JSON.stringify(done), { mode: 0o600 });
  await rename(`${sidecar}.tmp`, sidecar);
  return done;
}
