// One public port: the real proxy routes each TLS connection by its ClientHello to the real auth
// (raw TCP, mutual TLS end to end), to a registered ALPN handler, or to its own HTTPS server.
// Clients are real: grpc-js, grpcurl, node:tls, the proxy's HTTPS client.
import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, connect as netConnect, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type TLSSocket, TLSSocket as TlsSocketClass, connect as tlsConnect } from "node:tls";
import { promisify } from "node:util";
import { status } from "@grpc/grpc-js";
import { pino } from "pino";
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateSshKeyPair } from "../core/certs/ssh-keys.ts";
import {
  generateEcdsaP256,
  issueTlsClientCert,
  issueTlsServerCert,
  privateKeyToPem,
  serviceIdentityUri,
} from "../core/certs/x509.ts";
import { systemClock } from "../core/clock.ts";
import { agentMetadata, callUnary, createAuthClient, userMetadata } from "../server/auth/client.ts";
import { startEmbedded } from "../server/embedded/start.ts";
import type { ClientHelloInfo } from "../server/proxy/server.ts";
import { type AgentAuthEnv, startAgentAuthEnv } from "./agent-fixture.ts";
import { PASSWORD, statusOf } from "./auth-fixture.ts";
import { toolPath } from "./harness/tools.ts";
import { PUBLIC_HOST, startProxySide } from "./proxy-fixture.ts";
import { HttpsClient } from "./proxy-https-client.ts";

const run = promisify(execFile);
const HELLO_TIMEOUT_MS = 300;

let env: AgentAuthEnv;
let side: Awaited<ReturnType<typeof startProxySide>>;
let certs: {
  proxyClient: { certPem: string; keyPem: string };
  proxyServer: { certPem: string; keyPem: string };
};
let metrics: Registry;
let dir = "";
const cleanups: Array<() => Promise<unknown> | unknown> = [];

async function issueProxyCerts() {
  const serverKey = generateEcdsaP256();
  const clientKey = generateEcdsaP256();
  return {
    proxyServer: {
      certPem: await issueTlsServerCert(env.cas.hostCa, {
        publicKey: serverKey.publicKey,
        commonName: PUBLIC_HOST,
        dnsNames: [PUBLIC_HOST],
        clock: systemClock,
      }),
      keyPem: privateKeyToPem(serverKey.privateKey),
    },
    proxyClient: {
      certPem: await issueTlsClientCert(env.cas.hostCa, {
        publicKey: clientKey.publicKey,
        commonName: "proxy",
        uri: serviceIdentityUri("proxy", "test"),
        clock: systemClock,
      }),
      keyPem: privateKeyToPem(clientKey.privateKey),
    },
  };
}

/** A proxy in front of env's auth; `authAddress` is where its passthrough dials. */
function startProxy(authPassthroughAddress: string, registry?: Registry) {
  return startProxySide({
    authAddress: env.address,
    hostCaPem: env.cas.hostCa.certPem,
    ...certs,
    resources: env.source,
    overrides: { clientHelloTimeoutMs: HELLO_TIMEOUT_MS },
    authPassthrough: { address: authPassthroughAddress, serverName: env.serverName },
    ...(registry ? { metrics: registry } : {}),
  });
}

beforeAll(async () => {
  env = await startAgentAuthEnv();
  certs = await issueProxyCerts();
  metrics = new Registry();
  side = await startProxy(env.address, metrics);
  dir = await mkdtemp(join(tmpdir(), "svc-proxy-routing-"));
});

afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
  await side?.close();
  await env?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const proxyAddress = () => `127.0.0.1:${side.proxy.port}`;

/** A grpc-js client of auth that dials the proxy's port (what `--proxy` clients do). */
function viaProxy(o: { certPem?: string; keyPem?: string; port?: number } = {}) {
  const client = createAuthClient({
    address: `127.0.0.1:${o.port ?? side.proxy.port}`,
    caPems: [env.cas.hostCa.certPem],
    serverName: env.serverName,
    ...(o.certPem && o.keyPem ? { certPem: o.certPem, keyPem: o.keyPem } : {}),
  });
  cleanups.push(() => client.close());
  return client;
}

