// The ClientHello parser against real hellos: node:tls dials a plain TCP server that records the
// bytes, with and without SNI and with several ALPN lists; then split, cut and corrupted copies.
import { createServer, connect as netConnect, type Server, type Socket } from "node:net";
import { connect as tlsConnect } from "node:tls";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ClientHelloError,
  type ClientHelloInfo,
  extractClientHello,
  parseClientHello,
  readClientHello,
} from "./client-hello.ts";

let recorder: Server;
let port = 0;
let captured: (bytes: Buffer) => void = () => {};

beforeAll(async () => {
  // Records until a whole hello is in, then hangs up (the client's handshake fails; expected).
  recorder = createServer((s) => {
    let buf = Buffer.alloc(0);
    s.on("data", (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      if (extractClientHello(buf) !== undefined) {
        captured(buf);
        s.destroy();
      }
    });
    s.on("error", () => {});
  });
  await new Promise<void>((r) => recorder.listen(0, "127.0.0.1", r));
  port = (recorder.address() as { port: number }).port;
});

afterAll(async () => {
  await new Promise((r) => recorder.close(r));
});

/** The raw bytes node:tls sends first for these options. */
function captureHello(o: { servername?: string; ALPNProtocols?: string[] }): Promise<Buffer> {
  return new Promise((resolve) => {
    captured = resolve;
    const c = tlsConnect({ host: "127.0.0.1", port, rejectUnauthorized: false, ...o });
    c.on("error", () => {});
  });
}

function parse(bytes: Buffer): ClientHelloInfo {
  const hello = extractClientHello(bytes);
  if (!hello) throw new Error("incomplete");
  return parseClientHello(hello);
}

function reasonOf(f: () => unknown): string | undefined {
  try {
    f();
  } catch (err) {
    if (err instanceof ClientHelloError) return err.reason;
    throw err;
  }
  return undefined;
}

describe("parseClientHello on hellos node:tls sends", () => {
  it("reads SNI and a single ALPN (a gRPC client: h2 only)", async () => {
    const bytes = await captureHello({ servername: "Auth.Example.COM", ALPNProtocols: ["h2"] });
    expect(parse(bytes)).toEqual({ serverName: "auth.example.com", alpnProtocols: ["h2"] });
  });

  it("reads several ALPN ids in the client's order", async () => {
    const bytes = await captureHello({ servername: "proxy.test", ALPNProtocols: ["h2", "http/1.1"] });
    expect(parse(bytes)).toEqual({ serverName: "proxy.test", alpnProtocols: ["h2", "http/1.1"] });
    const tunnel = await captureHello({
      servername: "proxy.test",
      ALPNProtocols: ["svc-tunnel", "svc-peer"],
    });
    expect(parse(tunnel).alpnProtocols).toEqual(["svc-tunnel", "svc-peer"]);
  });

  it("has no serverName when none is sent (an IP address) and no ALPN when none is offered", async () => {
    const bytes = await captureHello({});
    expect(parse(bytes)).toEqual({ alpnProtocols: [] });
  });

  it("waits for more bytes at every cut of a real hello, and parses it once whole", async () => {
    const bytes = await captureHello({ servername: "proxy.test", ALPNProtocols: ["svc-tunnel"] });
    for (let cut = 0; cut < bytes.length; cut++) {
      expect(extractClientHello(bytes.subarray(0, cut))).toBeUndefined();
    }
    expect(parse(bytes).alpnProtocols).toEqual(["svc-tunnel"]);
  });

  it("reassembles a hello split over several TLS records", async () => {
    const bytes = await captureHello({ servername: "split.test", ALPNProtocols: ["h2"] });
    const body = bytes.subarray(5);
    const records: Buffer[] = [];
    for (let i = 0; i < body.length; i += 100) {
      const part = body.subarray(i, i + 100);
      const header = Buffer.from([0x16, 0x03, 0x01, 0, 0]);
      header.writeUInt16BE(part.length, 3);
      records.push(header, part);
    }
    expect(parse(Buffer.concat(records))).toEqual({ serverName: "split.test", alpnProtocols: ["h2"] });
  });

  it("refuses plain HTTP, other protocols, corrupt lengths and oversized hellos", async () => {
    const bytes = await captureHello({ servername: "proxy.test", ALPNProtocols: ["h2"] });
    expect(reasonOf(() => extractClientHello(Buffer.from("GET / HTTP/1.1\r\n")))).toBe("plain_http");
    expect(reasonOf(() => extractClientHello(Buffer.from("SSH-2.0-OpenSSH_9.6\r\n")))).toBe("plain_http");
    expect(reasonOf(() => extractClientHello(Buffer.from([0x00, 0x01, 0x02])))).toBe("not_tls");
    // an alert record instead of a handshake
    expect(reasonOf(() => extractClientHello(Buffer.from([0x15, 0x03, 0x01, 0x00, 0x02, 0x02, 0x28])))).toBe(
      "not_tls",
    );
    // a handshake whose first message is not a ClientHello (a ServerHello)
    const serverHello = Buffer.from(bytes);
    serverHello[5] = 0x02;
    expect(reasonOf(() => extractClientHello(serverHello))).toBe("malformed");
    // the handshake length claims more than 16 KiB
    const huge = Buffer.from(bytes);
    huge.writeUIntBE(0x010000, 6, 3);
    expect(reasonOf(() => extractClientHello(huge))).toBe("too_large");
    // the extensions block claims more bytes than the message holds
    const hello = extractClientHello(bytes) as Buffer;
    const truncated = Buffer.from(hello.subarray(0, hello.length - 3));
    truncated.writeUIntBE(truncated.length - 4, 1, 3);
    expect(reasonOf(() => parseClientHello(truncated))).toBe("malformed");
  });

  it("refuses an ALPN list with an empty protocol and a repeated SNI extension", () => {
    // A minimal hand-built hello: version, random, no session, one suite, null compression.
    const build = (extensions: Buffer): Buffer => {
      const body = Buffer.concat([
        Buffer.from([0x03, 0x03]),
        Buffer.alloc(32),
        Buffer.from([0x00, 0x00, 0x02, 0x13, 0x01, 0x01, 0x00]),
        Buffer.from([extensions.length >> 8, extensions.length & 0xff]),
        extensions,
      ]);
      const head = Buffer.from([0x01, 0, 0, 0]);
      head.writeUIntBE(body.length, 1, 3);
      return Buffer.concat([head, body]);
    };
    const sni = Buffer.from([0x00, 0x00, 0x00, 0x08, 0x00, 0x06, 0x00, 0x00, 0x03, 0x61, 0x62, 0x63]);
    expect(parseClientHello(build(sni))).toEqual({ serverName: "abc", alpnProtocols: [] });
    expect(reasonOf(() => parseClientHello(build(Buffer.concat([sni, sni]))))).toBe("malformed");
    const emptyAlpn = Buffer.from([0x00, 0x10, 0x00, 0x03, 0x00, 0x01, 0x00]);
    expect(reasonOf(() => parseClientHello(build(emptyAlpn)))).toBe("malformed");
  });
});

