// The SSH wire encoding (RFC 4251 section 5): uint32, uint64, string, mpint. The reader is strict:
// every length is checked against what is left, so a truncated or padded blob is refused.
import { BadParameterError } from "../errors.ts";

export class SshReader {
  readonly #buf: Buffer;
  #pos = 0;
  readonly #what: string;
  constructor(buf: Uint8Array, what = "ssh data") {
    // A Buffer is read as it is (a new view per reader was an allocation per key parsed).
    this.#buf = Buffer.isBuffer(buf) ? buf : Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength);
    this.#what = what;
  }
  #need(n: number): void {
    if (n < 0 || this.#pos + n > this.#buf.length) throw new BadParameterError(`${this.#what} is truncated`);
  }
  uint32(): number {
    this.#need(4);
    const v = this.#buf.readUInt32BE(this.#pos);
    this.#pos += 4;
    return v;
  }
  uint64(): bigint {
    this.#need(8);
    const v = this.#buf.readBigUInt64BE(this.#pos);
    this.#pos += 8;
    return v;
  }
  bytes(): Buffer {
    const n = this.uint32();
    this.#need(n);
    const v = this.#buf.subarray(this.#pos, this.#pos + n);
    this.#pos += n;
    return v;
  }
  string(): string {
    const b = this.bytes();
    // Short ASCII (type and curve names, principals) is valid UTF-8 as it is: no round trip.
    if (b.length <= 64) {
      let ascii = true;
      for (let i = 0; i < b.length; i++) if ((b[i] as number) > 0x7f) ascii = false;
      if (ascii) return b.toString("latin1");
    }
    const s = b.toString("utf8");
    if (!Buffer.from(s, "utf8").equals(b))
      throw new BadParameterError(`${this.#what} holds a string that is not UTF-8`);
    return s;
  }
  /** A non-negative mpint as unsigned big-endian bytes without leading zeros. */
  mpintUnsigned(): Buffer {
    const b = this.bytes();
    if (b.length > 0 && (b[0] as number) & 0x80)
      throw new BadParameterError(`${this.#what} holds a negative mpint`);
    let i = 0;
    while (i < b.length && b[i] === 0) i++;
    return b.subarray(i);
  }
  /** Bytes read so far (the signed part of a certificate ends here). */
  get offset(): number {
    return this.#pos;
  }
  get remaining(): number {
    return this.#buf.length - this.#pos;
  }
  end(): void {
    if (this.#pos !== this.#buf.length) throw new BadParameterError(`${this.#what} has trailing bytes`);
  }
}

/** Appends SSH wire values; collects chunks and concatenates once. */
export class SshWriter {
  readonly #parts: Buffer[] = [];
  #len = 0;
  #push(b: Buffer): this {
    this.#parts.push(b);
    this.#len += b.length;
    return this;
  }
  uint32(v: number): this {
    const b = Buffer.allocUnsafe(4);
    b.writeUInt32BE(v >>> 0);
    return this.#push(b);
  }
  uint64(v: bigint): this {
    const b = Buffer.allocUnsafe(8);
    b.writeBigUInt64BE(v);
    return this.#push(b);
  }
  bytes(v: Uint8Array): this {
    this.uint32(v.length);
    return this.#push(Buffer.from(v.buffer, v.byteOffset, v.byteLength));
  }
  string(v: string): this {
    return this.bytes(Buffer.from(v, "utf8"));
  }
  raw(v: Uint8Array): this {
    return this.#push(Buffer.from(v.buffer, v.byteOffset, v.byteLength));
  }
  /** Unsigned big-endian magnitude -> mpint (leading zero added when the top bit is set). */
  mpint(v: Uint8Array): this {
    let i = 0;
    while (i < v.length && v[i] === 0) i++;
    const mag = Buffer.from(v.subarray(i));
    if (mag.length > 0 && (mag[0] as number) & 0x80) return this.bytes(Buffer.concat([Buffer.alloc(1), mag]));
    return this.bytes(mag);
  }
  get length(): number {
    return this.#len;
  }
  toBuffer(): Buffer {
    return Buffer.concat(this.#parts, this.#len);
  }
}

/** Packs a list of strings into one SSH string body (used for principals). */
export function packStrings(items: readonly string[]): Buffer {
  const w = new SshWriter();
  for (const s of items) w.string(s);
  return w.toBuffer();
}

export function unpackStrings(buf: Uint8Array, what: string): string[] {
  const r = new SshReader(buf, what);
  const out: string[] = [];
  while (r.remaining > 0) out.push(r.string());
  return out;
}