/** A TLS handshake with the public port; resolves with the certificate the far end presented. */
function handshake(o: { servername?: string; ALPNProtocols?: string[]; port?: number }): Promise<TLSSocket> {
  return new Promise((resolve, reject) => {
    const s = tlsConnect({
      host: "127.0.0.1",
      port: o.port ?? side.proxy.port,
      ca: env.cas.hostCa.certPem,
      // The certificate's name is checked by the test (it tells which server answered).
      checkServerIdentity: () => undefined,
      ...(o.servername ? { servername: o.servername } : {}),
      ...(o.ALPNProtocols ? { ALPNProtocols: o.ALPNProtocols } : {}),
    });
    s.once("secureConnect", () => resolve(s));
    s.once("error", reject);
    cleanups.push(() => s.destroy());
  });
}

/** A raw TCP connection to the public port; resolves with everything it got once the proxy closes it. */
function rawExchange(
  send: (s: Socket) => void,
  port = side.proxy.port,
): Promise<{ data: string; ms: number }> {
  return new Promise((resolve) => {
    const started = Date.now();
    const chunks: Buffer[] = [];
    const s = netConnect(port, "127.0.0.1", () => send(s));
    s.on("data", (d: Buffer) => chunks.push(d));
    s.on("error", () => {});
    s.on("close", () =>
      resolve({ data: Buffer.concat(chunks).toString("latin1"), ms: Date.now() - started }),
    );
    cleanups.push(() => s.destroy());
  });
}

async function metricValue(name: string, label: string, value: string): Promise<number> {
  const m = (await metrics.getSingleMetric(name)?.get())?.values ?? [];
  return m.find((v) => v.labels[label] === value)?.value ?? 0;
}

describe("gRPC to auth through the proxy's port", () => {
  it("ping names the SNI that routes to auth", async () => {
    const res = await side.client.send({ path: "/v1/webapi/ping" });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ tls_routing: { auth_server_name: "localhost", tunnel: false } });
  });

  it("user calls (Bearer session) and agent calls (client certificate + x-agent-id) reach auth", async () => {
    const anon = viaProxy();
    const login = await callUnary(anon, "AuthenticateLocal", { username: "alice", password: PASSWORD });
    const sessionId = login.session?.session_id ?? "";
    expect(sessionId).not.toBe("");
    const me = await callUnary(anon, "GetSession", {}, userMetadata(sessionId));
    expect(me.username).toBe("alice");

    // Join through the proxy too, then heartbeat with the client certificate auth issued.
    const token = await env.addToken("routing-join");
    const host = generateSshKeyPair("ed25519");
    const tls = generateEcdsaP256();
    const joined = await callUnary(anon, "RegisterAgent", {
      token,
      hostname: "routed-node",
      host_ssh_public_key: host.publicLine,
      tls_public_key_pem: String(tls.publicKey.export({ type: "spki", format: "pem" })),
      labels: {},
      addresses: ["127.0.0.1:3022"],
    });
    const agentId = joined.agent_id ?? "";
    const agent = viaProxy({
      certPem: joined.tls_certificate_pem ?? "",
      keyPem: privateKeyToPem(tls.privateKey),
    });
    await callUnary(
      agent,
      "Heartbeat",
      { hostname: "routed-node", addresses: ["127.0.0.1:3022"], labels: {}, version: "t" },
      agentMetadata(agentId),
    );
    const nodes = await callUnary(anon, "ListNodes", {}, userMetadata(await env.login("alice")));
    expect(nodes.nodes.find((n) => n.id === agentId)).toMatchObject({
      hostname: "routed-node",
      status: "online",
    });

    // The certificate is bound to its agent id end to end: another id is refused by auth.
    const other = await statusOf(
      callUnary(
        agent,
        "Heartbeat",
        { hostname: "routed-node", addresses: [], labels: {}, version: "t" },
        agentMetadata("00000000-0000-4000-8000-000000000000"),
      ),
    );
    expect(other.code).toBe(status.UNAUTHENTICATED);
    // And without a client certificate, x-agent-id alone is nothing.
    const bare = await statusOf(
      callUnary(
        anon,
        "Heartbeat",
        { hostname: "routed-node", addresses: [], labels: {}, version: "t" },
        agentMetadata(agentId),
      ),
    );
    expect(bare.code).toBe(status.UNAUTHENTICATED);
    expect(await metricValue("svc_proxy_routed_connections_total", "route", "auth")).toBeGreaterThan(0);
  });

  it("grpcurl (Go's gRPC) reaches auth through the proxy's port", async () => {
    const caFile = join(dir, "host-ca.pem");
    await writeFile(caFile, env.cas.hostCa.certPem);
    const r = await run(
      toolPath("grpcurl"),
      [
        "-cacert",
        caFile,
        "-authority",
        env.serverName,
        "-max-time",
        "20",
        proxyAddress(),
        "svc.v1.AuthService/GetClusterInfo",
      ],
      { timeout: 30_000 },
    );
    expect(JSON.parse(r.stdout)).toMatchObject({ cluster_name: "test" });
  });

  it("SNI = auth's name goes to auth even when http/1.1 is offered; the public name goes to the web server", async () => {
    const toAuth = await handshake({ servername: env.serverName, ALPNProtocols: ["h2", "http/1.1"] });
    expect(toAuth.getPeerCertificate().subject?.CN).toBe("auth");
    const toWeb = await handshake({ servername: PUBLIC_HOST, ALPNProtocols: ["h2", "http/1.1"] });
    expect(toWeb.getPeerCertificate().subject?.CN).toBe(PUBLIC_HOST);
    // No SNI, no ALPN (an old client by IP): the web server.
    const bare = await handshake({});
    expect(bare.getPeerCertificate().subject?.CN).toBe(PUBLIC_HOST);
    toAuth.destroy();
    toWeb.destroy();
    bare.destroy();
  });
});

