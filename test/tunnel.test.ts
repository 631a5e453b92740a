// Reverse tunnels end to end, all real: auth, the HTTPS proxy with its TLS router on one port, a
// node agent (runAgent) that listens on no port and serves SSH only through its tunnel, and the
// browser terminal reaching it. Also: what the proxy refuses, a node's newest tunnel winning, a
// silent tunnel dropped by heartbeats, a dropped tunnel coming back, a removed node kept out, and a
// terminal to a node whose tunnel is down failing at once with "unreachable".
import { mkdtemp, rm } from "node:fs/promises";
import { createServer as h2Server } from "node:http2";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect as tlsConnect } from "node:tls";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import {
  agentIdentityUri,
  createRootCa,
  generateEcdsaP256,
  issueTlsClientCert,
  issueTlsServerCert,
  privateKeyToPem,
} from "../core/certs/x509.ts";
import { systemClock } from "../core/clock.ts";
import { loadIdentity } from "../server/agent/identity.ts";
import { type RunningAgent, runAgent } from "../server/agent/main.ts";
import { agentMetadata, callUnary, createAuthClient, userMetadata } from "../server/auth/client.ts";
import { NodeDialer } from "../server/proxy/tunnel/dialer.ts";
import { GrpcNodeRegistrations } from "../server/proxy/tunnel/registration.ts";
import { TunnelRegistry } from "../server/proxy/tunnel/registry.ts";
import { TunnelServer } from "../server/proxy/tunnel/server.ts";
import { TUNNEL_ALPN } from "../server/tunnel/protocol.ts";
import { mustOpen, type TerminalConnection } from "./terminal-client.ts";
import { PUBLIC_HOST, startTerminalFixture, type TerminalFixture } from "./terminal-fixture.ts";

const logger = pino({ level: process.env["SVC_TEST_LOG_LEVEL"] ?? "silent" });
const clock = systemClock;
const HEARTBEAT = { intervalMs: 200, maxMissed: 3 };
const BACKOFF = { minMs: 50, maxMs: 200 };
const TUNNEL_NODE = "node-tunnel";

let fx: TerminalFixture;
let dir: string;
let registry: TunnelRegistry;
let tunnels: TunnelServer;
let registrations: GrpcNodeRegistrations;
let agent: RunningAgent;
let alice = { sessionId: "", cookie: "" };
let dave = { sessionId: "", cookie: "" };
const open: TerminalConnection[] = [];
const cleanups: Array<() => unknown> = [];

