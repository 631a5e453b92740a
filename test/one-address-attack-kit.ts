// Tools for test/one-address-attacks.test.ts: what an attacker holds against the proxy's public
// port (raw TCP, TLS with a chosen certificate and ALPN, a WebSocket node stream), the
// certificates it might have got hold of (minted from the fixture's real host CA), and the world
// it attacks (startAttackWorld).
import { mkdtemp, rm } from "node:fs/promises";
import { createServer, connect as netConnect, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type TLSSocket, connect as tlsConnect } from "node:tls";
import pino from "pino";
import { WebSocket } from "ws";
import {
  generateEcdsaP256,
  issueTlsClientCert,
  issueTlsServerCert,
  privateKeyToPem,
  type X509Issuer,
} from "../core/certs/x509.ts";
import { type Clock, ManualClock, systemClock } from "../core/clock.ts";
import { API_VERSION } from "../core/resources/index.ts";
import { loadIdentity } from "../server/agent/identity.ts";
import { type RunningAgent, runAgent } from "../server/agent/main.ts";
import { setPassword } from "../server/auth/passwords.ts";
import { createPeerHandler } from "../server/proxy/peering/peer-handler.ts";
import { PEER_ALPN } from "../server/proxy/peering/protocol.ts";
import { TerminalSlots } from "../server/proxy/terminal-route.ts";
import { NodeDialer } from "../server/proxy/tunnel/dialer.ts";
import { GrpcNodeRegistrations } from "../server/proxy/tunnel/registration.ts";
import { TunnelRegistry } from "../server/proxy/tunnel/registry.ts";
import { TunnelServer } from "../server/proxy/tunnel/server.ts";
import { TUNNEL_ALPN } from "../server/tunnel/protocol.ts";
import { PASSWORD, PUBLIC_HOST, startTerminalFixture, type TerminalFixture } from "./terminal-fixture.ts";

export interface Pem {
  certPem: string;
  keyPem: string;
}

/** A TLS client certificate from `ca` naming `uri`; `clock` in the past makes an expired one. */
export async function clientCert(
  ca: X509Issuer,
  uri: string,
  clock: Clock = systemClock,
  ttlSeconds = 3600,
): Promise<Pem> {
  const k = generateEcdsaP256();
  const certPem = await issueTlsClientCert(ca, {
    publicKey: k.publicKey,
    commonName: "x",
    uri,
    clock,
    ttlSeconds,
  });
  return { certPem, keyPem: privateKeyToPem(k.privateKey) };
}

/** A certificate that expired an hour ago (valid for a minute, two hours back). */
export async function expiredCert(ca: X509Issuer, uri: string): Promise<Pem> {
  return clientCert(ca, uri, new ManualClock(new Date(Date.now() - 2 * 3600_000)), 60);
}

/** TLS to the public port offering `alpn`, with an optional client certificate. */
export function tlsTo(
  port: number,
  o: { alpn: string[]; caPem: string; id?: Pem | undefined; servername?: string },
  track: Array<() => unknown>,
): TLSSocket {
  const s = tlsConnect({
    host: "127.0.0.1",
    port,
    ca: [o.caPem],
    ALPNProtocols: o.alpn,
    ...(o.servername ? { servername: o.servername } : {}),
    ...(o.id ? { cert: o.id.certPem, key: o.id.keyPem } : {}),
  });
  s.on("error", () => {});
  track.push(() => s.destroy());
  return s;
}

/**
 * True when the server keeps a TLS connection open for `ms` after the handshake (in TLS 1.3 the
 * server's verdict on a client certificate only arrives after the client's secureConnect).
 */
export function survives(s: TLSSocket, ms = 400): Promise<boolean> {
  return new Promise((resolve) => {
    let closed = false;
    s.once("close", () => {
      closed = true;
      resolve(false);
    });
    s.once("secureConnect", () =>
      setTimeout(() => {
        s.destroy();
        if (!closed) resolve(true);
      }, ms),
    );
  });
}

/** Raw TCP to the public port. */
export function rawTo(port: number, track: Array<() => unknown>): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = netConnect({ host: "127.0.0.1", port });
    s.on("error", () => {});
    track.push(() => s.destroy());
    s.once("connect", () => resolve(s));
    s.once("error", reject);
  });
}

/** Resolves with what arrived before the peer closed, or undefined when it stays open `ms`. */
export function closesWithin(s: Socket, ms: number): Promise<Buffer | undefined> {
  return new Promise((resolve) => {
    const got: Buffer[] = [];
    s.on("data", (d: Buffer) => got.push(d));
    const timer = setTimeout(() => resolve(undefined), ms);
    s.once("close", () => {
      clearTimeout(timer);
      resolve(Buffer.concat(got));
    });
  });
}

/** What a /v1/webapi/ssh/dial attempt came to. */
export type DialOutcome =
  | { kind: "http"; status: number }
  | { kind: "ready"; ws: WebSocket; first: Promise<Buffer> }
  | { kind: "refused"; control: { type: string; code?: string; message?: string }; closeCode: number };