describe("ALPN handlers", () => {
  it("a registered handler gets the raw socket with the hello put back, and terminates TLS itself", async () => {
    const seen: ClientHelloInfo[] = [];
    side.proxy.router.handle("svc-test", (socket, hello) => {
      seen.push(hello);
      const tls = new TlsSocketClass(socket, {
        isServer: true,
        cert: certs.proxyServer.certPem,
        key: certs.proxyServer.keyPem,
        ALPNProtocols: ["svc-test"],
      });
      tls.on("error", () => {});
      tls.on("data", (d: Buffer) => tls.write(Buffer.concat([Buffer.from("echo:"), d])));
    });
    const s = await handshake({ servername: PUBLIC_HOST, ALPNProtocols: ["svc-test"] });
    expect(s.alpnProtocol).toBe("svc-test");
    const reply = new Promise<string>((resolve) => s.once("data", (d: Buffer) => resolve(d.toString())));
    s.write("hi");
    expect(await reply).toBe("echo:hi");
    expect(seen).toEqual([{ serverName: PUBLIC_HOST, alpnProtocols: ["svc-test"] }]);
    s.destroy();
    expect(() => side.proxy.router.handle("h2", () => {})).toThrow();
  });

  it("ping says tunnel: true once a svc-tunnel handler is registered", async () => {
    side.proxy.router.handle("svc-tunnel", (socket) => socket.destroy());
    const res = await side.client.send({ path: "/v1/webapi/ping" });
    expect(res.json).toMatchObject({ tls_routing: { tunnel: true } });
  });
});

