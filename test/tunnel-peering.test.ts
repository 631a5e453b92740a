// Any proxy replica reaches any tunnelled node (docs/tunnels.md, "Several proxies"), all real:
// auth with agent join, a real agent (SSH server), proxy identities from the host CA, TLS 1.3 and
// HTTP/2 between replicas. The peer protocol is checked on its own here: the holder's "local
// tunnel" is a TCP connection to the agent's SSH port, so what reaches the dialer is the node's
// real SSH server.
import { once } from "node:events";
import { mkdtemp, rm } from "node:fs/promises";
import http2 from "node:http2";
import { connect, createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Duplex } from "node:stream";
import tls from "node:tls";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  generateEcdsaP256,
  issueTlsClientCert,
  issueTlsServerCert,
  privateKeyToPem,
  serviceIdentityUri,
} from "../core/certs/x509.ts";
import { systemClock } from "../core/clock.ts";
import { BadParameterError, UnavailableError } from "../core/errors.ts";
import { loadIdentity } from "../server/agent/identity.ts";
import { type RunningAgent, runAgent } from "../server/agent/main.ts";
import { agentMetadata, callUnary, createAuthClient } from "../server/auth/client.ts";
import { proxyDefaults } from "../server/proxy/config.ts";
import { GrpcAuthApi } from "../server/proxy/grpc-auth-api.ts";
import { announceLocation, isLocationRequest, readLocation } from "../server/proxy/peering/location.ts";
import {
  type LocalTunnels,
  type PeeringIdentity,
  ProxyPeering,
  peerAddressOf,
} from "../server/proxy/peering/peering.ts";
import { PEER_ALPN, peerAuthority } from "../server/proxy/peering/protocol.ts";
import { type ProxyServer, startProxyServer } from "../server/proxy/server.ts";
import { GrpcTerminalAuthApi } from "../server/proxy/terminal-auth.ts";
import { terminalRoutes } from "../server/proxy/terminal-route.ts";
import { NodeDialer } from "../server/proxy/tunnel/dialer.ts";
import { TunnelRegistry } from "../server/proxy/tunnel/registry.ts";
import { TunnelServer } from "../server/proxy/tunnel/server.ts";
import { TUNNEL_ALPN } from "../server/tunnel/protocol.ts";
import { type AgentAuthEnv, silent, startAgentAuthEnv } from "./agent-fixture.ts";
import { mustOpen } from "./terminal-client.ts";
import type { FixtureGrpc } from "./terminal-fixture.ts";

const PUBLIC_HOST = "proxy.svc.test";

let env: AgentAuthEnv;
let agent: RunningAgent;
let dir: string;
let identity: PeeringIdentity;
const cleanups: Array<() => unknown> = [];

async function proxyIdentity(): Promise<PeeringIdentity> {
  const clock = systemClock;
  const server = generateEcdsaP256();
  const client = generateEcdsaP256();
  return {
    certPem: await issueTlsServerCert(env.cas.hostCa, {
      publicKey: server.publicKey,
      commonName: PUBLIC_HOST,
      dnsNames: [PUBLIC_HOST],
      ips: ["127.0.0.1"],
      clock,
    }),
    keyPem: privateKeyToPem(server.privateKey),
    clientCertPem: await issueTlsClientCert(env.cas.hostCa, {
      publicKey: client.publicKey,
      commonName: "proxy",
      uri: serviceIdentityUri("proxy", "proxy"),
      clock,
    }),
    clientKeyPem: privateKeyToPem(client.privateKey),
    caPems: [env.cas.hostCa.certPem],
  };
}

/** A listener standing in for the public port's router: every connection goes to one handler. */
async function listenFor(handler: (s: Socket) => void): Promise<{ server: Server; addr: string }> {
  const server = createServer(handler);
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const a = server.address();
  if (!a || typeof a === "string") throw new Error("no port");
  cleanups.push(() => server.close());
  return { server, addr: `127.0.0.1:${a.port}` };
}

/** Tunnels of a holder: the agent's SSH port over TCP, for the node ids given. */
function tcpTunnels(nodes: Map<string, { host: string; port: number }>): LocalTunnels {
  return {
    has: (id) => nodes.has(id),
    get: () => undefined,
    open: async (id) => {
      const t = nodes.get(id);
      if (!t) throw new UnavailableError("no tunnel");
      const s = connect(t);
      await once(s, "connect");
      return s;
    },
    onChange: () => () => {},
  };
}

