// The WatchTrust client against a real gRPC server (the AuthService definition, loopback, one
// handler the test drives): snapshots applied once per digest, the last one kept while the stream
// is down (age growing, metrics saying so), reconnection after the server comes back, and a
// client getter asked again on every reconnect.
import { credentials, Metadata, Server, ServerCredentials, type ServerWritableStream } from "@grpc/grpc-js";
import pino from "pino";
import { Registry } from "prom-client";
import { afterEach, describe, expect, it } from "vitest";
import { type Clock, ManualClock } from "../../core/clock.ts";
import type { AuthServiceClient } from "../../proto/generated/svc/v1/AuthService.ts";
import type { TrustSnapshot } from "../../proto/generated/svc/v1/TrustSnapshot.ts";
import { AuthServiceClientConstructor, authServiceDefinition } from "../auth/proto.ts";
import { type TrustSnapshotView, TrustWatcher } from "./watcher.ts";

const silent = pino({ level: "silent" });

type Stream = ServerWritableStream<unknown, TrustSnapshot>;

/** A gRPC server with only WatchTrust, whose open streams the test writes to and ends. */
async function trustServer(port = 0): Promise<{ port: number; streams: Stream[]; close(): Promise<void> }> {
  const server = new Server();
  const streams: Stream[] = [];
  server.addService(
    { WatchTrust: authServiceDefinition.WatchTrust },
    {
      WatchTrust: (call: Stream) => {
        streams.push(call);
      },
    },
  );
  const bound = await new Promise<number>((resolve, reject) =>
    server.bindAsync(`127.0.0.1:${port}`, ServerCredentials.createInsecure(), (err, p) =>
      err ? reject(err) : resolve(p),
    ),
  );
  return {
    port: bound,
    streams,
    close: () =>
      new Promise((resolve) => {
        for (const s of streams) if (!s.cancelled) s.end();
        server.tryShutdown(() => resolve());
        server.forceShutdown();
      }),
  };
}

const snapshot = (digest: string, users: string[]): TrustSnapshot => ({
  locks: users.map((u) => ({
    name: `lock-${u}`,
    target: { user: u },
    message: `${u} is locked`,
    created_by: "admin",
    created_at: "2026-01-01T00:00:00Z",
  })),
  public_keys: { user_ca_ssh_public_keys: ["ssh-ed25519 AAAA"] },
  authorities: [],
  digest,
  generated_at: "2026-01-01T00:00:00Z",
  keepalive_seconds: 15,
});

async function until(cond: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 1000; i++) {
    if (cond()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe("TrustWatcher", () => {
  const cleanups: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  function watch(port: () => number, clock: Clock, registry?: Registry) {
    const clients: AuthServiceClient[] = [];
    let asked = 0;
    const w = new TrustWatcher({
      client: () => {
        asked++;
        const c = new AuthServiceClientConstructor(`127.0.0.1:${port()}`, credentials.createInsecure());
        clients.push(c);
        return c;
      },
      metadata: () => new Metadata(),
      clock,
      logger: silent,
      ...(registry ? { metrics: registry } : {}),
      backoff: { initialMs: 20, maxMs: 100 },
    });
    const seen: TrustSnapshotView[] = [];
    w.on("snapshot", (s) => seen.push(s));
    cleanups.push(async () => {
      await w.close();
      for (const c of clients) c.close();
    });
    return { w, seen, asked: () => asked };
  }

  it("applies a snapshot once per digest, keeps the last one while auth is down, and reconnects", async () => {
    let srv = await trustServer();
    const port = srv.port;
    cleanups.push(() => srv.close());
    const clock = new ManualClock(new Date("2026-01-01T00:00:10Z"));
    const registry = new Registry();
    const { w, seen, asked } = watch(() => port, clock, registry);
    w.start();
    await until(() => srv.streams.length === 1, "stream opened");
    srv.streams[0]?.write(snapshot("d1", ["alice"]));
    await until(() => seen.length === 1, "first snapshot");
    expect(seen[0]?.locks).toEqual([
      expect.objectContaining({ name: "lock-alice", target: { user: "alice" }, message: "alice is locked" }),
    ]);
    expect(w.connected()).toBe(true);

    // The same digest again (a keepalive): no event, but the age restarts.
    clock.advance(5_000);
    expect(w.ageSeconds()).toBe(5);
    srv.streams[0]?.write(snapshot("d1", ["alice"]));
    await until(() => w.ageSeconds() === 0, "keepalive counted");
    expect(seen).toHaveLength(1);

    // Auth goes away: the last snapshot stays, its age grows, the metrics say so.
    await srv.close();
    await until(() => !w.connected(), "disconnected");
    clock.advance(30_000);
    expect(w.current()?.locks.map((l) => l.name)).toEqual(["lock-alice"]);
    expect(w.ageSeconds()).toBe(30);
    const text = await registry.metrics();
    expect(text).toMatch(/^svc_agent_trust_snapshot_age_seconds 30$/m);
    expect(text).toMatch(/^svc_agent_trust_stream_connected 0$/m);
    expect(text).toMatch(/^svc_agent_trust_locks 1$/m);

    // Back on the same port: the watcher reconnects (asking for the client again) and a new
    // digest is applied.
    const before = asked();
    srv = await trustServer(port);
    await until(() => srv.streams.length >= 1, "reconnected");
    expect(asked()).toBeGreaterThan(before);
    srv.streams.at(-1)?.write(snapshot("d2", []));
    await until(() => seen.length === 2, "second snapshot");
    expect(w.current()?.locks).toEqual([]);
    expect(w.connected()).toBe(true);
  });

  it("reconnectNow skips the rest of the backoff", async () => {
    let srv = await trustServer();
    const port = srv.port;
    const clock = new ManualClock();
    const w = new TrustWatcher({
      client: () => new AuthServiceClientConstructor(`127.0.0.1:${port}`, credentials.createInsecure()),
      metadata: () => new Metadata(),
      clock,
      logger: silent,
      // A backoff far longer than the test: only reconnectNow can bring the stream back.
      backoff: { initialMs: 600_000, maxMs: 600_000 },
    });
    cleanups.push(() => w.close());
    w.start();
    await until(() => srv.streams.length === 1, "stream opened");
    srv.streams[0]?.write(snapshot("d1", []));
    await until(() => w.connected(), "connected");
    await srv.close();
    await until(() => !w.connected(), "disconnected");
    srv = await trustServer(port);
    cleanups.push(() => srv.close());
    w.reconnectNow();
    await until(() => srv.streams.length === 1, "reconnected at once");
    srv.streams[0]?.write(snapshot("d2", ["bob"]));
    await until(() => w.current()?.digest === "d2", "snapshot after reconnect");
  });
});