describe("bad input on the public port", () => {
  it("plain HTTP gets a 400 saying the port speaks HTTPS, then the connection closes", async () => {
    const r = await rawExchange((s) => s.write("GET / HTTP/1.1\r\nHost: proxy\r\n\r\n"));
    expect(r.data).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(r.data).toContain("This port speaks HTTPS, not HTTP.");
    expect(await metricValue("svc_proxy_refused_connections_total", "reason", "plain_http")).toBeGreaterThan(
      0,
    );
  });

  it("closes non-TLS bytes, a hello claiming more than 16 KiB, a malformed hello, and a silent client", async () => {
    const pending = [
      rawExchange((s) => s.write(Buffer.from([0x00, 0x01, 0x02, 0x03]))),
      // record header + a ClientHello header claiming 64 KiB
      rawExchange((s) => s.write(Buffer.from([0x16, 0x03, 0x01, 0x00, 0x04, 0x01, 0x01, 0x00, 0x00]))),
      // a whole record that holds a ServerHello type instead
      rawExchange((s) => s.write(Buffer.from([0x16, 0x03, 0x01, 0x00, 0x04, 0x02, 0x00, 0x00, 0x00]))),
      // a ClientHello whose cipher-suite length runs past its end
      rawExchange((s) => {
        const body = Buffer.concat([
          Buffer.from([0x03, 0x03]),
          Buffer.alloc(32),
          Buffer.from([0x00, 0xff, 0xff]),
        ]);
        const hs = Buffer.concat([Buffer.from([0x01, 0x00, 0x00, body.length]), body]);
        s.write(Buffer.concat([Buffer.from([0x16, 0x03, 0x01, 0x00, hs.length]), hs]));
      }),
    ];
    // While these are refused (and one waits out the timeout), other clients are served.
    const silent = rawExchange(() => {});
    const ping = await side.client.send({ path: "/v1/webapi/ping" });
    expect(ping.status).toBe(200);
    for (const r of await Promise.all(pending)) expect(r.data).toBe("");
    const s = await silent;
    expect(s.data).toBe("");
    expect(s.ms).toBeGreaterThanOrEqual(HELLO_TIMEOUT_MS - 50);
    for (const reason of ["not_tls", "too_large", "malformed", "timeout"]) {
      expect(
        await metricValue("svc_proxy_refused_connections_total", "reason", reason),
        reason,
      ).toBeGreaterThan(0);
    }
    expect((await side.client.send({ path: "/v1/webapi/ping" })).status).toBe(200);
  });

  it("a hello dribbled over many small TCP writes is still routed (web and auth)", async () => {
    // A relay that forwards the client's bytes to the proxy a few at a time, each write its own.
    const relay: Server = createServer((inbound) => {
      const outbound = netConnect({ port: side.proxy.port, host: "127.0.0.1", noDelay: true });
      let queue = Promise.resolve();
      inbound.on("data", (d: Buffer) => {
        inbound.pause();
        queue = queue.then(async () => {
          for (let i = 0; i < d.length; i += 64) {
            outbound.write(d.subarray(i, i + 64));
            await new Promise((r) => setTimeout(r, 1));
          }
          inbound.resume();
        });
      });
      outbound.pipe(inbound);
      const close = () => {
        inbound.destroy();
        outbound.destroy();
      };
      inbound.on("error", close).on("close", close);
      outbound.on("error", close).on("close", close);
    });
    await new Promise<void>((r) => relay.listen(0, "127.0.0.1", r));
    cleanups.push(() => new Promise((r) => relay.close(r)));
    const port = (relay.address() as { port: number }).port;

    const web = await handshake({ servername: PUBLIC_HOST, ALPNProtocols: ["http/1.1"], port });
    const answer = new Promise<string>((resolve) => {
      const got: Buffer[] = [];
      web.on("data", (d: Buffer) => got.push(d));
      web.on("end", () => resolve(Buffer.concat(got).toString()));
    });
    web.write(`GET /v1/webapi/ping HTTP/1.1\r\nHost: ${PUBLIC_HOST}\r\nConnection: close\r\n\r\n`);
    const text = await answer;
    expect(text).toMatch(/^HTTP\/1\.1 200/);
    expect(text).toContain('"cluster_name":"proxy-test"');

    const info = await callUnary(viaProxy({ port }), "GetClusterInfo", {});
    expect(info.cluster_name).toBe("test");
  });
});