/** The first line the stream carries (the SSH identification string of a real SSH server). */
async function firstLine(stream: Duplex): Promise<string> {
  let text = "";
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    text += chunk.toString("latin1");
    const nl = text.indexOf("\n");
    if (nl >= 0) return text.slice(0, nl).trim();
  }
  return text;
}

interface Holder {
  peering: ProxyPeering;
  addr: string;
}

async function startHolder(
  nodes: Map<string, { host: string; port: number }>,
  id = identity,
): Promise<Holder> {
  let handler: ((s: Socket) => void) | undefined;
  const { addr } = await listenFor((s) => (handler ? handler(s) : s.destroy()));
  const peering = new ProxyPeering({
    tunnels: tcpTunnels(nodes),
    identity: () => id,
    peerAddr: addr,
    selfId: "proxy-a",
    logger: silent,
    timeoutMs: 5_000,
  });
  peering.register({
    handle: (alpn, h) => {
      expect(alpn).toBe(PEER_ALPN);
      handler = h;
    },
  });
  cleanups.push(() => peering.close());
  return { peering, addr };
}

function dialerPeering(selfId = "proxy-b", id = identity): ProxyPeering {
  const p = new ProxyPeering({
    tunnels: tcpTunnels(new Map()),
    identity: () => id,
    peerAddr: "127.0.0.1:1",
    selfId,
    logger: silent,
    timeoutMs: 5_000,
  });
  cleanups.push(() => p.close());
  return p;
}

beforeAll(async () => {
  env = await startAgentAuthEnv({ heartbeatIntervalSeconds: 3600 });
  cleanups.push(() => env.close());
  dir = await mkdtemp(join(tmpdir(), "svc-peering-"));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  agent = await runAgent({
    authAddress: env.address,
    authServerName: env.serverName,
    caPin: env.pin,
    token: await env.addToken("peer-agent-token"),
    dataDir: join(dir, "agent"),
    listen: "127.0.0.1:0",
    hostname: "node-peer",
    logger: silent,
    heartbeatIntervalSeconds: 3600,
  });
  cleanups.push(() => agent.close());
  identity = await proxyIdentity();
}, 60_000);

afterAll(async () => {
  for (const c of cleanups.reverse()) await Promise.resolve(c()).catch(() => {});
});

describe("tunnel location on the node record", () => {
  it("a heartbeat's tunnel location is stored by auth and reaches the proxy's NodeInfo", async () => {
    const id = await loadIdentity(join(dir, "agent"));
    if (!id) throw new Error("agent identity missing");
    const client = createAuthClient({
      address: env.address,
      caPems: id.hostCaPems,
      certPem: id.tlsCertificatePem,
      keyPem: id.tlsKeyPem,
      serverName: env.serverName,
    });
    const proxyGrpc = new GrpcTerminalAuthApi({
      address: env.address,
      caPems: [env.cas.hostCa.certPem],
      certPem: identity.clientCertPem,
      keyPem: identity.clientKeyPem,
      serverName: env.serverName,
    });
    try {
      const beat = (tunnel?: { proxy_id: string; peer_addr: string }) =>
        callUnary(
          client,
          "Heartbeat",
          {
            hostname: "node-peer",
            addresses: agent.addresses,
            labels: {},
            version: "0.1.0",
            ...(tunnel ? { tunnel } : {}),
          },
          agentMetadata(id.agentId),
        );
      const session = await env.login("alice");
      await beat({ proxy_id: "proxy-a", peer_addr: "10.1.2.3:3080" });
      const node = await proxyGrpc.authorizeNodeLogin(session, "node-peer", "alice");
      expect(node.tunnel).toEqual({ proxyId: "proxy-a", peerAddr: "10.1.2.3:3080" });

      // Not host:port: refused, and the stored location is unchanged.
      await expect(beat({ proxy_id: "proxy-a", peer_addr: "http://evil/" })).rejects.toBeInstanceOf(
        BadParameterError,
      );
      expect((await proxyGrpc.authorizeNodeLogin(session, "node-peer", "alice")).tunnel?.peerAddr).toBe(
        "10.1.2.3:3080",
      );

      // The tunnel went away: the next heartbeat carries none and the node has no location.
      await beat();
      expect((await proxyGrpc.authorizeNodeLogin(session, "node-peer", "alice")).tunnel).toBeUndefined();
    } finally {
      client.close();
      proxyGrpc.close();
    }
  });
});

