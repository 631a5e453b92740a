// Recording playback through the real proxy over HTTPS streams end to end: the proxy hands each
// page auth sends on to the HTTP client as it comes (server/proxy/recordings-route.ts), and auth
// reads the next 64 KiB page from the backend only when the stream has room (GetRecording). So a
// multi-MiB recording is never whole in either process: counted as backend reads of recording
// data, before the first byte reaches the client and while the client holds still. A proxy that
// buffered the body, or an auth that loaded the recording, reads every page before either.
import { randomBytes } from "node:crypto";
import { request } from "node:https";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RecordingWriter } from "../server/auth/recordings.ts";
import { proxyDefaults } from "../server/proxy/config.ts";
import { GrpcAuthApi } from "../server/proxy/grpc-auth-api.ts";
import { recordingRoutes } from "../server/proxy/recordings-route.ts";
import { type ProxyServer, startProxyServer } from "../server/proxy/server.ts";
import { GrpcTerminalAuthApi } from "../server/proxy/terminal-auth.ts";
import {
  type AuthSide,
  PASSWORD,
  PUBLIC_HOST,
  PUBLIC_ORIGIN,
  startAuthSide,
  USERS,
} from "./proxy-fixture.ts";
import { HttpsClient } from "./proxy-https-client.ts";

const MIB = 1024 * 1024;
const PAGE = 64 * 1024;
const SIZE = 32 * MIB + 4321;
const PAGES = Math.ceil(SIZE / PAGE);
const ID = "rec-stream-0001";

/** Backend reads of recording data since the last reset. */
const reads = { calls: 0 };

let side: AuthSide;
let proxy: ProxyServer;
let client: HttpsClient;
const apis: Array<{ close(): void }> = [];
const data = randomBytes(SIZE);
let session = "";

beforeAll(async () => {
  side = await startAuthSide();
  const inner = side.backend.get.bind(side.backend);
  side.backend.get = async (key: string) => {
    const item = await inner(key);
    if (key.startsWith("recording-data/")) reads.calls++;
    return item;
  };
  const w = new RecordingWriter(side.backend, {
    id: ID,
    user_name: USERS.user,
    protocol: "ssh",
    node: "node-1",
    login: USERS.user,
    start_unix_ms: Date.now() - 60_000,
    end_unix_ms: Date.now(),
    format: "asciicast-v2",
  });
  await w.begin();
  for (let o = 0; o < SIZE; o += 1_000_000) await w.write(data.subarray(o, o + 1_000_000));
  await w.finish();

  const grpc = {
    address: side.auth.address,
    caPems: [side.hostCaPem],
    certPem: side.proxyClient.certPem,
    keyPem: side.proxyClient.keyPem,
  };
  const authApi = new GrpcAuthApi(grpc);
  const terminalAuth = new GrpcTerminalAuthApi(grpc);
  apis.push(authApi, terminalAuth);
  proxy = await startProxyServer({
    config: {
      ...proxyDefaults,
      listenHost: "127.0.0.1",
      listenPort: 0,
      publicUrl: PUBLIC_ORIGIN,
      clusterName: "proxy-test",
      serverVersion: "0.1.0",
      clientVersionPolicy: { minimum: "0.1.0", recommended: "0.1.0" },
      oidcIssuerUrl: PUBLIC_ORIGIN,
    },
    tls: side.proxyServer,
    authApi,
    logger: pino({ level: process.env.SVC_TEST_LOG_LEVEL ?? "silent" }),
    ready: () => true,
    resources: side.source,
    routes: [recordingRoutes({ terminalAuth })],
  });
  client = new HttpsClient(proxy.url, side.hostCaPem, PUBLIC_HOST);
  const login = await client.send({
    method: "POST",
    path: "/v1/webapi/login",
    body: { username: USERS.user, password: PASSWORD },
  });
  expect(login.status, login.text).toBe(200);
  session = (login.json as { session_id: string }).session_id;
}, 120_000);

afterAll(async () => {
  await proxy?.close();
  for (const a of apis) a.close();
  await side?.close();
});

/** Waits until the read count has not moved for `quietMs` (bounded): what a stalled stream reached. */
async function settledReads(quietMs = 500, maxMs = 15_000): Promise<number> {
  const until = Date.now() + maxMs;
  let last = reads.calls;
  let since = Date.now();
  while (Date.now() < until) {
    await new Promise((r) => setTimeout(r, 50));
    if (reads.calls !== last) {
      last = reads.calls;
      since = Date.now();
    } else if (Date.now() - since >= quietMs) break;
  }
  return last;
}

describe("GET /v1/webapi/sessions/:id/recording", () => {
  it("streams a 32 MiB recording page by page: bytes reach the client before auth has read it all, and a client that stops reading stops the reads", async () => {
    reads.calls = 0;
    const url = new URL(`/v1/webapi/sessions/${ID}/recording`, proxy.url);
    const parts: Buffer[] = [];
    let readsAtFirstByte = -1;
    let readsWhilePaused = -1;
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(
        url,
        {
          ca: side.hostCaPem,
          servername: PUBLIC_HOST,
          agent: false,
          headers: { authorization: `Bearer ${session}` },
        },
        (res) => {
          res.on("data", (chunk: Buffer) => {
            parts.push(chunk);
            if (readsAtFirstByte >= 0) return;
            readsAtFirstByte = reads.calls;
            // Hold still: nothing more is read from the socket until resumed.
            res.pause();
            settledReads().then((n) => {
              readsWhilePaused = n;
              res.resume();
            }, reject);
          });
          res.on("end", () => resolve(res.statusCode ?? 0));
          res.on("error", reject);
        },
      );
      req.on("error", reject);
      req.end();
    });
    expect(status).toBe(200);
    expect(Buffer.concat(parts).equals(data)).toBe(true);
    // Every page read exactly once, none larger than a page (the writer's chunking).
    expect(reads.calls).toBe(PAGES);
    // Streaming, not buffering: the first bytes left the proxy after a handful of pages.
    expect(readsAtFirstByte).toBeGreaterThan(0);
    expect(readsAtFirstByte).toBeLessThan(PAGES / 4);
    // A stalled client stalls auth's reads: what is in flight is the sockets' and streams' buffers,
    // not the recording.
    expect(readsWhilePaused).toBeLessThan(PAGES / 2);
  }, 120_000);
});
