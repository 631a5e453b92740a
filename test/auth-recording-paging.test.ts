// Recording playback is paged: auth reads one 64 KiB chunk from the backend per step, only when
// the gRPC stream has room for it, so a large recording and a slow client never put the whole
// recording in auth's memory. Counted on a real SQLite backend behind the real auth server; the
// proxy's route streams the same way (server/proxy/recordings-route.ts).
import { randomBytes } from "node:crypto";
import type { ClientWritableStream } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Backend } from "../core/backend/backend.ts";
import { SqliteBackend } from "../core/backend/sqlite.ts";
import { systemClock } from "../core/clock.ts";
import type { AuthServiceClient } from "../proto/generated/svc/v1/AuthService.ts";
import type { GetRecordingResponse__Output } from "../proto/generated/svc/v1/GetRecordingResponse.ts";
import type { UploadRecordingRequest } from "../proto/generated/svc/v1/UploadRecordingRequest.ts";
import { agentMetadata, callUnary, userMetadata } from "../server/auth/client.ts";
import { type AuthTestEnv, PASSWORD, startAuthEnv } from "./auth-fixture.ts";

const MIB = 1024 * 1024;
const SIZE = 5 * MIB + 12_345;
const DATA_PREFIX = "recording-data/";

/** Backend reads of recording data: how many calls, and the most bytes one call returned. */
const reads = { calls: 0, maxBytes: 0 };

function counting(inner: Backend): Backend {
  const bytesOf = (v: unknown): number =>
    typeof (v as { b64?: unknown })?.b64 === "string"
      ? Buffer.byteLength((v as { b64: string }).b64, "base64")
      : 0;
  return new Proxy(inner, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if (prop === "get") {
        return async (key: string) => {
          const item = await target.get(key);
          if (key.startsWith(DATA_PREFIX)) {
            reads.calls++;
            reads.maxBytes = Math.max(reads.maxBytes, bytesOf(item.value));
          }
          return item;
        };
      }
      if (prop === "range") {
        return async (prefix: string, opts?: { limit?: number }) => {
          const items = await target.range(prefix, opts);
          if (prefix.startsWith(DATA_PREFIX)) {
            reads.calls++;
            reads.maxBytes = Math.max(
              reads.maxBytes,
              items.reduce((n, i) => n + bytesOf(i.value), 0),
            );
          }
          return items;
        };
      }
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

let env: AuthTestEnv;
let agent: AuthServiceClient;
let admin = "";
const data = randomBytes(SIZE);

beforeAll(async () => {
  env = await startAuthEnv({
    backend: counting(new SqliteBackend({ path: ":memory:", clock: systemClock, sweepIntervalMs: 0 })),
  });
  agent = await env.agentClient("node-a");
  const r = await callUnary(env.client, "AuthenticateLocal", { username: "alice", password: PASSWORD });
  admin = r.session?.session_id ?? "";
  await new Promise<void>((resolve, reject) => {
    const call: ClientWritableStream<UploadRecordingRequest> = agent.UploadRecording(
      agentMetadata("node-a"),
      (err) => (err ? reject(err) : resolve()),
    );
    call.write({
      metadata: {
        id: "rec-large-0001",
        user_name: "bob",
        protocol: "ssh",
        login: "bob",
        start_unix_ms: Date.now(),
        end_unix_ms: Date.now() + 1000,
        format: "asciicast-v2",
      },
    });
    for (let o = 0; o < SIZE; o += 100_000) call.write({ chunk: data.subarray(o, o + 100_000) });
    call.end();
  });
}, 120_000);

afterAll(async () => {
  await env?.close();
});

describe("GetRecording", () => {
  it("reads the backend one chunk at a time and stops reading while the client does not read", async () => {
    reads.calls = 0;
    reads.maxBytes = 0;
    const call = env.client.GetRecording({ id: "rec-large-0001" }, userMetadata(admin));
    const parts: Buffer[] = [];
    let messages = 0;
    let largest = 0;
    const firstChunk = new Promise<void>((resolve) => {
      call.on("data", (msg: GetRecordingResponse__Output) => {
        if (!msg.chunk) return;
        messages++;
        largest = Math.max(largest, msg.chunk.length);
        parts.push(msg.chunk);
        if (messages === 1) {
          call.pause();
          resolve();
        }
      });
    });
    const ended = new Promise<void>((resolve, reject) => {
      call.on("end", resolve);
      call.on("error", reject);
    });
    await firstChunk;
    // The client holds still: auth must not run ahead through the whole recording.
    await new Promise((r) => setTimeout(r, 1000));
    const chunks = Math.ceil(SIZE / (64 * 1024));
    const readWhilePaused = reads.calls;
    expect(readWhilePaused).toBeLessThan(chunks / 2);
    call.resume();
    await ended;
    expect(Buffer.concat(parts).equals(data)).toBe(true);
    expect(reads.calls).toBe(chunks);
    expect(reads.maxBytes).toBeLessThanOrEqual(64 * 1024);
    expect(largest).toBeLessThanOrEqual(64 * 1024);
    expect(messages).toBe(chunks);
  });
});
