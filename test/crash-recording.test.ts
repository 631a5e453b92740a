// A recording upload interrupted by kill -9 (issue 12), with a real `svcd auth` process and the
// agent's own upload code (server/agent/upload.ts): killed auth mid-upload, the agent keeps its
// copy (auth's retry answer while the dead upload's lease lasts is "retry later", not "exists"),
// and the upload completes once the lease lapses; killed agent (a process running the upload)
// mid-upload, the next attempt completes at once. Each time: one recording of that id, its bytes
// exactly the file's, the local copy gone, and a repeated upload refused as a duplicate.
import { spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Backend } from "../core/backend/backend.ts";
import {
  castPathOf,
  metaPathOf,
  RECORDING_FORMAT,
  type RecordingFileMeta,
} from "../server/agent/recorder.ts";
import { uploadAndRemove, uploadPending, uploadRecordingFile } from "../server/agent/upload.ts";
import { type AuthServiceClient, agentMetadata } from "../server/auth/client.ts";
import {
  getRecordingMeta,
  listRecordings,
  readRecording,
  UPLOAD_LEASE_MS,
} from "../server/auth/recordings.ts";
import { type CrashAuth, type CrashEnv, crashEnv, joinNode } from "./crash-fixture.ts";

const root = join(import.meta.dirname, "..");
const quiet = pino({ level: "silent" });
const SIZE = 24 * 1024 * 1024;

let env: CrashEnv;
let auth: CrashAuth;
let node: { agentId: string; certPem: string; keyPem: string };
let agent: AuthServiceClient;
let recordings = "";

/** A finished recording on disk as the recorder leaves it: `<id>.cast` + `<id>.json`. */
async function recordingOnDisk(id: string): Promise<{ meta: RecordingFileMeta; sha: string }> {
  const header = `${JSON.stringify({ version: 2, width: 80, height: 24 })}\n`;
  const body = Buffer.concat([
    Buffer.from(header),
    Buffer.from(randomBytes(SIZE).toString("base64url").slice(0, SIZE)),
  ]);
  const meta: RecordingFileMeta = {
    id,
    user_name: "crash0",
    login: "dev",
    protocol: "ssh",
    format: RECORDING_FORMAT,
    start_unix_ms: Date.now() - 60_000,
    end_unix_ms: Date.now(),
    truncated: false,
  };
  await writeFile(castPathOf(recordings, id), body);
  await writeFile(metaPathOf(recordings, id), JSON.stringify(meta));
  return { meta, sha: createHash("sha256").update(body).digest("hex") };
}