describe("svc-peer between two proxies", () => {
  it("a replica without the tunnel reaches the node's SSH server through the holder", async () => {
    const holder = await startHolder(new Map([[agent.agentId, agent.ssh]]));
    const b = dialerPeering();
    const node = {
      id: agent.agentId,
      hostname: "node-peer",
      addresses: [],
      labels: {},
      status: "online",
      version: "",
      tunnel: holder.peering.location,
    };
    const stream = await b.peerDial(node);
    if (!stream) throw new Error("no peer stream");
    expect(await firstLine(stream)).toMatch(/^SSH-2\.0-/);
    stream.destroy();
    // Several dials share one connection to the peer.
    const again = await b.peerDial(node);
    expect(again && (await firstLine(again))).toMatch(/^SSH-2\.0-/);
    again?.destroy();
  });

  it("no peer dial for a node without a location, or whose location is this replica", async () => {
    const b = dialerPeering("proxy-b");
    const base = {
      id: agent.agentId,
      hostname: "n",
      addresses: [],
      labels: {},
      status: "online",
      version: "",
    };
    expect(await b.peerDial(base)).toBeUndefined();
    expect(
      await b.peerDial({ ...base, tunnel: { proxyId: "proxy-b", peerAddr: "127.0.0.1:1" } }),
    ).toBeUndefined();
  });

  it("the holder answers 'no tunnel' for a node it holds none for", async () => {
    const holder = await startHolder(new Map());
    const b = dialerPeering();
    await expect(b.dialer.dial(holder.peering.location, agent.agentId)).rejects.toThrow(
      /node unreachable: the peer proxy holds no tunnel to it \(no-tunnel\)/,
    );
  });

  it("a bogus location (auth's gRPC port, an SSH server, a TLS server of another name) is never used", async () => {
    const b = dialerPeering();
    // auth: same host CA, mutual TLS would pass, but its certificate names auth, not the proxies.
    await expect(b.dialer.dial({ proxyId: "x", peerAddr: env.address }, agent.agentId)).rejects.toThrow(
      /node unreachable: its tunnel's proxy could not be reached as a proxy/,
    );
    // The node's own SSH server: no TLS at all.
    await expect(
      b.dialer.dial({ proxyId: "x", peerAddr: `${agent.ssh.host}:${agent.ssh.port}` }, agent.agentId),
    ).rejects.toBeInstanceOf(UnavailableError);
    // A TLS server with the proxies' own certificate that does not speak svc-peer (ALPN h2).
    const h2 = http2.createSecureServer({ cert: identity.certPem, key: identity.keyPem });
    h2.on("stream", (s) => s.respond({ ":status": 200 }));
    h2.listen(0, "127.0.0.1");
    await once(h2, "listening");
    cleanups.push(() => h2.close());
    const port = (h2.address() as { port: number }).port;
    await expect(
      b.dialer.dial({ proxyId: "x", peerAddr: `127.0.0.1:${port}` }, agent.agentId),
    ).rejects.toThrow(/could not be reached as a proxy/);
  });

  it("a peer whose server certificate does not name the proxies is refused, even speaking svc-peer", async () => {
    // Same host CA, same protocol, but a certificate for another name (as auth's would be).
    const key = generateEcdsaP256();
    const other: PeeringIdentity = {
      ...identity,
      certPem: await issueTlsServerCert(env.cas.hostCa, {
        publicKey: key.publicKey,
        commonName: "auth.svc.test",
        dnsNames: ["auth.svc.test"],
        clock: systemClock,
      }),
      keyPem: privateKeyToPem(key.privateKey),
    };
    const holder = await startHolder(new Map([[agent.agentId, agent.ssh]]), other);
    await expect(dialerPeering().dialer.dial(holder.peering.location, agent.agentId)).rejects.toThrow(
      /could not be reached as a proxy/,
    );
  });

  it("only a proxy's client certificate may use svc-peer", async () => {
    const holder = await startHolder(new Map([[agent.agentId, agent.ssh]]));
    const agentId = await loadIdentity(join(dir, "agent"));
    if (!agentId) throw new Error("agent identity missing");
    const attempt = async (cert?: { certPem: string; keyPem: string }): Promise<string> => {
      const [host, port] = holder.addr.split(":");
      const socket = tls.connect({
        host,
        port: Number(port),
        servername: PUBLIC_HOST,
        ca: [env.cas.hostCa.certPem],
        ALPNProtocols: [PEER_ALPN],
        ...(cert ? { cert: cert.certPem, key: cert.keyPem } : {}),
      });
      socket.on("error", () => {});
      const session = http2.connect(`https://${PUBLIC_HOST}`, { createConnection: () => socket });
      session.on("error", () => {});
      try {
        const req = session.request({ ":method": "CONNECT", ":authority": peerAuthority(agent.agentId) });
        req.on("error", () => {});
        // events.once would reject on the stream's error; the outcome is what we want to see.
        const outcome = await new Promise<string>((resolve) => {
          req.once("response", (h) => resolve(String(h[":status"])));
          req.once("close", () => resolve("closed"));
        });
        return outcome;
      } finally {
        session.destroy();
      }
    };
    // An agent (host CA, svc://agent/<id>) and no certificate at all: refused.
    expect(await attempt({ certPem: agentId.tlsCertificatePem, keyPem: agentId.tlsKeyPem })).toBe("closed");
    expect(await attempt()).toBe("closed");
    // A proxy: relayed.
    expect(await attempt({ certPem: identity.clientCertPem, keyPem: identity.clientKeyPem })).toBe("200");
  });

  it("the tunnel's proxy tells the agent its location over the tunnel's HTTP/2 connection", async () => {
    // Roles as in a tunnel: the agent is the HTTP/2 server, the proxy the client.
    const got: unknown[] = [];
    const server = http2.createServer();
    server.on("stream", (stream, headers) => {
      if (isLocationRequest(headers))
        readLocation(stream).then(
          (l) => got.push(l),
          (e) => got.push(e),
        );
      else stream.respond({ ":status": 405 }, { endStream: true });
    });
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    cleanups.push(() => server.close());
    const session = http2.connect(`http://127.0.0.1:${(server.address() as { port: number }).port}`);
    cleanups.push(() => session.destroy());
    await announceLocation(session, { proxyId: "proxy-a", peerAddr: "10.0.0.7:3080" });
    expect(got).toEqual([{ proxyId: "proxy-a", peerAddr: "10.0.0.7:3080" }]);
  });
});

