import { connect, createServer, type Server, type Socket } from "node:net";
import { connect as tlsConnect } from "node:tls";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TlsRouter } from "./router.ts";

// The per-address bound on connections whose ClientHello has not arrived: a silent client cannot
// pile up sockets, and it cannot take another address's slots.
let router: TlsRouter;
let server: Server;
let port = 0;
const webbed: Socket[] = [];

beforeAll(async () => {
  router = new TlsRouter({
    logger: pino({ level: "silent" }),
    web: (s) => webbed.push(s),
    helloTimeoutMs: 30_000,
    maxPendingPerAddress: 3,
  });
  server = createServer((s) => router.accept(s));
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const a = server.address();
  port = typeof a === "object" && a ? a.port : 0;
});

afterAll(async () => {
  router.close();
  router.destroyWeb();
  await new Promise<void>((r) => server.close(() => r()));
});

/** Opens a silent connection from `localAddress`; resolves once it is connected. */
async function silent(localAddress = "127.0.0.1"): Promise<{ socket: Socket; closed: Promise<number> }> {
  const socket = connect({ port, host: "127.0.0.1", localAddress });
  socket.on("error", () => {});
  const t0 = Date.now();
  const closed = new Promise<number>((r) => socket.once("close", () => r(Date.now() - t0)));
  await new Promise<void>((r) => socket.once("connect", () => r()));
  return { socket, closed };
}

const stillOpen = async (closed: Promise<number>, ms = 300): Promise<boolean> =>
  (await Promise.race([
    closed.then(() => false),
    new Promise<boolean>((r) => setTimeout(() => r(true), ms)),
  ])) === true;

describe("unread hellos per client address", () => {
  it("a connection beyond the bound closes that address's oldest unread one, never the newcomer or another address's", async () => {
    const other = await silent("127.0.0.2");
    const held = [await silent(), await silent(), await silent()];
    const newcomer = await silent();
    // The oldest of this address goes, at once; the newcomer and the rest stay.
    expect(
      await Promise.race([held[0]?.closed, new Promise<number>((r) => setTimeout(() => r(-1), 2_000))]),
    ).not.toBe(-1);
    for (const h of [held[1], held[2], newcomer])
      expect(await stillOpen(h?.closed ?? Promise.resolve(0))).toBe(true);
    expect(await stillOpen(other.closed)).toBe(true);
    // A newcomer that says its hello is routed even while the address is at its bound.
    const hello = connect({ port, host: "127.0.0.1" });
    hello.on("error", () => {});
    await new Promise<void>((r) => hello.once("connect", () => r()));
    const before = webbed.length;
    hello.write(clientHello());
    for (let i = 0; i < 50 && webbed.length === before; i++) await new Promise((r) => setTimeout(r, 20));
    expect(webbed.length).toBe(before + 1);
    for (const s of [held[1], held[2], newcomer, other]) s?.socket.destroy();
    hello.destroy();
  });
});

describe("app hosts", () => {
  it("hands a connection whose SNI is one label under the public host to the app server, others to the web", async () => {
    const toApps: Socket[] = [];
    const toWeb: Socket[] = [];
    const r = new TlsRouter({
      logger: pino({ level: "silent" }),
      web: (s) => toWeb.push(s),
      apps: (s) => toApps.push(s),
      publicHost: "proxy.example.com",
    });
    const srv = createServer((s) => r.accept(s));
    await new Promise<void>((res) => srv.listen(0, "127.0.0.1", res));
    const a = srv.address();
    const p = typeof a === "object" && a ? a.port : 0;
    const hello = async (servername: string) => {
      const c = tlsConnect({ port: p, host: "127.0.0.1", servername, ALPNProtocols: ["http/1.1"] });
      c.on("error", () => {});
      const seen = toApps.length + toWeb.length;
      for (let i = 0; i < 100 && toApps.length + toWeb.length === seen; i++)
        await new Promise((w) => setTimeout(w, 10));
      c.destroy();
    };
    try {
      await hello("grafana.proxy.example.com");
      expect([toApps.length, toWeb.length]).toEqual([1, 0]);
      await hello("proxy.example.com");
      await hello("a.b.proxy.example.com");
      expect([toApps.length, toWeb.length]).toEqual([1, 2]);
    } finally {
      r.close();
      r.destroyWeb();
      for (const s of toApps) s.destroy();
      await new Promise<void>((res) => srv.close(() => res()));
    }
  });
});

/** A minimal TLS 1.2/1.3 ClientHello with no extensions (routes to the web server). */
function clientHello(): Buffer {
  const body = Buffer.concat([
    Buffer.from([0x03, 0x03]),
    Buffer.alloc(32, 7),
    Buffer.from([0x00]), // session id
    Buffer.from([0x00, 0x02, 0x13, 0x01]), // one cipher suite
    Buffer.from([0x01, 0x00]), // null compression
  ]);
  const hs = Buffer.concat([Buffer.from([0x01, 0x00, 0x00, body.length]), body]);
  return Buffer.concat([Buffer.from([0x16, 0x03, 0x01, 0x00, hs.length]), hs]);
}