async function until(cond: () => boolean | Promise<boolean>, what: string, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

async function startTunnelAgent(hostname: string): Promise<RunningAgent> {
  const a = await runAgent({
    authAddress: fx.env.address,
    authServerName: fx.env.serverName,
    caPin: fx.env.pin,
    token: await fx.env.addToken(`${hostname}-token`),
    dataDir: join(dir, hostname),
    hostname,
    labels: { env: "test" },
    logger,
    heartbeatIntervalSeconds: 3600,
    tunnel: { proxyAddress: `127.0.0.1:${fx.proxy.port}`, heartbeat: HEARTBEAT, backoff: BACKOFF },
  });
  cleanups.push(() => a.close());
  return a;
}

beforeAll(async () => {
  registry = new TunnelRegistry();
  // The terminal reaches nodes through the same dialer the roles wire: tunnel first.
  fx = await startTerminalFixture({ terminal: { dialer: new NodeDialer({ registry, timeoutMs: 5_000 }) } });
  dir = await mkdtemp(join(tmpdir(), "svc-tunnel-"));
  const key = generateEcdsaP256();
  const certPem = await issueTlsServerCert(fx.env.cas.hostCa, {
    publicKey: key.publicKey,
    commonName: PUBLIC_HOST,
    dnsNames: [PUBLIC_HOST],
    ips: ["127.0.0.1"],
    clock,
  });
  registrations = new GrpcNodeRegistrations(fx.grpc);
  tunnels = new TunnelServer({
    registry,
    tls: () => ({ certPem, keyPem: privateKeyToPem(key.privateKey), caPems: [fx.env.cas.hostCa.certPem] }),
    // As svcd proxy asks: CheckNodeRegistered with the proxy's client certificate.
    isRegisteredNode: (id) => registrations.isRegistered(id),
    logger,
    heartbeat: HEARTBEAT,
  });
  fx.proxy.router.handle(TUNNEL_ALPN, (socket) => tunnels.handle(socket));
  agent = await startTunnelAgent(TUNNEL_NODE);
  await until(() => registry.has(agent.agentId), "the agent's tunnel");
  alice = await fx.login("alice");
  dave = await fx.login("dave");
}, 180_000);

afterAll(async () => {
  for (const c of open) c.ws.terminate();
  for (const c of cleanups.splice(0).reverse()) {
    try {
      await c();
    } catch {
      // keep closing
    }
  }
  tunnels?.close();
  registrations?.close();
  registry?.closeAll();
  await fx?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
}, 60_000);

async function terminal(node: string, who: { sessionId: string }): Promise<TerminalConnection> {
  const c = await mustOpen({
    baseUrl: fx.proxy.url,
    caPem: fx.hostCaPem,
    servername: PUBLIC_HOST,
    query: { node, login: "root" },
    headers: { authorization: `Bearer ${who.sessionId}` },
  });
  open.push(c);
  return c;
}

/** A raw TLS connection to the proxy's public port offering svc-tunnel; answers h2 when `h2`. */
function rawTunnel(id?: { certPem: string; keyPem: string }, caPem?: string) {
  const s = tlsConnect({
    host: "127.0.0.1",
    port: fx.proxy.port,
    ca: [caPem ?? fx.env.cas.hostCa.certPem],
    ALPNProtocols: [TUNNEL_ALPN],
    ...(id ? { cert: id.certPem, key: id.keyPem } : {}),
  });
  s.on("error", () => {});
  cleanups.push(() => s.destroy());
  return s;
}

/**
 * Opens the node stream WebSocket; collects text frames and binary bytes until the socket closes or
 * the binary data contains `until`.
 */
async function dialNode(
  query: Record<string, string>,
  headers: Record<string, string>,
  until?: string,
): Promise<{ status?: number; texts: string[]; binary: Buffer; closeCode?: number }> {
  const url = new URL("/v1/webapi/ssh/dial", fx.proxy.url.replace(/^https:/, "wss:"));
  for (const [k, v] of Object.entries(query)) url.searchParams.set(k, v);
  const options: WebSocket.ClientOptions & { servername: string } = {
    ca: fx.hostCaPem,
    servername: PUBLIC_HOST,
    headers,
  };
  const ws = new WebSocket(url, options);
  const texts: string[] = [];
  const chunks: Buffer[] = [];
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      ws.terminate();
      reject(new Error("node stream: no answer"));
    }, 20_000);
    const done = (r: { status?: number; closeCode?: number }): void => {
      clearTimeout(timer);
      resolve({ ...r, texts, binary: Buffer.concat(chunks) });
    };
    ws.on("unexpected-response", (_req, res) => {
      done(res.statusCode !== undefined ? { status: res.statusCode } : {});
      ws.terminate();
    });
    ws.on("message", (data: Buffer, isBinary: boolean) => {
      if (!isBinary) texts.push(data.toString("utf8"));
      else chunks.push(data);
      if (until && Buffer.concat(chunks).toString("latin1").includes(until)) {
        done({});
        ws.terminate();
      }
    });
    ws.on("close", (code) => done({ closeCode: code }));
    ws.on("error", () => {});
  });
}

/** True when the proxy keeps the connection open for 400 ms after the handshake. */
async function survives(id?: { certPem: string; keyPem: string }): Promise<boolean> {
  const s = rawTunnel(id);
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
      }, 400),
    );
  });
}

