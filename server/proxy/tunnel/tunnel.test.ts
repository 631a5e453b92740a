// Both ends of the reverse tunnel over real TLS 1.3 and HTTP/2 on loopback, with a plain TCP
// listener standing in for the proxy's TLS router: admission (client certificate, CA, agent URI,
// registered node), CONNECT streams both ways, newest tunnel wins, heartbeats drop a silent
// agent, and the agent reconnects after the proxy comes back.
import { createServer, type Server, type Socket } from "node:net";
import type { Duplex } from "node:stream";
import { connect as tlsConnect } from "node:tls";
import pino from "pino";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  agentIdentityUri,
  botIdentityUri,
  createRootCa,
  generateEcdsaP256,
  issueTlsClientCert,
  issueTlsServerCert,
  privateKeyToPem,
  type X509Issuer,
} from "../../../core/certs/x509.ts";
import { systemClock } from "../../../core/clock.ts";
import { TunnelClient } from "../../agent/tunnel-client.ts";
import { backoffDelay, TUNNEL_ALPN } from "../../tunnel/protocol.ts";
import { NodeDialer } from "./dialer.ts";
import { TunnelRegistry } from "./registry.ts";
import { agentIdOf, TunnelServer } from "./server.ts";

const logger = pino({ level: "silent" });
const clock = systemClock;

async function newCa(cn: string): Promise<X509Issuer> {
  const { privateKey } = generateEcdsaP256();
  return { privateKey, certPem: await createRootCa({ privateKey, commonName: cn, clock }) };
}

async function clientCert(ca: X509Issuer, uri: string): Promise<{ certPem: string; keyPem: string }> {
  const k = generateEcdsaP256();
  const certPem = await issueTlsClientCert(ca, { publicKey: k.publicKey, commonName: "x", uri, clock });
  return { certPem, keyPem: privateKeyToPem(k.privateKey) };
}

let ca: X509Issuer;
let proxyId: { certPem: string; keyPem: string };
const cleanups: Array<() => unknown> = [];

beforeAll(async () => {
  ca = await newCa("host CA");
  const k = generateEcdsaP256();
  proxyId = {
    certPem: await issueTlsServerCert(ca, {
      publicKey: k.publicKey,
      commonName: "proxy",
      dnsNames: ["proxy.test"],
      ips: ["127.0.0.1"],
      clock,
    }),
    keyPem: privateKeyToPem(k.privateKey),
  };
});

afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});
afterAll(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

interface Proxy {
  port: number;
  registry: TunnelRegistry;
  server: Server;
  close(): Promise<void>;
}

async function startProxy(
  o: { port?: number; registered?: (id: string) => boolean; heartbeatMs?: number } = {},
): Promise<Proxy> {
  const registry = new TunnelRegistry();
  const tunnels = new TunnelServer({
    registry,
    tls: () => ({ ...proxyId, caPems: [ca.certPem] }),
    isRegisteredNode: async (id) => o.registered?.(id) ?? true,
    logger,
    heartbeat: { intervalMs: o.heartbeatMs ?? 10_000, maxMissed: 3 },
  });
  const sockets = new Set<Socket>();
  const server = createServer((s) => {
    sockets.add(s);
    s.once("close", () => sockets.delete(s));
    tunnels.handle(s);
  });
  await new Promise<void>((r) => server.listen(o.port ?? 0, "127.0.0.1", r));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  const proxy: Proxy = {
    port,
    registry,
    server,
    close: async () => {
      tunnels.close();
      registry.closeAll();
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
  cleanups.push(() => proxy.close());
  return proxy;
}

/** An agent whose "SSH server" echoes every stream back, upper-cased. */
function startAgent(
  proxy: { port: number },
  id: { certPem: string; keyPem: string },
  o: { backoffMs?: number; caPem?: string } = {},
): TunnelClient {
  const client = new TunnelClient({
    proxyAddress: `127.0.0.1:${proxy.port}`,
    caPems: [o.caPem ?? ca.certPem],
    ...id,
    onStream: (stream: Duplex) => {
      stream.on("data", (d: Buffer) => stream.write(d.toString().toUpperCase()));
      stream.on("end", () => stream.end());
    },
    logger,
    backoff: { minMs: o.backoffMs ?? 50, maxMs: (o.backoffMs ?? 50) * 4 },
  });
  client.start();
  cleanups.push(() => client.close());
  return client;
}

async function until(cond: () => boolean, what: string, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function roundTrip(stream: Duplex, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    stream.once("data", (d: Buffer) => resolve(d.toString()));
    stream.once("error", reject);
    stream.write(text);
  });
}

/** Raw TLS to the proxy: true when the handshake and admission let the connection live 300 ms. */
async function survives(port: number, id?: { certPem: string; keyPem: string }): Promise<boolean> {
  return new Promise((resolve) => {
    const s = tlsConnect({
      host: "127.0.0.1",
      port,
      ca: [ca.certPem],
      ALPNProtocols: [TUNNEL_ALPN],
      ...(id ? { cert: id.certPem, key: id.keyPem } : {}),
    });
    let alive = true;
    s.on("error", () => {
      alive = false;
    });
    s.once("close", () => {
      alive = false;
      resolve(false);
    });
    // TLS 1.3: the server's verdict on the client certificate arrives after secureConnect.
    s.once("secureConnect", () =>
      setTimeout(() => {
        s.destroy();
        resolve(alive);
      }, 300),
    );
  });
}

const NODE_INFO = (id: string) => ({
  id,
  hostname: `host-${id}`,
  addresses: [],
  labels: {},
  status: "online",
  version: "0.1.0",
});

describe("reverse tunnel", () => {
  it("reads the agent id from the certificate's URI SAN only", () => {
    expect(agentIdOf("URI:svc://agent/abc-1")).toBe("abc-1");
    expect(agentIdOf("DNS:x, URI:svc://agent/a%2Fb")).toBe("a/b");
    expect(agentIdOf("URI:svc://bot/abc")).toBeUndefined();
    expect(agentIdOf(undefined)).toBeUndefined();
  });

  it("backs off exponentially with jitter, capped", () => {
    const o = { minMs: 1000, maxMs: 30_000 };
    expect(backoffDelay(0, o, () => 0)).toBe(500);
    expect(backoffDelay(0, o, () => 1)).toBe(1000);
    expect(backoffDelay(3, o, () => 1)).toBe(8000);
    expect(backoffDelay(20, o, () => 1)).toBe(30_000);
    expect(backoffDelay(20, o, () => 0)).toBe(15_000);
  });

  it("carries CONNECT streams from the proxy to the agent, many at once", async () => {
    const proxy = await startProxy();
    const agent = startAgent(proxy, await clientCert(ca, agentIdentityUri("n1")));
    await agent.connected();
    await until(() => proxy.registry.has("n1"), "registration");
    const dialer = new NodeDialer({ registry: proxy.registry });
    const streams = await Promise.all([1, 2, 3].map(() => dialer.dial(NODE_INFO("n1"))));
    const answers = await Promise.all(streams.map((s, i) => roundTrip(s, `hello ${i}`)));
    expect(answers).toEqual(["HELLO 0", "HELLO 1", "HELLO 2"]);
    for (const s of streams) s.destroy();
  });

  it("refuses no client certificate, another CA's certificate, a bot's, and an unregistered node", async () => {
    const proxy = await startProxy({ registered: (id) => id !== "gone" });
    expect(await survives(proxy.port)).toBe(false);
    const other = await newCa("other CA");
    expect(await survives(proxy.port, await clientCert(other, agentIdentityUri("n1")))).toBe(false);
    expect(await survives(proxy.port, await clientCert(ca, botIdentityUri("b")))).toBe(false);
    expect(await survives(proxy.port, await clientCert(ca, agentIdentityUri("gone")))).toBe(false);
    // The control: a registered agent's connection lives.
    expect(await survives(proxy.port, await clientCert(ca, agentIdentityUri("ok")))).toBe(true);
    expect(proxy.registry.has("gone")).toBe(false);
  });

  it("replaces a node's tunnel with its newest one", async () => {
    const proxy = await startProxy();
    const id = await clientCert(ca, agentIdentityUri("n2"));
    const first = startAgent(proxy, id, { backoffMs: 60_000 });
    await first.connected();
    await until(() => proxy.registry.has("n2"), "first registration");
    const firstSession = proxy.registry.get("n2")?.session;
    const second = startAgent(proxy, id, { backoffMs: 60_000 });
    await second.connected();
    await until(() => proxy.registry.get("n2")?.session !== firstSession, "replacement");
    await until(() => !first.status().connected, "first tunnel closed");
    expect(second.status().connected).toBe(true);
    expect(proxy.registry.size).toBe(1);
    const s = await new NodeDialer({ registry: proxy.registry }).dial(NODE_INFO("n2"));
    expect(await roundTrip(s, "still")).toBe("STILL");
    s.destroy();
  });

  it("drops a tunnel whose agent stops answering PINGs", async () => {
    const proxy = await startProxy({ heartbeatMs: 100 });
    const id = await clientCert(ca, agentIdentityUri("n3"));
    // A hand-made agent: TLS like the real one, then silence: it reads and drops every byte, so
    // no PING is ever answered (node's h2 answers PINGs itself, so a live h2 peer cannot be muted).
    const tls = tlsConnect({
      host: "127.0.0.1",
      port: proxy.port,
      ca: [ca.certPem],
      ALPNProtocols: [TUNNEL_ALPN],
      cert: id.certPem,
      key: id.keyPem,
    });
    cleanups.push(() => tls.destroy());
    tls.on("error", () => {});
    await new Promise<void>((r) => tls.once("secureConnect", () => r()));
    tls.resume();
    await until(() => proxy.registry.has("n3"), "registration");
    await until(() => !proxy.registry.has("n3"), "drop after missed heartbeats", 5_000);
    await expect(new NodeDialer({ registry: proxy.registry }).dial(NODE_INFO("n3"))).rejects.toThrow(
      /node "host-n3" is unreachable: it has no tunnel and advertises no address/,
    );
  });

  it("reconnects after the proxy restarts", async () => {
    const first = await startProxy();
    const port = first.port;
    const agent = startAgent(first, await clientCert(ca, agentIdentityUri("n4")), { backoffMs: 50 });
    await agent.connected();
    expect(agent.status().connects).toBe(1);
    await first.close();
    await until(() => !agent.status().connected, "agent notices");
    const second = await startProxy({ port });
    await until(() => second.registry.has("n4"), "re-registration", 10_000);
    // The agent counts the tunnel once the proxy's h2 SETTINGS arrive, a moment after the proxy
    // registered it.
    await until(() => agent.status().connects === 2, "the agent's second tunnel");
    const s = await new NodeDialer({ registry: second.registry }).dial(NODE_INFO("n4"));
    expect(await roundTrip(s, "back")).toBe("BACK");
    s.destroy();
  });

  it("falls back to the node's address, and says why a node is unreachable", async () => {
    const dialer = new NodeDialer({ registry: new TunnelRegistry(), timeoutMs: 2000 });
    const echo = createServer((s) => s.pipe(s));
    await new Promise<void>((r) => echo.listen(0, "127.0.0.1", r));
    cleanups.push(() => new Promise<void>((r) => echo.close(() => r())));
    const a = echo.address();
    const port = typeof a === "object" && a ? a.port : 0;
    const s = await dialer.dial({ ...NODE_INFO("n5"), addresses: [`127.0.0.1:${port}`] });
    expect(await roundTrip(s, "tcp")).toBe("tcp");
    s.destroy();
    await expect(dialer.dial({ ...NODE_INFO("n6"), addresses: ["127.0.0.1:1"] })).rejects.toThrow(
      /node "host-n6" is unreachable: 127\.0\.0\.1:1: .*ECONNREFUSED/,
    );
  });
});
