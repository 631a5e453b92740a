// Tools for test/one-address-attacks.test.ts: what an attacker holds against the proxy's public
// port (raw TCP, TLS with a chosen certificate and ALPN, a WebSocket node stream) and the
// certificates it might have got hold of, all minted from the fixture's real host CA.
import { createServer, connect as netConnect, type Socket } from "node:net";
import { type TLSSocket, connect as tlsConnect } from "node:tls";
import { WebSocket } from "ws";
import {
  generateEcdsaP256,
  issueTlsClientCert,
  privateKeyToPem,
  type X509Issuer,
} from "../core/certs/x509.ts";
import { type Clock, ManualClock, systemClock } from "../core/clock.ts";

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