describe("peer address", () => {
  it("config first, then the Pod IP the chart passes, then the listen address", () => {
    expect(peerAddressOf({ listen_addr: "0.0.0.0:3080", peer_addr: "10.0.0.5:3080" }, {})).toBe(
      "10.0.0.5:3080",
    );
    expect(peerAddressOf({ listen_addr: "0.0.0.0:3080" }, { SVC_PROXY_PEER_HOST: "10.0.0.9" })).toBe(
      "10.0.0.9:3080",
    );
    expect(peerAddressOf({ listen_addr: "0.0.0.0:3080" }, { SVC_PROXY_PEER_HOST: "fd00::9" })).toBe(
      "[fd00::9]:3080",
    );
    expect(peerAddressOf({ listen_addr: "192.168.1.2:4080" }, {})).toBe("192.168.1.2:4080");
    expect(peerAddressOf({ listen_addr: "0.0.0.0:3080" }, {})).toMatch(/^[^:]+:3080$/);
  });
});

// ---------------------------------------------------------------------------------------------
// Two real proxies on one auth, each with its public port router, tunnel server and peering; a
// tunnel-only agent (no SSH port) behind a switchable TCP balancer in front of both proxies.

interface RealProxy {
  name: string;
  proxy: ProxyServer;
  registry: TunnelRegistry;
  peering: ProxyPeering;
}

async function freePort(): Promise<number> {
  const srv = createServer();
  srv.listen(0, "127.0.0.1");
  await once(srv, "listening");
  const port = (srv.address() as { port: number }).port;
  await new Promise((r) => srv.close(r));
  return port;
}

