// Bad request messages generated from the proto descriptors of a gRPC service, as raw bytes: for
// each field of a request type, boundary values (empty, long and huge strings, invalid UTF-8,
// huge repeated fields, negative and 64-bit extreme integers, out-of-range enum numbers, empty and
// deeply nested messages), the same field number with every wrong wire type, and for the whole
// message truncated encodings, deeply nested unknown groups and random bytes. Deterministic for a
// seed, so a failing case can be replayed.
import type { PackageDefinition } from "@grpc/proto-loader";

interface FieldDescriptor {
  name: string;
  number: number;
  label: string;
  type: string;
  typeName: string;
}
interface MessageDescriptor {
  name: string;
  field: FieldDescriptor[];
  nestedType: MessageDescriptor[];
  options: { mapEntry?: boolean } | null;
}
interface EnumDescriptor {
  value: { number: number }[];
}

export interface FuzzCase {
  /** what the bytes are, for the failure message */
  name: string;
  bytes: Buffer;
}

// Wire types (protobuf encoding).
const VARINT = 0;
const I64 = 1;
const LEN = 2;
const SGROUP = 3;
const EGROUP = 4;
const I32 = 5;

/** mulberry32: a small seeded PRNG. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function varint(value: bigint): Buffer {
  // Negative numbers are their 64-bit two's complement, as protobuf encodes int32/int64.
  let v = value < 0n ? (1n << 64n) + value : value;
  const out: number[] = [];
  do {
    let byte = Number(v & 0x7fn);
    v >>= 7n;
    if (v > 0n) byte |= 0x80;
    out.push(byte);
  } while (v > 0n);
  return Buffer.from(out);
}

const tag = (field: number, wire: number): Buffer => varint(BigInt((field << 3) | wire));
const len = (field: number, payload: Buffer): Buffer =>
  Buffer.concat([tag(field, LEN), varint(BigInt(payload.length)), payload]);

const VARINT_TYPES = new Set([
  "TYPE_INT32",
  "TYPE_INT64",
  "TYPE_UINT32",
  "TYPE_UINT64",
  "TYPE_SINT32",
  "TYPE_SINT64",
  "TYPE_BOOL",
  "TYPE_ENUM",
]);
const I64_TYPES = new Set(["TYPE_FIXED64", "TYPE_SFIXED64", "TYPE_DOUBLE"]);
const I32_TYPES = new Set(["TYPE_FIXED32", "TYPE_SFIXED32", "TYPE_FLOAT"]);

function wireOf(f: FieldDescriptor): number {
  if (VARINT_TYPES.has(f.type)) return VARINT;
  if (I64_TYPES.has(f.type)) return I64;
  if (I32_TYPES.has(f.type)) return I32;
  return LEN;
}

export class FuzzCaseGenerator {
  readonly #pkg: PackageDefinition;
  readonly #pkgName: string;
  readonly #rand: () => number;

  constructor(pkg: PackageDefinition, packageName: string, seed: number) {
    this.#pkg = pkg;
    this.#pkgName = packageName;
    this.#rand = prng(seed);
  }

  #bytes(n: number): Buffer {
    const b = Buffer.alloc(n);
    for (let i = 0; i < n; i++) b[i] = Math.floor(this.#rand() * 256);
    return b;
  }

  #message(typeName: string, scope?: MessageDescriptor): MessageDescriptor | undefined {
    const nested = scope?.nestedType.find((t) => t.name === typeName);
    if (nested) return nested;
    const name = typeName.replace(/^\./, "");
    const def = (this.#pkg[name] ?? this.#pkg[`${this.#pkgName}.${name}`]) as
      | { type?: MessageDescriptor | EnumDescriptor }
      | undefined;
    return def?.type && "field" in def.type ? def.type : undefined;
  }

  #enumNumbers(typeName: string): number[] {
    const name = typeName.replace(/^\./, "");
    const def = (this.#pkg[name] ?? this.#pkg[`${this.#pkgName}.${name}`]) as { type?: unknown } | undefined;
    const t = def?.type as EnumDescriptor | undefined;
    return t && "value" in t ? t.value.map((v) => v.number) : [];
  }

  /** One well-formed value of `f` (used to build nested, repeated and truncated cases). */
  #plain(f: FieldDescriptor, scope: MessageDescriptor, depth = 0): Buffer {
    switch (wireOf(f)) {
      case VARINT:
        return Buffer.concat([tag(f.number, VARINT), varint(1n)]);
      case I64:
        return Buffer.concat([tag(f.number, I64), Buffer.alloc(8, 1)]);
      case I32:
        return Buffer.concat([tag(f.number, I32), Buffer.alloc(4, 1)]);
    }
    if (f.type === "TYPE_MESSAGE") {
      const t = this.#message(f.typeName, scope);
      const inner =
        t && depth < 4 ? Buffer.concat(t.field.map((g) => this.#plain(g, t, depth + 1))) : Buffer.alloc(0);
      return len(f.number, inner);
    }
    return len(f.number, Buffer.from("x"));
  }

  /** Boundary values of one field, correctly typed on the wire. */
  #boundaries(f: FieldDescriptor, scope: MessageDescriptor): FuzzCase[] {
    const out: FuzzCase[] = [];
    const add = (what: string, bytes: Buffer) => out.push({ name: `${f.name}: ${what}`, bytes });
    const wire = wireOf(f);
    if (wire === VARINT) {
      const values: [string, bigint][] = [
        ["0", 0n],
        ["-1", -1n],
        ["int32 max", 2147483647n],
        ["int32 min", -2147483648n],
        ["2^32", 4294967296n],
        ["2^53 + 1", 9007199254740993n],
        ["int64 max", 9223372036854775807n],
        ["int64 min", -9223372036854775808n],
        ["uint64 max", 18446744073709551615n],
      ];
      if (f.type === "TYPE_ENUM") {
        const known = this.#enumNumbers(f.typeName);
        values.push(["unknown enum number", BigInt(Math.max(0, ...known) + 1000)]);
      }
      for (const [what, v] of values) add(what, Buffer.concat([tag(f.number, VARINT), varint(v)]));
      // 11 continuation bytes: longer than any varint may be.
      add(
        "overlong varint",
        Buffer.concat([tag(f.number, VARINT), Buffer.alloc(10, 0xff), Buffer.from([1])]),
      );
    } else if (wire === I64) {
      add("all ones", Buffer.concat([tag(f.number, I64), Buffer.alloc(8, 0xff)]));
    } else if (wire === I32) {
      add("all ones", Buffer.concat([tag(f.number, I32), Buffer.alloc(4, 0xff)]));
    } else if (f.type === "TYPE_MESSAGE") {
      const t = this.#message(f.typeName, scope);
      add("empty message", len(f.number, Buffer.alloc(0)));
      add("random bytes inside", len(f.number, this.#bytes(64)));
      if (t) add("well-formed inner", this.#plain(f, scope));
      // The field nested in itself 2000 times (unknown to the inner type when it has no such
      // field, so the decoder skips it; recursive types recurse).
      let nested: Buffer = Buffer.alloc(0);
      for (let i = 0; i < 2000; i++) nested = len(f.number, nested);
      add("nested 2000 deep", nested);
    } else {
      add("empty", len(f.number, Buffer.alloc(0)));
      add("64 KiB", len(f.number, Buffer.alloc(65536, "a")));
      add("1 MiB", len(f.number, Buffer.alloc(1024 * 1024, "b")));
      add("invalid UTF-8", len(f.number, Buffer.from([0xff, 0xfe, 0xc3, 0x28, 0xa0, 0xa1])));
      add("NUL and control characters", len(f.number, Buffer.from("a\u0000b\r\n\u001b[0m", "utf8")));
      add("random bytes", len(f.number, this.#bytes(256)));
    }
    if (f.label === "LABEL_REPEATED" || wire === LEN) {
      // Repeated fields: many elements (a non-repeated field repeated is "last one wins").
      const one = this.#plain(f, scope);
      add("20000 times", Buffer.concat(Array.from({ length: 20_000 }, () => one)));
    }
    // The length prefix claims more bytes than follow.
    if (wire === LEN)
      add("length past the end", Buffer.concat([tag(f.number, LEN), varint(1000n), Buffer.from("short")]));
    return out;
  }

  /** The field number with every wire type but its own (and the undefined ones, 6 and 7). */
  #wrongWireTypes(f: FieldDescriptor): FuzzCase[] {
    const own = wireOf(f);
    const payload: Record<number, Buffer> = {
      [VARINT]: varint(5n),
      [I64]: Buffer.alloc(8, 7),
      [LEN]: Buffer.concat([varint(3n), Buffer.from("abc")]),
      [SGROUP]: tag(f.number, EGROUP),
      [EGROUP]: Buffer.alloc(0),
      [I32]: Buffer.alloc(4, 7),
      6: Buffer.alloc(0),
      7: Buffer.alloc(0),
    };
    return [VARINT, I64, LEN, SGROUP, EGROUP, I32, 6, 7]
      .filter((w) => w !== own)
      .map((w) => ({
        name: `${f.name}: wire type ${w}`,
        bytes: Buffer.concat([tag(f.number, w), payload[w] as Buffer]),
      }));
  }

  /** Every case for one request type, in a fixed order. */
  casesFor(type: MessageDescriptor, randomCount: number): FuzzCase[] {
    const out: FuzzCase[] = [{ name: "empty message", bytes: Buffer.alloc(0) }];
    for (const f of type.field) {
      out.push(...this.#boundaries(f, type), ...this.#wrongWireTypes(f));
    }
    const whole = Buffer.concat(type.field.map((f) => this.#plain(f, type)));
    for (let cut = 1; cut < whole.length; cut += Math.max(1, Math.floor(whole.length / 4)))
      out.push({ name: `well-formed message cut at ${cut}/${whole.length}`, bytes: whole.subarray(0, cut) });
    // Unknown field 99 as start-group tags nested 100000 deep: decoders that skip groups recurse.
    out.push({
      name: "unknown groups nested 100000 deep",
      bytes: Buffer.concat(Array.from({ length: 100_000 }, () => tag(99, SGROUP))),
    });
    out.push({ name: "unknown field 536870911 (max number)", bytes: len(536870911, Buffer.from("x")) });
    out.push({ name: "field number 0", bytes: Buffer.concat([tag(0, VARINT), varint(1n)]) });
    for (let i = 0; i < randomCount; i++) {
      out.push({ name: `random bytes #${i}`, bytes: this.#bytes(1 + Math.floor(this.#rand() * 512)) });
    }
    return out;
  }
}

export type { MessageDescriptor };