/** Resolves once auth has stored a few chunks of the recording (the upload is under way). */
async function uploadUnderWay(state: Backend, id: string): Promise<void> {
  const end = Date.now() + 60_000;
  while ((await state.range(`recording-data/${id}/`, { limit: 3 })).length < 3) {
    if (Date.now() > end) throw new Error("the upload never started");
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Exactly one recording of `id`, with exactly these bytes. */
async function stored(id: string, sha: string): Promise<void> {
  const state = await env.backend();
  try {
    const all = await listRecordings(state, { limit: 500, offset: 0 });
    expect(all.items.filter((r) => r.id === id)).toHaveLength(1);
    const meta = await getRecordingMeta(state, id);
    expect(meta.size_bytes).toBeGreaterThan(SIZE);
    const hash = createHash("sha256");
    for await (const chunk of readRecording(state, meta)) hash.update(chunk);
    expect(hash.digest("hex")).toBe(sha);
    expect(await state.range(`recordings/${id}.pending`)).toEqual([]);
  } finally {
    await state.close();
  }
  expect(existsSync(castPathOf(recordings, id))).toBe(false);
  expect(existsSync(metaPathOf(recordings, id))).toBe(false);
}

/** A second upload of a delivered recording is refused as a duplicate (the agent drops its copy). */
async function duplicateRefused(meta: RecordingFileMeta): Promise<void> {
  const copy = join(env.dir, `${meta.id}.copy`);
  await writeFile(copy, "duplicate\n");
  await expect(uploadRecordingFile(agent, agentMetadata(node.agentId), meta, copy)).rejects.toThrow(
    "a recording with this id exists",
  );
}

beforeAll(async () => {
  env = await crashEnv({ backend: { type: "sqlite" }, users: 1, tokens: 1 });
  recordings = join(env.dir, "recordings");
  await mkdir(recordings);
  auth = await env.start();
  node = await joinNode(env.client(), env.tokens[0] ?? "", "recorder");
  agent = env.clientWith(node);
}, 120_000);

afterAll(async () => {
  await env?.close();
});

describe("recording upload across kill -9", () => {
  it("auth killed mid-upload: the agent keeps its copy, and the retry after the lease delivers it once", async () => {
    const { meta, sha } = await recordingOnDisk("crash-auth-0001");
    const state = await env.backend();
    const upload = uploadAndRemove(agent, () => agentMetadata(node.agentId), recordings, meta, quiet);
    try {
      await uploadUnderWay(state, meta.id);
    } finally {
      await state.close();
    }
    const killedAt = Date.now();
    await auth.kill();
    expect(await upload).toBe(false);
    auth = await env.start();
    // The dead upload's lease still stands: "retry later", and the local copy stays.
    expect(await uploadAndRemove(agent, () => agentMetadata(node.agentId), recordings, meta, quiet)).toBe(
      false,
    );
    expect(existsSync(castPathOf(recordings, meta.id))).toBe(true);
    // The agent retries on its heartbeat; the first retry after the lease lapses delivers it.
    let delivered = false;
    while (!delivered && Date.now() - killedAt < UPLOAD_LEASE_MS + 30_000) {
      await new Promise((r) => setTimeout(r, 1_000));
      delivered = await uploadAndRemove(agent, () => agentMetadata(node.agentId), recordings, meta, quiet);
    }
    expect(delivered).toBe(true);
    await stored(meta.id, sha);
    await duplicateRefused(meta);
  }, 120_000);

  it("agent killed mid-upload: the restarted agent's upload delivers it once", async () => {
    const { meta, sha } = await recordingOnDisk("crash-agent-0001");
    const worker = () =>
      spawn(
        process.execPath,
        [
          join(root, "test", "crash-upload-worker.ts"),
          JSON.stringify({ address: env.address, caPem: env.hostCaPem, ...node, dir: recordings }),
        ],
        { stdio: ["ignore", "pipe", "inherit"] },
      );
    const first = worker();
    const firstExit = new Promise((r) => first.once("exit", r));
    const state = await env.backend();
    try {
      await uploadUnderWay(state, meta.id);
    } finally {
      await state.close();
    }
    first.kill("SIGKILL");
    await firstExit;
    expect(existsSync(castPathOf(recordings, meta.id))).toBe(true);
    // Auth saw the stream end without its last message: the upload was aborted and its lease freed.
    const second = worker();
    let out = "";
    second.stdout?.on("data", (d: Buffer) => {
      out += d.toString();
    });
    const code = await new Promise((r) => second.once("exit", r));
    expect(code).toBe(0);
    expect(out.trim()).toBe("DONE 1");
    await stored(meta.id, sha);
    await duplicateRefused(meta);
  }, 120_000);

  it("agent killed mid-session: the restarted agent uploads what was recorded, cut at the last whole line", async () => {
    const id = "crash-session-0001";
    const rec = spawn(
      process.execPath,
      [join(root, "test", "crash-recorder-worker.ts"), JSON.stringify({ dir: recordings, id })],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
    const exited = new Promise((r) => rec.once("exit", r));
    await new Promise<void>((resolve, reject) => {
      rec.stdout?.on("data", (d: Buffer) => {
        if (d.toString().includes("RECORDING")) resolve();
      });
      rec.once("exit", () => reject(new Error("the recorder exited early")));
    });
    rec.kill("SIGKILL");
    await exited;
    const sent = await uploadPending(agent, () => agentMetadata(node.agentId), recordings, quiet);
    expect(sent).toBe(1);
    const state = await env.backend();
    try {
      const meta = await getRecordingMeta(state, id);
      expect(meta).toMatchObject({ user_name: "crash0", login: "dev" });
      expect(meta.end_unix_ms).toBeGreaterThanOrEqual(meta.start_unix_ms);
      const chunks: Buffer[] = [];
      for await (const chunk of readRecording(state, meta)) chunks.push(chunk);
      const text = Buffer.concat(chunks).toString("utf8");
      expect(text.endsWith("\n")).toBe(true);
      const lines = text.trimEnd().split("\n");
      expect(JSON.parse(lines[0] ?? "")).toMatchObject({ version: 2 });
      expect(lines.length).toBeGreaterThan(100);
      for (const l of lines.slice(1)) expect(JSON.parse(l)[1]).toBe("o");
    } finally {
      await state.close();
    }
    expect(existsSync(castPathOf(recordings, id))).toBe(false);
  }, 120_000);
});