async function startRealProxy(name: string, clients: FixtureGrpc): Promise<RealProxy> {
  const port = await freePort();
  const registry = new TunnelRegistry();
  const tunnelServer = new TunnelServer({
    registry,
    tls: () => ({ certPem: identity.certPem, keyPem: identity.keyPem, caPems: identity.caPems }),
    logger: silent,
  });
  const peering = new ProxyPeering({
    tunnels: registry,
    identity: () => identity,
    peerAddr: `127.0.0.1:${port}`,
    selfId: name,
    logger: silent,
    timeoutMs: 5_000,
  });
  const terminalAuth = new GrpcTerminalAuthApi(clients);
  const authApi = new GrpcAuthApi(clients);
  const origin = `https://${PUBLIC_HOST}:${port}`;
  const proxy = await startProxyServer({
    config: {
      ...proxyDefaults,
      listenHost: "127.0.0.1",
      listenPort: port,
      publicUrl: origin,
      clusterName: "test",
      serverVersion: "0.1.0",
      clientVersionPolicy: { minimum: "0.1.0", recommended: "0.1.0" },
      oidcIssuerUrl: origin,
      rateLimit: { perAddress: 1000, perUsername: 1000, windowMs: 60_000 },
    },
    tls: { certPem: identity.certPem, keyPem: identity.keyPem },
    authApi,
    logger: silent,
    ready: () => true,
    resources: env.source,
    routes: [
      terminalRoutes({
        terminalAuth,
        clock: systemClock,
        dialer: new NodeDialer({ registry, peer: peering.peerDial, timeoutMs: 5_000 }),
      }),
    ],
  });
  proxy.router.handle(TUNNEL_ALPN, (s) => tunnelServer.handle(s));
  peering.register(proxy.router);
  cleanups.push(async () => {
    peering.close();
    tunnelServer.close();
    registry.closeAll();
    await proxy.close();
    terminalAuth.close();
    authApi.close();
  });
  return { name, proxy, registry, peering };
}