describe("readClientHello", () => {
  /** A pair of connected sockets: what the client writes, the server side reads. */
  async function pair(): Promise<{ client: Socket; server: Socket; close(): Promise<void> }> {
    const srv = createServer();
    await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
    const accepted = new Promise<Socket>((r) => srv.once("connection", r));
    const client = netConnect((srv.address() as { port: number }).port, "127.0.0.1");
    client.on("error", () => {});
    const server = await accepted;
    server.on("error", () => {});
    return {
      client,
      server,
      close: async () => {
        client.destroy();
        server.destroy();
        await new Promise((r) => srv.close(r));
      },
    };
  }

  it("puts back every byte it read, byte-for-byte, after a hello sent one byte at a time", async () => {
    const bytes = await captureHello({ servername: "slow.test", ALPNProtocols: ["h2", "http/1.1"] });
    const p = await pair();
    try {
      const reading = readClientHello(p.server, { timeoutMs: 5_000 });
      const extra = Buffer.from("after the hello");
      for (const b of Buffer.concat([bytes, extra])) {
        p.client.write(Buffer.from([b]));
        await new Promise((r) => setImmediate(r));
      }
      expect(await reading).toEqual({ serverName: "slow.test", alpnProtocols: ["h2", "http/1.1"] });
      // Everything read is in front of the stream again, followed by what came after.
      const got: Buffer[] = [];
      p.server.on("data", (d: Buffer) => got.push(d));
      p.server.resume();
      await new Promise((r) => setTimeout(r, 100));
      expect(Buffer.concat(got).equals(Buffer.concat([bytes, extra]))).toBe(true);
    } finally {
      await p.close();
    }
  });

  it("gives up after the timeout when nothing comes, and when the client hangs up", async () => {
    const p = await pair();
    try {
      await expect(readClientHello(p.server, { timeoutMs: 50 })).rejects.toMatchObject({ reason: "timeout" });
    } finally {
      await p.close();
    }
    const q = await pair();
    try {
      const reading = readClientHello(q.server, { timeoutMs: 5_000 });
      q.client.end(Buffer.from([0x16, 0x03, 0x01]));
      await expect(reading).rejects.toMatchObject({ reason: "closed" });
    } finally {
      await q.close();
    }
  });

  it("stops at maxBytes when the records never complete a hello", async () => {
    const p = await pair();
    try {
      const reading = readClientHello(p.server, { timeoutMs: 5_000, maxBytes: 1024 });
      // Valid-looking records of a hello that claims 8 KiB and never ends.
      const first = Buffer.from([0x16, 0x03, 0x01, 0x00, 0x04, 0x01, 0x00, 0x20, 0x00]);
      p.client.write(first);
      const filler = Buffer.concat([Buffer.from([0x16, 0x03, 0x01, 0x01, 0x00]), Buffer.alloc(256)]);
      for (let i = 0; i < 5; i++) p.client.write(filler);
      await expect(reading).rejects.toMatchObject({ reason: "too_large" });
    } finally {
      await p.close();
    }
  });
});
