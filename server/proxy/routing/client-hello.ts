// The TLS ClientHello of a connection, read without terminating TLS: the public port routes on its
// SNI and offered ALPN list before anyone holds a key. Node's TLS stack parses the hello only while
// it handshakes (it would then own the connection), and no maintained package reads one from raw
// bytes, so this small bounded parser (RFC 8446 4.1.2, RFC 6066 3, RFC 7301 3.1) is written here.
import type { Socket } from "node:net";
import { BadParameterError } from "../../../core/errors.ts";

export interface ClientHelloInfo {
  /** SNI host_name (lower case), absent when the client sent none (e.g. it dialled an IP). */
  serverName?: string;
  /** ALPN protocols in the client's order; empty when it offered none. */
  alpnProtocols: string[];
}

/** A hello above this (all records, headers included) is refused; real ones are 0.3-2 KiB. */
export const MAX_CLIENT_HELLO_BYTES = 16 * 1024;
/** A connection that has not sent its whole hello within this is closed. */
export const CLIENT_HELLO_TIMEOUT_MS = 10_000;

const RECORD_HANDSHAKE = 0x16;
const HANDSHAKE_CLIENT_HELLO = 0x01;
const EXT_SERVER_NAME = 0x0000;
const EXT_ALPN = 0x0010;

/** Why a connection was refused before routing; also the `reason` label of the metric. */
export type HelloRefusal =
  | "plain_http"
  | "not_tls"
  | "malformed"
  | "too_large"
  | "timeout"
  | "closed"
  /** the oldest unread hello of an address that opened more than its share */
  | "busy";

export class ClientHelloError extends BadParameterError {
  readonly reason: HelloRefusal;
  constructor(reason: HelloRefusal, message: string) {
    super(message);
    this.reason = reason;
  }
}

/**
 * Looks at the bytes received so far: the ClientHello handshake message once every record that
 * carries it is in (it may span records), or undefined while more bytes are needed.
 * Throws ClientHelloError when the bytes cannot be the start of a TLS handshake.
 */
export function extractClientHello(buf: Buffer): Buffer | undefined {
  const first = buf[0];
  // An upper-case ASCII letter starts an HTTP method: someone typed http:// for this port.
  if (first !== undefined && first >= 0x41 && first <= 0x5a) {
    throw new ClientHelloError("plain_http", "plain HTTP on the TLS port");
  }
  if (first !== undefined && first !== RECORD_HANDSHAKE) {
    throw new ClientHelloError("not_tls", "the first record is not a TLS handshake");
  }
  const fragments: Buffer[] = [];
  let have = 0;
  let offset = 0;
  // The message length, once its 4-byte header is in. The fragments are joined only twice (for
  // that header, and once the message is whole): joining them at every record made a hello sent
  // as thousands of 1-byte records cost seconds of CPU per connection (quadratic per read).
  let total: number | undefined;
  while (offset + 5 <= buf.length) {
    if (buf[offset] !== RECORD_HANDSHAKE) {
      throw new ClientHelloError("malformed", "the ClientHello is interrupted by another record type");
    }
    // Record versions are 0x0301..0x0303 in every hello (TLS 1.3 keeps 0x0301/0x0303 on the wire).
    if (buf[offset + 1] !== 0x03) throw new ClientHelloError("not_tls", "not a TLS record version");
    const length = buf.readUInt16BE(offset + 3);
    if (length === 0) throw new ClientHelloError("malformed", "an empty handshake record");
    if (offset + 5 + length > buf.length) break;
    fragments.push(buf.subarray(offset + 5, offset + 5 + length));
    have += length;
    offset += 5 + length;
    if (total === undefined) {
      if (have < 4) continue;
      const head = fragments.length === 1 ? (fragments[0] as Buffer) : Buffer.concat(fragments, have);
      if (head[0] !== HANDSHAKE_CLIENT_HELLO) {
        throw new ClientHelloError("malformed", "the first handshake message is not a ClientHello");
      }
      total = 4 + head.readUIntBE(1, 3);
      if (total > MAX_CLIENT_HELLO_BYTES)
        throw new ClientHelloError("too_large", "the ClientHello is too large");
    }
    if (have >= total) {
      const handshake = fragments.length === 1 ? (fragments[0] as Buffer) : Buffer.concat(fragments, have);
      return handshake.subarray(0, total);
    }
  }
  return undefined;
}

