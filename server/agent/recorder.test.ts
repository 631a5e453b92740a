// The asciicast v2 writer on its own: header, output split inside a UTF-8 sequence, resize events,
// times from the clock, and the sidecar handed to onFinished.
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ManualClock } from "../../core/clock.ts";
import { userOfKeyId } from "./audit.ts";
import { type RecordingFileMeta, SessionRecorder } from "./recorder.ts";

let dir = "";
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "svc-recorder-"));
});
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("SessionRecorder", () => {
  it("writes asciicast v2 with whole characters, resizes and clock times", async () => {
    const clock = new ManualClock(new Date("2026-01-01T00:00:00Z"));
    const finished = new Promise<{ meta: RecordingFileMeta; path: string }>((resolve) => {
      const rec = new SessionRecorder({
        dir,
        clock,
        logger: pino({ level: "silent" }),
        userOf: (i) => userOfKeyId(i.keyId),
        onFinished: (meta, path) => resolve({ meta, path }),
      });
      const sink = rec.start({
        sessionId: "11111111-2222-3333-4444-555555555555",
        login: "root",
        keyId: "user=alice session=abcd",
        remoteAddress: "127.0.0.1",
        pty: { term: "xterm-256color", cols: 120, rows: 30 },
      });
      const euro = Buffer.from("€", "utf8"); // 3 bytes, split across two chunks
      sink.output(Buffer.concat([Buffer.from("price: "), euro.subarray(0, 1)]));
      clock.advance(1500);
      sink.output(Buffer.concat([euro.subarray(1), Buffer.from("5\r\n")]));
      clock.advance(500);
      sink.resize(100, 40);
      sink.end({ code: 0 });
    });
    const { meta, path } = await finished;
    expect(meta).toMatchObject({
      id: "11111111-2222-3333-4444-555555555555",
      user_name: "alice",
      login: "root",
      format: "asciicast-v2",
      start_unix_ms: Date.parse("2026-01-01T00:00:00Z"),
      end_unix_ms: Date.parse("2026-01-01T00:00:02Z"),
      truncated: false,
    });
    const lines = (await readFile(path, "utf8")).trimEnd().split("\n");
    expect(JSON.parse(lines[0] ?? "")).toMatchObject({
      version: 2,
      width: 120,
      height: 30,
      timestamp: 1767225600,
      env: { TERM: "xterm-256color" },
    });
    expect(lines.slice(1).map((l) => JSON.parse(l))).toEqual([
      [0, "o", "price: "],
      [1.5, "o", "€5\r\n"],
      [2, "r", "100x40"],
    ]);
  });
});

describe("userOfKeyId", () => {
  it("reads the user from the key id forms auth writes", () => {
    expect(userOfKeyId("user=alice session=0123")).toBe("alice");
    expect(userOfKeyId("user:bob:session:0123")).toBe("bob");
    expect(userOfKeyId("bot:robot:gen:3")).toBe("bot:robot");
    expect(userOfKeyId("id-from-ssh-keygen")).toBe("id-from-ssh-keygen");
  });
});
