// Records every SSH session as asciicast v2 (https://docs.asciinema.org/manual/asciicast/v2/):
// a JSON header line, then one JSON array per event: [seconds, "o", text] for output and
// [seconds, "r", "COLSxROWS"] for a resize. The file is written to the agent's data folder while
// the session runs (nothing grows in memory) and handed to `onFinished` when it ends; the
// recording id is the SSH session id, so session.end can name it.
import { createWriteStream, type WriteStream } from "node:fs";
import { mkdir, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { StringDecoder } from "node:string_decoder";
import type { Logger } from "pino";
import type { Clock } from "../../core/clock.ts";
import type { ExitInfo } from "./session-process.ts";
import type { SessionInfo, SessionObserver, SessionSink } from "./ssh-server.ts";

export const RECORDING_FORMAT = "asciicast-v2";
/** auth refuses larger uploads (server/auth/recordings.ts); output beyond it is not recorded. */
export const MAX_RECORDING_BYTES = 64 * 1024 * 1024 - 64 * 1024;

/** The sidecar next to `<id>.cast`, also the upload metadata. */
export interface RecordingFileMeta {
  id: string;
  user_name: string;
  login: string;
  protocol: "ssh";
  format: typeof RECORDING_FORMAT;
  start_unix_ms: number;
  end_unix_ms: number;
  truncated: boolean;
  /**
   * Written when the session starts and dropped when it ends: a sidecar still marked so after
   * the agent restarts belongs to a session the agent died in (see upload.ts finishInterrupted).
   */
  in_progress?: boolean;
}

export interface SessionRecorderOptions {
  /** folder for recordings waiting for upload (created 0700) */
  dir: string;
  clock: Clock;
  logger: Logger;
  /** who the session belongs to (from the certificate key id) */
  userOf: (info: SessionInfo) => string;
  /** called once the file is complete on disk */
  onFinished: (meta: RecordingFileMeta, castPath: string) => void;
  /** called instead when the file could not be completed */
  onFailed?: (id: string) => void;
}

export const castPathOf = (dir: string, id: string): string => join(dir, `${id}.cast`);
export const metaPathOf = (dir: string, id: string): string => join(dir, `${id}.json`);

export class SessionRecorder implements SessionObserver {
  readonly #o: SessionRecorderOptions;
  #dirReady: Promise<unknown> | undefined;

  constructor(o: SessionRecorderOptions) {
    this.#o = o;
  }

  start(info: SessionInfo): SessionSink {
    const o = this.#o;
    this.#dirReady ??= mkdir(o.dir, { recursive: true, mode: 0o700 });
    const started = o.clock.now().getTime();
    const castPath = castPathOf(o.dir, info.sessionId);
    let out: WriteStream | undefined;
    const queued: string[] = [];
    let size = 0;
    let truncated = false;
    const emit = (line: string): void => {
      if (truncated) return;
      const bytes = Buffer.byteLength(line);
      if (size + bytes > MAX_RECORDING_BYTES) {
        truncated = true;
        return;
      }
      size += bytes;
      if (out) out.write(line);
      else queued.push(line);
    };
    const opened = this.#dirReady.then(async () => {
      out = createWriteStream(castPath, { flags: "wx", mode: 0o600 });
      out.on("error", (err) =>
        o.logger.warn({ err: err.message, sessionId: info.sessionId }, "recording write failed"),
      );
      for (const l of queued.splice(0)) out.write(l);
      // Marks the file as a recording in progress, so a restarted agent still uploads what it has.
      await writeSidecar(o.dir, {
        id: info.sessionId,
        user_name: o.userOf(info),
        login: info.login,
        protocol: "ssh",
        format: RECORDING_FORMAT,
        start_unix_ms: started,
        end_unix_ms: started,
        truncated: false,
        in_progress: true,
      });
    });
    const header = {
      version: 2,
      width: info.pty?.cols ?? 80,
      height: info.pty?.rows ?? 24,
      timestamp: Math.floor(started / 1000),
      ...(info.command !== undefined ? { command: info.command } : {}),
      env: { TERM: info.pty?.term || "xterm", SHELL: "" },
    };
    emit(`${JSON.stringify(header)}\n`);
    // Output arrives in arbitrary chunks; the decoder keeps a split UTF-8 sequence for the next one.
    const decoder = new StringDecoder("utf8");
    const at = (): number => Math.max(0, (o.clock.now().getTime() - started) / 1000);
    const event = (code: "o" | "r", data: string): void => {
      emit(`${JSON.stringify([Number(at().toFixed(6)), code, data])}\n`);
    };
    let ended = false;
    return {
      output: (data) => {
        const text = decoder.write(data);
        if (text.length > 0) event("o", text);
      },
      resize: (cols, rows) => event("r", `${cols}x${rows}`),
      end: (_exit: ExitInfo) => {
        if (ended) return;
        ended = true;
        const rest = decoder.end();
        if (rest.length > 0) event("o", rest);
        const meta: RecordingFileMeta = {
          id: info.sessionId,
          user_name: o.userOf(info),
          login: info.login,
          protocol: "ssh",
          format: RECORDING_FORMAT,
          start_unix_ms: started,
          end_unix_ms: Math.max(started, o.clock.now().getTime()),
          truncated,
        };
        opened
          .then(
            () =>
              new Promise<void>((resolve, reject) => {
                out?.once("error", reject);
                out?.end(() => resolve());
              }),
          )
          .then(() => writeSidecar(o.dir, meta))
          .then(
            () => o.onFinished(meta, castPath),
            (err: unknown) => {
              o.logger.error(
                { err: err instanceof Error ? err.message : String(err), sessionId: meta.id },
                "recording could not be completed",
              );
              o.onFailed?.(meta.id);
            },
          );
      },
    };
  }
}

/**
 * The sidecar marks the recording complete and ready for upload, so it appears whole or not at
 * all: an agent killed while writing it must not leave a truncated one that is skipped forever.
 */
async function writeSidecar(dir: string, meta: RecordingFileMeta): Promise<void> {
  const path = metaPathOf(dir, meta.id);
  await writeFile(`${path}.tmp`, JSON.stringify(meta), { mode: 0o600 });
  await rename(`${path}.tmp`, path);
}