/** A reader over one handshake message that throws `malformed` instead of reading past its end. */
class Reader {
  #buf: Buffer;
  #pos: number;
  readonly end: number;
  constructor(buf: Buffer, start = 0, end = buf.length) {
    this.#buf = buf;
    this.#pos = start;
    this.end = end;
  }
  get pos(): number {
    return this.#pos;
  }
  #need(n: number): void {
    if (this.#pos + n > this.end) throw new ClientHelloError("malformed", "the ClientHello is truncated");
  }
  u8(): number {
    this.#need(1);
    return this.#buf.readUInt8(this.#pos++);
  }
  u16(): number {
    this.#need(2);
    const v = this.#buf.readUInt16BE(this.#pos);
    this.#pos += 2;
    return v;
  }
  skip(n: number): void {
    this.#need(n);
    this.#pos += n;
  }
  /** A sub-reader over the next n bytes (a length-prefixed vector), skipping them here. */
  sub(n: number): Reader {
    this.#need(n);
    const r = new Reader(this.#buf, this.#pos, this.#pos + n);
    this.#pos += n;
    return r;
  }
  bytes(n: number): Buffer {
    this.#need(n);
    const b = this.#buf.subarray(this.#pos, this.#pos + n);
    this.#pos += n;
    return b;
  }
  done(): boolean {
    return this.#pos >= this.end;
  }
}

/** SNI and ALPN of a ClientHello handshake message (as extractClientHello returns it). */
export function parseClientHello(handshake: Buffer): ClientHelloInfo {
  const r = new Reader(handshake);
  if (r.u8() !== HANDSHAKE_CLIENT_HELLO) throw new ClientHelloError("malformed", "not a ClientHello");
  r.skip(3); // length: extractClientHello already cut the message to it
  r.skip(2 + 32); // legacy_version, random
  r.skip(r.u8()); // legacy_session_id
  const suites = r.u16();
  if (suites === 0 || suites % 2 !== 0) throw new ClientHelloError("malformed", "bad cipher_suites");
  r.skip(suites);
  r.skip(r.u8()); // legacy_compression_methods
  const info: ClientHelloInfo = { alpnProtocols: [] };
  if (r.done()) return info; // a hello without extensions (old clients)
  const extensions = r.sub(r.u16());
  if (!r.done()) throw new ClientHelloError("malformed", "bytes after the extensions");
  const seen = new Set<number>();
  while (!extensions.done()) {
    const type = extensions.u16();
    const data = extensions.sub(extensions.u16());
    // RFC 8446 4.2: at most one extension of a type; a second SNI could otherwise disagree.
    if (seen.has(type)) throw new ClientHelloError("malformed", "a repeated extension");
    seen.add(type);
    if (type === EXT_SERVER_NAME) {
      const name = parseServerName(data);
      if (name !== undefined) info.serverName = name;
    } else if (type === EXT_ALPN) {
      info.alpnProtocols = parseAlpn(data);
    }
  }
  return info;
}

function parseServerName(data: Reader): string | undefined {
  const list = data.sub(data.u16());
  if (!data.done()) throw new ClientHelloError("malformed", "bad server_name extension");
  let name: string | undefined;
  while (!list.done()) {
    const type = list.u8();
    const value = list.bytes(list.u16());
    if (type !== 0) continue; // only host_name (0) is defined
    if (name !== undefined) throw new ClientHelloError("malformed", "two host names in server_name");
    // A DNS name: printable ASCII without spaces, at most 255 bytes.
    if (value.length === 0 || value.length > 255 || !value.every((c) => c > 0x20 && c < 0x7f)) {
      throw new ClientHelloError("malformed", "bad host name in server_name");
    }
    name = value.toString("latin1").toLowerCase();
  }
  return name;
}

function parseAlpn(data: Reader): string[] {
  const list = data.sub(data.u16());
  if (!data.done()) throw new ClientHelloError("malformed", "bad ALPN extension");
  const protocols: string[] = [];
  while (!list.done()) {
    const n = list.u8();
    if (n === 0) throw new ClientHelloError("malformed", "an empty ALPN protocol");
    protocols.push(list.bytes(n).toString("latin1"));
  }
  if (protocols.length === 0) throw new ClientHelloError("malformed", "an empty ALPN list");
  return protocols;
}

/**
 * Reads a connection's ClientHello without consuming it: resolves with the parsed hello once it is
 * complete, having put every byte read back (`socket.unshift`) and paused the socket, so the next
 * owner sees an untouched stream. Rejects with ClientHelloError (the socket is left to the caller
 * to destroy) on non-TLS input, a malformed or oversized hello, the timeout, or an early close.
 */
export function readClientHello(
  socket: Socket,
  o: { timeoutMs?: number; maxBytes?: number } = {},
): Promise<ClientHelloInfo> {
  const timeoutMs = o.timeoutMs ?? CLIENT_HELLO_TIMEOUT_MS;
  const maxBytes = o.maxBytes ?? MAX_CLIENT_HELLO_BYTES;
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    const stop = (): void => {
      clearTimeout(timer);
      socket.off("data", onData);
      socket.off("end", fail);
      socket.off("close", fail);
      socket.off("error", fail);
      socket.pause();
    };
    const failWith = (err: ClientHelloError): void => {
      stop();
      reject(err);
    };
    const onData = (chunk: Buffer): void => {
      chunks.push(chunk);
      received += chunk.length;
      let info: ClientHelloInfo | undefined;
      try {
        const hello = extractClientHello(chunks.length === 1 ? chunk : Buffer.concat(chunks, received));
        if (hello !== undefined) info = parseClientHello(hello);
      } catch (err) {
        failWith(
          err instanceof ClientHelloError ? err : new ClientHelloError("malformed", "unreadable hello"),
        );
        return;
      }
      if (info !== undefined) {
        stop();
        // Back in front of the stream, in one piece, for whoever takes the socket next.
        socket.unshift(Buffer.concat(chunks, received));
        resolve(info);
      } else if (received >= maxBytes) {
        failWith(new ClientHelloError("too_large", "the ClientHello is too large"));
      }
    };
    function fail(): void {
      failWith(new ClientHelloError("closed", "the client closed before its hello"));
    }
    const timer = setTimeout(
      () => failWith(new ClientHelloError("timeout", "no ClientHello in time")),
      timeoutMs,
    );
    timer.unref();
    socket.on("data", onData);
    socket.once("end", fail);
    socket.once("close", fail);
    socket.once("error", fail);
  });
}