/** Opens the node stream like `svc ssh` does; `first` is the first binary frame from the node. */
export function dial(
  o: { port: number; caPem: string; servername: string; node: string; login: string; bearer?: string },
  track: Array<() => unknown>,
): Promise<DialOutcome> {
  const url = `wss://127.0.0.1:${o.port}/v1/webapi/ssh/dial?${new URLSearchParams({ node: o.node, login: o.login })}`;
  const options: WebSocket.ClientOptions & { servername: string } = {
    ca: o.caPem,
    servername: o.servername,
    headers: o.bearer ? { authorization: `Bearer ${o.bearer}` } : {},
  };
  const ws = new WebSocket(url, options);
  track.push(() => ws.terminate());
  return new Promise((resolve, reject) => {
    let control: { type: string; code?: string; message?: string } | undefined;
    let onFirst: (b: Buffer) => void = () => {};
    const first = new Promise<Buffer>((r) => {
      onFirst = r;
    });
    ws.on("unexpected-response", (_req, res) => {
      resolve({ kind: "http", status: res.statusCode ?? 0 });
      res.resume();
    });
    ws.on("message", (data: Buffer, binary: boolean) => {
      if (binary) {
        onFirst(data);
        return;
      }
      const m = JSON.parse(data.toString("utf8")) as { type: string; code?: string; message?: string };
      if (m.type === "ready") resolve({ kind: "ready", ws, first });
      else control = m;
    });
    ws.on("close", (code) => {
      if (control) resolve({ kind: "refused", control, closeCode: code });
      else reject(new Error(`node stream closed (${code}) without a control frame`));
    });
    ws.on("error", () => {});
  });
}

/** The first flight (the ClientHello) node:tls sends for `alpn` and `servername`, captured raw. */
export function captureHello(alpn: string[], servername: string): Promise<Buffer> {
  return new Promise<Buffer>((resolve, reject) => {
    const cap = createServer((s) => {
      s.once("data", (d: Buffer) => {
        resolve(d);
        s.destroy();
        cap.close();
      });
    });
    cap.once("error", reject);
    cap.listen(0, "127.0.0.1", () => {
      const a = cap.address();
      const t = tlsConnect({
        host: "127.0.0.1",
        port: typeof a === "object" && a ? a.port : 0,
        ALPNProtocols: alpn,
        servername,
        rejectUnauthorized: false,
      });
      t.on("error", () => {});
      t.once("close", () => t.destroy());
    });
  });
}

/** Everything the attack tests act on; `close()` ends it all (and whatever `track` collected). */
export interface AttackWorld {
  fx: TerminalFixture;
  registry: TunnelRegistry;
  /** node-a and node-b serve SSH only through tunnels; node-rogue advertises the bait's address */
  nodeA: RunningAgent;
  nodeB: RunningAgent;
  rogue: RunningAgent;
  /** a joined node without a tunnel, whose identity the tests use as a hostile tunnel agent */
  flooder: RunningAgent;
  idA: Pem;
  idFlood: Pem;
  /** the proxy identity's client certificate (svc://proxy/...) */
  proxyClient: Pem;
  /** a plain TCP service (think: a metadata endpoint) and every byte it received */
  bait: Server;
  baitSaw: Buffer[];
  /** what the tunnel server and the svc-peer handler logged */
  logLines: string[];
  /** sessions: dave (root on the env=test nodes), mallory (sees no node here) */
  dave: { sessionId: string };
  mallory: { sessionId: string };
  track: Array<() => unknown>;
  close(): Promise<void>;
}

const HEARTBEAT = { intervalMs: 500, maxMissed: 3 };
const BACKOFF = { minMs: 50, maxMs: 200 };

export async function until(
  cond: () => boolean | Promise<boolean>,
  what: string,
  ms = 15_000,
): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

export function portOf(s: Server): number {
  const a = s.address();
  return typeof a === "object" && a ? a.port : 0;
}

/**
 * The terminal fixture (auth, proxy, router) plus the tunnel server with auth's registration
 * check, the svc-peer handler, two tunnel agents, a lying agent, a hostile agent's identity, the
 * bait service, and a user who may see no node. Terminal slots: `slotsPerUser` per user.
 */