/** A TCP balancer in front of the proxies: `point(port)` sends new connections there and cuts the old. */
async function startBalancer(firstPort: number): Promise<{ addr: string; point(port: number): void }> {
  let target = firstPort;
  const live = new Set<Socket>();
  const { addr } = await listenFor((inbound) => {
    const outbound = connect({ host: "127.0.0.1", port: target });
    for (const s of [inbound, outbound]) {
      live.add(s);
      s.once("close", () => live.delete(s));
      s.on("error", () => {});
    }
    inbound.pipe(outbound).pipe(inbound);
    inbound.once("close", () => outbound.destroy());
    outbound.once("close", () => inbound.destroy());
  });
  cleanups.push(() => {
    for (const s of live) s.destroy();
  });
  return {
    addr,
    point(port) {
      target = port;
      for (const s of live) s.destroy();
    },
  };
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("two proxies on one auth", () => {
  let a: RealProxy;
  let b: RealProxy;
  let tunnelled: RunningAgent;
  let session = "";
  let nodeView: GrpcTerminalAuthApi;
  let balancer: Awaited<ReturnType<typeof startBalancer>>;

  beforeAll(async () => {
    const clients: FixtureGrpc = {
      address: env.address,
      caPems: [env.cas.hostCa.certPem],
      certPem: identity.clientCertPem,
      keyPem: identity.clientKeyPem,
      serverName: env.serverName,
    };
    a = await startRealProxy("proxy-a", clients);
    b = await startRealProxy("proxy-b", clients);
    nodeView = new GrpcTerminalAuthApi(clients);
    cleanups.push(() => nodeView.close());
    session = await env.login("alice");
    balancer = await startBalancer(a.proxy.port);
    tunnelled = await runAgent({
      authAddress: env.address,
      authServerName: env.serverName,
      caPin: env.pin,
      token: await env.addToken("tunnel-agent-token"),
      dataDir: join(dir, "tunnel-agent"),
      hostname: "node-tunnel",
      logger: silent,
      heartbeatIntervalSeconds: 3600,
      tunnel: {
        proxyAddress: balancer.addr,
        serverName: PUBLIC_HOST,
        backoff: { minMs: 100, maxMs: 500 },
      },
    });
    cleanups.push(() => tunnelled.close());
  }, 60_000);

  const locationIs = (proxyId: string) =>
    until(`the node's tunnel location to be ${proxyId}`, async () => {
      const n = await nodeView.authorizeNodeLogin(session, "node-tunnel", "root");
      return n.tunnel?.proxyId === proxyId ? n : undefined;
    });

  async function shellThrough(p: RealProxy): Promise<void> {
    const c = await mustOpen({
      baseUrl: p.proxy.url,
      caPem: env.cas.hostCa.certPem,
      servername: PUBLIC_HOST,
      query: { node: "node-tunnel", login: "root", cols: "80", rows: "24" },
      headers: { authorization: `Bearer ${session}` },
    });
    try {
      expect(await c.waitControl("ready", 30_000)).toEqual({
        type: "ready",
        node: "node-tunnel",
        login: "root",
      });
      c.type(`echo via-${p.name}-''ok\r`);
      await c.waitFor(`via-${p.name}-ok`, 30_000);
    } finally {
      c.ws.close();
    }
  }

  it("a browser terminal through the replica without the tunnel reaches the node", async () => {
    const node = await locationIs("proxy-a");
    expect(node.addresses).toEqual([]); // tunnel only: no other way in
    expect(node.tunnel).toEqual(a.peering.location);
    expect(a.registry.has(tunnelled.agentId)).toBe(true);
    expect(b.registry.has(tunnelled.agentId)).toBe(false);
    await shellThrough(b);
    await shellThrough(a);
  }, 90_000);

  it("after the tunnel moves to the other replica, the first one reaches the node through it", async () => {
    balancer.point(b.proxy.port);
    await until("the tunnel on proxy-b", async () => (b.registry.has(tunnelled.agentId) ? true : undefined));
    await locationIs("proxy-b");
    expect(a.registry.has(tunnelled.agentId)).toBe(false);
    await shellThrough(a);
  }, 90_000);

  it("a node claiming a bogus location makes the proxy dial no arbitrary service: node unreachable", async () => {
    // Any TCP service: it must see nothing past a TLS ClientHello (no CONNECT, no SSH bytes).
    const seen: Buffer[] = [];
    const { addr: serviceAddr } = await listenFor((s) => {
      s.on("data", (d: Buffer) => seen.push(d));
      s.on("error", () => {});
    });
    const liar = await runAgent({
      authAddress: env.address,
      authServerName: env.serverName,
      caPin: env.pin,
      token: await env.addToken("liar-agent-token"),
      dataDir: join(dir, "liar-agent"),
      hostname: "node-liar",
      logger: silent,
      heartbeatIntervalSeconds: 3600,
      tunnel: { proxyAddress: "127.0.0.1:1", backoff: { minMs: 60_000, maxMs: 60_000 } },
    });
    cleanups.push(() => liar.close());
    const id = await loadIdentity(join(dir, "liar-agent"));
    if (!id) throw new Error("liar identity missing");
    const client = createAuthClient({
      address: env.address,
      caPems: id.hostCaPems,
      certPem: id.tlsCertificatePem,
      keyPem: id.tlsKeyPem,
      serverName: env.serverName,
    });
    cleanups.push(() => client.close());
    for (const peerAddr of [serviceAddr, env.address]) {
      await callUnary(
        client,
        "Heartbeat",
        {
          hostname: "node-liar",
          addresses: [],
          labels: {},
          version: "0.1.0",
          tunnel: { proxy_id: "proxy-z", peer_addr: peerAddr },
        },
        agentMetadata(id.agentId),
      );
      const c = await mustOpen({
        baseUrl: a.proxy.url,
        caPem: env.cas.hostCa.certPem,
        servername: PUBLIC_HOST,
        query: { node: "node-liar", login: "root", cols: "80", rows: "24" },
        headers: { authorization: `Bearer ${session}` },
      });
      const ctl = await c.waitControl("error", 30_000);
      expect(ctl).toMatchObject({ type: "error" });
      expect(JSON.stringify(ctl)).toMatch(/unreachable/);
      c.ws.close();
    }
    // The service got a TLS handshake record at most (content type 0x16), nothing else.
    const bytes = Buffer.concat(seen);
    expect(bytes.length).toBeGreaterThan(0);
    expect(bytes[0]).toBe(0x16);
    expect(bytes.includes(Buffer.from("SSH-2.0"))).toBe(false);
  }, 90_000);
});