describe("a node behind a reverse tunnel", () => {
  it("listens on no port, advertises no address, and its shell is reached from the browser terminal", async () => {
    expect(agent.ssh.port).toBe(0);
    expect(agent.addresses).toEqual([]);
    const c = await terminal(TUNNEL_NODE, dave);
    expect(await c.waitControl("ready")).toEqual({ type: "ready", node: TUNNEL_NODE, login: "root" });
    c.type("echo through-the-tun''nel-$((6*7))\r");
    await c.waitFor("through-the-tunnel-42");
    c.type("exit 5\r");
    expect(await c.waitControl("exit")).toEqual({ type: "exit", code: 5 });
    await c.closed;
  }, 60_000);

  it("records and audits the session as the node's own, like a direct node", async () => {
    interface Rec {
      id: string;
      user: string;
      node: string;
    }
    let rec: Rec | undefined;
    await until(async () => {
      const res = await fx.client.send({
        path: "/v1/webapi/sessions?limit=50",
        headers: { authorization: `Bearer ${dave.sessionId}` },
      });
      rec = (res.json as { items: Rec[] }).items.find((r) => r.user === "dave" && r.node === TUNNEL_NODE);
      return rec !== undefined;
    }, "the recording");
    const played = await fx.client.send({
      path: `/v1/webapi/sessions/${rec?.id}/recording`,
      headers: { authorization: `Bearer ${dave.sessionId}` },
    });
    expect(played.status).toBe(200);
    expect(played.text).toContain("through-the-tunnel-42");
    const starts = await callUnary(
      fx.env.client,
      "SearchAuditEvents",
      { type: "session.start", user: "dave", limit: 500 },
      userMetadata(alice.sessionId),
    );
    const mine = starts.items.find(
      (e) => (JSON.parse(e.fields_json) as Record<string, unknown>)["session_id"] === rec?.id,
    );
    expect(mine).toBeDefined();
    expect(mine?.fields_json).toContain(agent.agentId);
  }, 60_000);

  it("refuses a tunnel without a client certificate or with one from another CA", async () => {
    expect(await survives()).toBe(false);
    const { privateKey } = generateEcdsaP256();
    const other = { privateKey, certPem: await createRootCa({ privateKey, commonName: "other", clock }) };
    const k = generateEcdsaP256();
    const foreign = {
      certPem: await issueTlsClientCert(other, {
        publicKey: k.publicKey,
        commonName: agent.agentId,
        uri: agentIdentityUri(agent.agentId),
        clock,
      }),
      keyPem: privateKeyToPem(k.privateKey),
    };
    expect(await survives(foreign)).toBe(false);
    // The agent's own certificate is admitted (the control), and the real tunnel is still there.
    const own = await loadIdentity(join(dir, TUNNEL_NODE));
    if (!own) throw new Error("no identity");
    expect(await survives({ certPem: own.tlsCertificatePem, keyPem: own.tlsKeyPem })).toBe(true);
  }, 60_000);

  it("lets a node's newest tunnel replace the old one; a silent tunnel is dropped; the agent comes back", async () => {
    await until(() => registry.has(agent.agentId), "agent tunnel back");
    await agent.tunnel?.connected();
    const own = await loadIdentity(join(dir, TUNNEL_NODE));
    if (!own) throw new Error("no identity");
    const before = registry.get(agent.agentId)?.session;
    const connectsBefore = agent.tunnel?.status().connects ?? 0;
    // A second connection with the node's credentials that speaks h2 once, then goes silent.
    const s = rawTunnel({ certPem: own.tlsCertificatePem, keyPem: own.tlsKeyPem });
    await new Promise<void>((r) => s.once("secureConnect", () => r()));
    const h2 = h2Server();
    h2.emit("connection", s);
    await until(() => {
      const now = registry.get(agent.agentId)?.session;
      return now !== undefined && now !== before;
    }, "replacement");
    const impostor = registry.get(agent.agentId)?.session;
    // The replaced agent notices, reconnects (backoff 50 ms) and wins again as the newest.
    await until(() => (agent.tunnel?.status().connects ?? 0) > connectsBefore, "agent reconnect");
    await until(() => impostor?.closed === true || impostor?.destroyed === true, "impostor replaced");
    // And a silent one is dropped by heartbeats: freeze this one before it is replaced again.
    const s2 = rawTunnel({ certPem: own.tlsCertificatePem, keyPem: own.tlsKeyPem });
    await new Promise<void>((r) => s2.once("secureConnect", () => r()));
    s2.resume(); // reads and drops everything: no PING is ever answered
    const dropped = await new Promise<boolean>((resolve) => {
      s2.once("close", () => resolve(true));
      setTimeout(() => resolve(false), 10_000);
    });
    expect(dropped).toBe(true);
    await until(() => registry.has(agent.agentId), "agent tunnel after the drop");
    const c = await terminal(TUNNEL_NODE, alice);
    await c.waitControl("ready");
    c.ws.close();
  }, 60_000);

  it("gives svc ssh a raw stream to the node (/v1/webapi/ssh/dial), after the same checks as the terminal", async () => {
    await until(() => registry.has(agent.agentId), "agent tunnel");
    const anonymous = await dialNode({ node: TUNNEL_NODE, login: "root" }, {});
    expect(anonymous.status).toBe(401);
    const bob = await fx.login("bob");
    const refused = await dialNode(
      { node: TUNNEL_NODE, login: "root" },
      { authorization: `Bearer ${bob.sessionId}` },
    );
    expect(refused.texts.map((t) => JSON.parse(t))).toEqual([
      expect.objectContaining({ type: "error", code: "access_denied" }),
    ]);
    expect(refused.binary.length).toBe(0);
    expect(refused.closeCode).toBe(4403);
    const ok = await dialNode(
      { node: TUNNEL_NODE, login: "root" },
      { authorization: `Bearer ${dave.sessionId}` },
      "SSH-2.0-",
    );
    expect(ok.texts.map((t) => JSON.parse(t))).toEqual([{ type: "ready", node: TUNNEL_NODE, login: "root" }]);
    // The node's own SSH banner, relayed untouched: the SSH session is the CLI's, end to end.
    expect(ok.binary.toString("latin1")).toMatch(/^SSH-2\.0-/);
  }, 60_000);

  it("keeps a removed node out: its tunnel is refused when it reconnects", async () => {
    const doomed = await startTunnelAgent("node-doomed");
    await until(() => registry.has(doomed.agentId), "doomed tunnel");
    await doomed.tunnel?.connected();
    await callUnary(fx.env.client, "DeleteNode", { node: doomed.agentId }, userMetadata(alice.sessionId));
    // Drop its tunnel: the reconnect meets the registration check.
    registry.get(doomed.agentId)?.session.destroy();
    const connects = doomed.tunnel?.status().connects ?? 0;
    await new Promise((r) => setTimeout(r, 1500));
    expect(registry.has(doomed.agentId)).toBe(false);
    // Refused before h2: never up again, and the backoff keeps growing (no tight reconnect loop).
    expect(doomed.tunnel?.status()).toEqual({ connected: false, connects });
    expect(await registrations.isRegistered(doomed.agentId)).toBe(false);
    expect(await registrations.isRegistered(agent.agentId)).toBe(true);
  }, 60_000);

  it("answers CheckNodeRegistered to proxies about any node, to a node only about itself", async () => {
    const own = await loadIdentity(join(dir, TUNNEL_NODE));
    if (!own) throw new Error("no identity");
    const asNode = createAuthClient({
      address: fx.env.address,
      caPems: own.hostCaPems,
      certPem: own.tlsCertificatePem,
      keyPem: own.tlsKeyPem,
      serverName: fx.env.serverName,
    });
    cleanups.push(() => asNode.close());
    const ask = (id: string) =>
      callUnary(asNode, "CheckNodeRegistered", { agent_id: id }, agentMetadata(agent.agentId));
    expect(await ask(agent.agentId)).toEqual({ registered: true });
    const other = (await loadIdentity(join(dir, "node-doomed")))?.agentId ?? "";
    await expect(ask(other)).rejects.toMatchObject({ code: "access_denied" });
  }, 60_000);

  it("fails a terminal at once with 'unreachable' when the node's tunnel is down", async () => {
    await agent.tunnel?.close();
    await until(() => !registry.has(agent.agentId), "tunnel gone");
    const c = await terminal(TUNNEL_NODE, alice);
    // Not a hang: the answer comes well inside the SSH handshake budget (20 s).
    const err = await c.waitControl("error", 10_000);
    expect(err).toMatchObject({ type: "error", code: "unavailable" });
    expect(err.type === "error" ? err.message : "").toMatch(
      /node "node-tunnel" is unreachable: it has no tunnel and advertises no address/,
    );
    expect((await c.closed).code).toBe(4503);
  }, 60_000);
});