export async function startAttackWorld(o: {
  slotsPerUser: number;
  handshakeTimeoutMs: number;
}): Promise<AttackWorld> {
  const logger = pino({ level: process.env["SVC_TEST_LOG_LEVEL"] ?? "silent" });
  const logLines: string[] = [];
  const edgeLogger = pino({ level: "debug" }, { write: (line: string) => void logLines.push(line) });
  const track: Array<() => unknown> = [];
  const closers: Array<() => unknown> = [];
  const close = async (): Promise<void> => {
    for (const c of [...track.splice(0).reverse(), ...closers.splice(0).reverse()]) {
      try {
        await c();
      } catch {
        // keep closing
      }
    }
  };
  try {
    const registry = new TunnelRegistry();
    const fx = await startTerminalFixture({
      terminal: {
        dialer: new NodeDialer({ registry, timeoutMs: 5_000 }),
        slots: new TerminalSlots({ perUser: o.slotsPerUser, perProxy: 100 }),
      },
    });
    closers.push(() => fx.close());
    const dir = await mkdtemp(join(tmpdir(), "svc-attacks-"));
    closers.push(() => rm(dir, { recursive: true, force: true }));
    const key = generateEcdsaP256();
    const proxyServer: Pem = {
      certPem: await issueTlsServerCert(fx.env.cas.hostCa, {
        publicKey: key.publicKey,
        commonName: PUBLIC_HOST,
        dnsNames: [PUBLIC_HOST],
        ips: ["127.0.0.1"],
        clock: systemClock,
      }),
      keyPem: privateKeyToPem(key.privateKey),
    };
    const registrations = new GrpcNodeRegistrations(fx.grpc);
    closers.push(() => registrations.close());
    const tunnels = new TunnelServer({
      registry,
      tls: () => ({ ...proxyServer, caPems: [fx.env.cas.hostCa.certPem] }),
      isRegisteredNode: (id) => registrations.isRegistered(id),
      logger: edgeLogger,
      heartbeat: HEARTBEAT,
      handshakeTimeoutMs: o.handshakeTimeoutMs,
    });
    closers.push(
      () => registry.closeAll(),
      () => tunnels.close(),
    );
    fx.proxy.router.handle(TUNNEL_ALPN, (socket) => tunnels.handle(socket));
    const peer = createPeerHandler({
      tls: { ...proxyServer, caPems: [fx.env.cas.hostCa.certPem] },
      localDial: (nodeId) => (registry.has(nodeId) ? registry.open(nodeId, 5_000) : undefined),
      logger: edgeLogger,
      handshakeTimeoutMs: o.handshakeTimeoutMs,
    });
    closers.push(() => peer.close());
    fx.proxy.router.handle(PEER_ALPN, (socket) => peer.handle(socket));

    const baitSaw: Buffer[] = [];
    const bait = createServer((s) => {
      s.on("data", (d: Buffer) => {
        baitSaw.push(d);
        s.end("HTTP/1.0 200 OK\r\n\r\ncloud-credentials");
      });
      s.on("error", () => {});
    });
    await new Promise<void>((r) => bait.listen(0, "127.0.0.1", r));
    closers.push(() => new Promise<void>((r) => bait.close(() => r())));

    const agent = async (
      hostname: string,
      a: { tunnel?: boolean; advertise?: string },
    ): Promise<RunningAgent> => {
      const running = await runAgent({
        authAddress: fx.env.address,
        authServerName: fx.env.serverName,
        caPin: fx.env.pin,
        token: await fx.env.addToken(`${hostname}-token`),
        dataDir: join(dir, hostname),
        hostname,
        labels: { env: "test" },
        logger,
        heartbeatIntervalSeconds: 3600,
        ...(a.tunnel
          ? { tunnel: { proxyAddress: `127.0.0.1:${fx.proxy.port}`, heartbeat: HEARTBEAT, backoff: BACKOFF } }
          : { listen: "127.0.0.1:0" }),
        ...(a.advertise ? { advertiseAddress: a.advertise } : {}),
      });
      closers.push(() => running.close());
      return running;
    };
    const identityOf = async (hostname: string): Promise<Pem> => {
      const id = await loadIdentity(join(dir, hostname));
      if (!id) throw new Error(`no identity for ${hostname}`);
      return { certPem: id.tlsCertificatePem, keyPem: id.tlsKeyPem };
    };
    const nodeA = await agent("node-a", { tunnel: true });
    const nodeB = await agent("node-b", { tunnel: true });
    const rogue = await agent("node-rogue", { advertise: `127.0.0.1:${portOf(bait)}` });
    const flooder = await agent("node-flood", {});
    await until(() => registry.has(nodeA.agentId) && registry.has(nodeB.agentId), "both tunnels");

    // mallory may log in only on env=prod nodes: she cannot see any node here.
    await fx.env.source.apply({
      apiVersion: API_VERSION,
      kind: "Role",
      metadata: { name: "prod-only" },
      spec: { allow: { logins: ["root"], node_labels: { env: "prod" } } },
    } as never);
    await fx.env.source.apply({
      apiVersion: API_VERSION,
      kind: "User",
      metadata: { name: "mallory" },
      spec: { roles: ["prod-only"], traits: {} },
    } as never);
    await setPassword(fx.env.backend, "mallory", PASSWORD);
    return {
      fx,
      registry,
      nodeA,
      nodeB,
      rogue,
      flooder,
      idA: await identityOf("node-a"),
      idFlood: await identityOf("node-flood"),
      proxyClient: { certPem: fx.grpc.certPem, keyPem: fx.grpc.keyPem },
      bait,
      baitSaw,
      logLines,
      dave: await fx.login("dave"),
      mallory: await fx.login("mallory"),
      track,
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}