describe("auth unreachable, and close()", () => {
  it("a passthrough to an auth that is down is closed at once: gRPC answers UNAVAILABLE", async () => {
    // A port nothing listens on.
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, "127.0.0.1", r));
    const deadPort = (probe.address() as { port: number }).port;
    await new Promise((r) => probe.close(r));
    const dead = await startProxy(`127.0.0.1:${deadPort}`);
    cleanups.push(() => dead.close());
    const r = await rawExchange((s) => {
      // a real hello for auth (ALPN h2 only) from node:tls, over this raw socket
      const t = tlsConnect({ socket: s, servername: env.serverName, ALPNProtocols: ["h2"] });
      t.on("error", () => {});
    }, dead.proxy.port);
    expect(r.data).toBe("");
    const call = await statusOf(
      callUnary(viaProxy({ port: dead.proxy.port }), "GetClusterInfo", {}, undefined, {
        deadline: Date.now() + 5_000,
      }),
    );
    expect(call.code).toBe(status.UNAVAILABLE);
    // The web API of that proxy still answers on the same port.
    expect((await dead.client.send({ path: "/v1/webapi/ping" })).status).toBe(200);
  });

  it("with several auth replicas, a passthrough skips one that is down: every call reaches the live one", async () => {
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, "127.0.0.1", r));
    const deadPort = (probe.address() as { port: number }).port;
    await new Promise((r) => probe.close(r));
    // The dead replica is listed first and the live one second; connections rotate the first
    // one tried, so both orders are exercised over several new clients.
    const two = await startProxy(`127.0.0.1:${deadPort}, ${env.address}`);
    cleanups.push(() => two.close());
    for (let i = 0; i < 4; i++) {
      const client = viaProxy({ port: two.proxy.port });
      const info = await callUnary(client, "GetClusterInfo", {}, undefined, { deadline: Date.now() + 5_000 });
      expect(info.cluster_name).toBe("test");
      client.close();
    }
  });

  it("close() stops the listener and destroys routed, pending and handler connections", async () => {
    const p = await startProxy(env.address);
    let handed: Socket | undefined;
    p.proxy.router.handle("svc-hold", (socket) => {
      handed = socket; // held open, never answered
    });
    // Resumed: a paused socket never reads the end of its stream, so it would never close.
    const closed = (s: Socket) =>
      new Promise<void>((r) => (s.destroyed ? r() : s.once("close", () => r()).resume()));
    const toAuth = await handshake({ servername: env.serverName, ALPNProtocols: ["h2"], port: p.proxy.port });
    const silent = netConnect(p.proxy.port, "127.0.0.1");
    silent.on("error", () => {});
    await new Promise((r) => silent.once("connect", r));
    const held = tlsConnect({
      host: "127.0.0.1",
      port: p.proxy.port,
      ALPNProtocols: ["svc-hold"],
      rejectUnauthorized: false,
    });
    held.on("error", () => {});
    await new Promise<void>((resolve) => {
      const check = () => (handed ? resolve() : setTimeout(check, 10));
      check();
    });
    const web = await handshake({ servername: PUBLIC_HOST, ALPNProtocols: ["http/1.1"], port: p.proxy.port });

    await p.close();
    await Promise.all([closed(toAuth), closed(silent), closed(held), closed(web)]);
    expect(handed?.destroyed).toBe(true);
    const refused = await new Promise<string>((resolve) => {
      const s = netConnect(p.proxy.port, "127.0.0.1");
      s.on("error", (err: NodeJS.ErrnoException) => resolve(err.code ?? ""));
      s.on("connect", () => resolve("connected"));
    });
    expect(refused).toBe("ECONNREFUSED");
  });
});

describe("svcd start (embedded)", () => {
  it("auth and the proxy are both 'localhost': gRPC (ALPN h2) reaches auth, the web API the proxy", async () => {
    const platform = await startEmbedded(
      { dataDir: join(dir, "embedded"), authListen: "127.0.0.1:0", proxyListen: "127.0.0.1:0" },
      { env: {}, logger: pino({ level: "silent" }) },
    );
    cleanups.push(() => platform.close());
    const port = Number(new URL(platform.proxyUrl).port);
    const publicAddr = platform.data.config.proxy.public_addr;
    const web = new HttpsClient(
      platform.proxyUrl,
      platform.hostCaPem,
      publicAddr.slice(0, publicAddr.lastIndexOf(":")),
    );
    const ping = await web.send({ path: "/v1/webapi/ping" });
    expect(ping.json).toMatchObject({ tls_routing: { auth_server_name: "localhost" } });
    const grpcClient = createAuthClient({
      address: `127.0.0.1:${port}`,
      caPems: [platform.hostCaPem],
      serverName: "localhost",
    });
    cleanups.push(() => grpcClient.close());
    const info = await callUnary(grpcClient, "GetClusterInfo", {});
    expect(info.cluster_name).toBe(platform.data.config.cluster_name);
  });
});
