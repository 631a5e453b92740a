// OpenSSH public keys: parse an authorized_keys-style line into a node:crypto KeyObject and its
// wire blob, encode the other way, fingerprint as ssh-keygen does, and write/read private keys
// in the openssh-key-v1 format (OpenSSH 9.2 does not load Ed25519 keys from PKCS8 PEM).
import {
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  hash,
  type KeyObject,
  randomBytes,
} from "node:crypto";
import { BadParameterError } from "../errors.ts";
import { SshReader, SshWriter } from "./ssh-wire.ts";

export type SshKeyType = "ssh-ed25519" | "ecdsa-sha2-nistp256" | "ecdsa-sha2-nistp384" | "ssh-rsa";
export type SshKeyKind = "ed25519" | "ecdsa-p256" | "ecdsa-p384" | "rsa";

export const MIN_RSA_BITS = 2048;
const MAX_RSA_BITS = 16384;

export interface SshPublicKey {
  type: SshKeyType;
  key: KeyObject;
  /** the public key in SSH wire encoding (what the base64 field of the line holds) */
  blob: Buffer;
  comment: string;
}

const CURVES = {
  "ecdsa-sha2-nistp256": { ssh: "nistp256", jwk: "P-256", size: 32 },
  "ecdsa-sha2-nistp384": { ssh: "nistp384", jwk: "P-384", size: 48 },
} as const;

const b64u = (b: Uint8Array): string => Buffer.from(b).toString("base64url");
const fromB64u = (s: unknown, what: string): Buffer => {
  if (typeof s !== "string") throw new BadParameterError(`key is missing ${what}`);
  return Buffer.from(s, "base64url");
};

function importPublic(jwk: Record<string, string>, what: string): KeyObject {
  try {
    return createPublicKey({ key: jwk, format: "jwk" });
  } catch (err) {
    throw new BadParameterError(`${what}: not a valid public key`, { cause: err });
  }
}

// Keys decoded from blobs, by blob: every certificate a node checks names the same few CA keys,
// and importing one into OpenSSL costs ~50 µs. KeyObjects are immutable, so sharing them is safe.
// Bounded; oldest dropped first.
const BLOB_KEYS_MAX = 256;
const blobKeys = new Map<string, { type: SshKeyType; key: KeyObject }>();

/** Decodes an SSH public key blob (strict: no trailing bytes, known types only, RSA >= 2048). */
export function parseSshPublicKeyBlob(blob: Uint8Array): { type: SshKeyType; key: KeyObject } {
  const id = Buffer.from(blob.buffer, blob.byteOffset, blob.byteLength).toString("base64");
  const known = blobKeys.get(id);
  if (known) return { type: known.type, key: known.key };
  const r = new SshReader(blob, "ssh public key");
  const type = r.string();
  const key = readKeyBody(r, type);
  r.end();
  const parsed = { type: type as SshKeyType, key };
  blobKeys.set(id, parsed);
  if (blobKeys.size > BLOB_KEYS_MAX) {
    const oldest = blobKeys.keys().next().value;
    if (oldest !== undefined) blobKeys.delete(oldest);
  }
  return { type: parsed.type, key: parsed.key };
}

/** Reads the key fields that follow the type name (shared by public keys and certificates). */
export function readKeyBody(r: SshReader, type: string): KeyObject {
  return importPublic(readKeyJwk(r, type), type);
}

/** Reads and checks the key fields after the type name, as a public JWK (no KeyObject yet). */
function readKeyJwk(r: SshReader, type: string): Record<string, string> {
  switch (type) {
    case "ssh-ed25519":
      return ed25519Jwk(readEd25519(r));
    case "ecdsa-sha2-nistp256":
    case "ecdsa-sha2-nistp384": {
      const c = CURVES[type];
      const curve = r.string();
      if (curve !== c.ssh) throw new BadParameterError(`${type} key names curve ${JSON.stringify(curve)}`);
      const q = r.bytes();
      if (q.length !== 1 + 2 * c.size || q[0] !== 4)
        throw new BadParameterError(`${type} point must be uncompressed`);
      return { kty: "EC", crv: c.jwk, x: b64u(q.subarray(1, 1 + c.size)), y: b64u(q.subarray(1 + c.size)) };
    }
    case "ssh-rsa": {
      const e = r.mpintUnsigned();
      const n = r.mpintUnsigned();
      const bits = n.length === 0 ? 0 : (n.length - 1) * 8 + (32 - Math.clz32(n[0] as number));
      if (bits < MIN_RSA_BITS)
        throw new BadParameterError(`ssh-rsa key has ${bits} bits; at least ${MIN_RSA_BITS} required`);
      if (bits > MAX_RSA_BITS)
        throw new BadParameterError(`ssh-rsa key has ${bits} bits; at most ${MAX_RSA_BITS} allowed`);
      if (
        e.length === 0 ||
        e.length > 4 ||
        ((e[e.length - 1] as number) & 1) === 0 ||
        (e.length === 1 && e[0] === 1)
      ) {
        throw new BadParameterError("ssh-rsa key has an invalid public exponent");
      }
      return { kty: "RSA", n: b64u(n), e: b64u(e) };
    }
    case "ssh-dss":
      throw new BadParameterError("ssh-dss (DSA) keys are not accepted");
    case "ecdsa-sha2-nistp521":
      throw new BadParameterError(
        "ecdsa-sha2-nistp521 keys are not supported; use ed25519, nistp256 or nistp384",
      );
    default:
      throw new BadParameterError(`unsupported ssh key type ${JSON.stringify(type.slice(0, 64))}`);
  }
}

function readEd25519(r: SshReader): Buffer {
  const pk = r.bytes();
  if (pk.length !== 32) throw new BadParameterError("ssh-ed25519 key must be 32 bytes");
  return pk;
}

const ed25519Jwk = (pk: Uint8Array): Record<string, string> => ({ kty: "OKP", crv: "Ed25519", x: b64u(pk) });

/** Value + 1 of each base64 character (0: not one), indexed by char code below 128. */
const B64 = new Uint8Array(128);
for (let i = 0; i < 64; i++)
  B64["ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".charCodeAt(i)] = i + 1;

/** JavaScript's \s, the separator the line format has always accepted (Unicode spaces included). */
function isSpace(c: number): boolean {
  return c === 0x20 || (c >= 0x09 && c <= 0x0d) || (c >= 0x80 && /\s/.test(String.fromCharCode(c)));
}

const LINE_SHAPE = "ssh public key must look like '<type> <base64> [comment]'";
const BAD_BASE64 = "ssh public key base64 is malformed";

/**
 * Where the parts of "type base64 [comment]" are in a trimmed line: the shape
 * /^(\S+)\s+([A-Za-z0-9+/]+={0,2})(?:\s+(.*))?$/ checked by a scan, which costs a fraction of the
 * regular expression on the IssueUserCerts path. Throws what that expression's mismatch threw.
 */
function splitKeyLine(t: string): { word: string; b64: string; comment: string } {
  const len = t.length;
  let i = 0;
  while (i < len && !isSpace(t.charCodeAt(i))) i++;
  const word = t.slice(0, i);
  const gap = i;
  while (i < len && isSpace(t.charCodeAt(i))) i++;
  if (i === gap || i === len) throw new BadParameterError(LINE_SHAPE);
  const start = i;
  let c = t.charCodeAt(i);
  while (i < len && c < 128 && B64[c] !== 0) c = t.charCodeAt(++i);
  if (i === start) throw new BadParameterError(LINE_SHAPE);
  let pad = 0;
  while (pad < 2 && i < len && t.charCodeAt(i) === 0x3d) {
    i++;
    pad++;
  }
  const end = i;
  let comment = "";
  if (i < len) {
    if (!isSpace(t.charCodeAt(i))) throw new BadParameterError(LINE_SHAPE);
    while (i < len && isSpace(t.charCodeAt(i))) i++;
    comment = t.slice(i);
    // "." in that expression stops at line terminators; \r and \n were refused before.
    if (comment.includes("\u2028") || comment.includes("\u2029")) throw new BadParameterError(LINE_SHAPE);
  }
  const b64 = t.slice(start, end);
  if (b64.length % 4 !== 0) throw new BadParameterError(BAD_BASE64);
  // Canonical base64 only (what re-encoding the decoded bytes gives back): the bits the padding
  // leaves unused in the last character must be zero.
  if (pad > 0) {
    const last = (B64[b64.charCodeAt(b64.length - pad - 1)] as number) - 1;
    if ((last & (pad === 2 ? 0x0f : 0x03)) !== 0) throw new BadParameterError(BAD_BASE64);
  }
  return { word, b64, comment };
}

/** Parses "type base64 [comment]". The type word must match the type inside the blob. */
export function parseSshPublicKey(line: string): SshPublicKey {
  if (typeof line !== "string") throw new BadParameterError("ssh public key must be a string");
  const trimmed = line.trim();
  if (trimmed.length === 0 || trimmed.length > 16384 || trimmed.includes("\n") || trimmed.includes("\r")) {
    throw new BadParameterError("ssh public key must be one non-empty line");
  }
  const { word, b64, comment } = splitKeyLine(trimmed);
  const blob = Buffer.from(b64, "base64");
  const r = new SshReader(blob, "ssh public key");
  const type = r.string() as SshKeyType;
  if (type === "ssh-ed25519") {
    // Any 32 bytes are an Ed25519 key to OpenSSH, so there is nothing an import would check: the
    // KeyObject (and the JWK it is imported from, ~100 us in OpenSSL 3) waits until someone needs
    // it, which the certificate encoder does not.
    const pk = readEd25519(r);
    r.end();
    checkWord(word, type);
    return new ParsedPublicKey(type, blob, comment, undefined, pk);
  }
  const jwk = readKeyJwk(r, type);
  r.end();
  checkWord(word, type);
  // Points on a curve and RSA moduli are checked by the import, so those import now.
  return new ParsedPublicKey(type, blob, comment, importPublic(jwk, type), undefined);
}

function checkWord(word: string, type: SshKeyType): void {
  if (type !== word)
    throw new BadParameterError(
      `ssh public key line says ${JSON.stringify(word.slice(0, 64))} but holds ${type}`,
    );
}

/** A parsed public key line; an Ed25519 key's KeyObject is imported on first use. */
class ParsedPublicKey implements SshPublicKey {
  readonly type: SshKeyType;
  readonly blob: Buffer;
  readonly comment: string;
  #key: KeyObject | undefined;
  readonly #ed25519: Buffer | undefined;
  constructor(type: SshKeyType, blob: Buffer, comment: string, key: KeyObject | undefined, ed25519?: Buffer) {
    this.type = type;
    this.blob = blob;
    this.comment = comment;
    this.#key = key;
    this.#ed25519 = ed25519;
  }
  get key(): KeyObject {
    this.#key ??= importPublic(ed25519Jwk(this.#ed25519 as Buffer), this.type);
    return this.#key;
  }
}

/** The SSH type name for a node:crypto key (public or private); refuses what we do not issue for. */
export function sshKeyType(key: KeyObject): SshKeyType {
  const t = key.asymmetricKeyType;
  if (t === "ed25519") return "ssh-ed25519";
  if (t === "ec") {
    const curve = key.asymmetricKeyDetails?.namedCurve;
    if (curve === "prime256v1") return "ecdsa-sha2-nistp256";
    if (curve === "secp384r1") return "ecdsa-sha2-nistp384";
    throw new BadParameterError(`unsupported EC curve ${String(curve)}`);
  }
  if (t === "rsa") {
    const bits = key.asymmetricKeyDetails?.modulusLength ?? 0;
    if (bits < MIN_RSA_BITS)
      throw new BadParameterError(`RSA key has ${bits} bits; at least ${MIN_RSA_BITS} required`);
    return "ssh-rsa";
  }
  throw new BadParameterError(`unsupported key type ${String(t)}`);
}

/** Writes the key fields that follow the type name. */
export function writeKeyBody(w: SshWriter, key: KeyObject, type: SshKeyType = sshKeyType(key)): void {
  const jwk = (key.type === "private" ? createPublicKey(key) : key).export({ format: "jwk" });
  if (type === "ssh-ed25519") {
    w.bytes(fromB64u(jwk.x, "x"));
  } else if (type === "ssh-rsa") {
    w.mpint(fromB64u(jwk.e, "e")).mpint(fromB64u(jwk.n, "n"));
  } else {
    w.string(CURVES[type].ssh).bytes(
      Buffer.concat([Buffer.of(4), fromB64u(jwk.x, "x"), fromB64u(jwk.y, "y")]),
    );
  }
}

export function sshPublicKeyBlob(key: KeyObject): Buffer {
  const type = sshKeyType(key);
  const w = new SshWriter().string(type);
  writeKeyBody(w, key, type);
  return w.toBuffer();
}

/** KeyObject (or wire blob) -> "type base64 [comment]". */
export function formatSshPublicKey(key: KeyObject | Uint8Array, comment = ""): string {
  const blob = key instanceof Uint8Array ? Buffer.from(key) : sshPublicKeyBlob(key);
  const type = new SshReader(blob).string();
  return `${type} ${blob.toString("base64")}${comment ? ` ${comment}` : ""}`;
}

/** "SHA256:<unpadded base64>", as `ssh-keygen -l` prints it. */
export function sshFingerprint(key: KeyObject | Uint8Array): string {
  const blob = key instanceof Uint8Array ? key : sshPublicKeyBlob(key);
  // 32 bytes are 44 base64 characters, the last one padding.
  return `SHA256:${hash("sha256", blob, "base64").slice(0, 43)}`;
}

export interface SshKeyPair {
  privateKey: KeyObject;
  publicKey: KeyObject;
  /** "type base64 comment" */
  publicLine: string;
  /** openssh-key-v1 PEM, unencrypted; write it with mode 0600 */
  privateOpenSsh: string;
}

export function generateSshKeyPair(
  kind: SshKeyKind = "ed25519",
  opts: { bits?: number; comment?: string } = {},
): SshKeyPair {
  const pair =
    kind === "ed25519"
      ? generateKeyPairSync("ed25519")
      : kind === "rsa"
        ? generateKeyPairSync("rsa", { modulusLength: opts.bits ?? 3072 })
        : generateKeyPairSync("ec", { namedCurve: kind === "ecdsa-p256" ? "P-256" : "P-384" });
  const comment = opts.comment ?? "";
  return {
    privateKey: pair.privateKey,
    publicKey: pair.publicKey,
    publicLine: formatSshPublicKey(pair.publicKey, comment),
    privateOpenSsh: encodeOpenSshPrivateKey(pair.privateKey, comment),
  };
}

const MAGIC = Buffer.from("openssh-key-v1\0", "latin1");
const PEM_BEGIN = "-----BEGIN OPENSSH PRIVATE KEY-----";
const PEM_END = "-----END OPENSSH PRIVATE KEY-----";

/** Private KeyObject -> unencrypted openssh-key-v1 PEM (what `ssh -i` and `ssh-keygen` read). */
export function encodeOpenSshPrivateKey(privateKey: KeyObject, comment = ""): string {
  if (privateKey.type !== "private") throw new BadParameterError("a private key is required");
  const type = sshKeyType(privateKey);
  const pub = sshPublicKeyBlob(privateKey);
  const jwk = privateKey.export({ format: "jwk" });
  const check = randomBytes(4).readUInt32BE();
  const p = new SshWriter().uint32(check).uint32(check).string(type);
  if (type === "ssh-ed25519") {
    const pk = fromB64u(jwk.x, "x");
    p.bytes(pk).bytes(Buffer.concat([fromB64u(jwk.d, "d"), pk]));
  } else if (type === "ssh-rsa") {
    p.mpint(fromB64u(jwk.n, "n"))
      .mpint(fromB64u(jwk.e, "e"))
      .mpint(fromB64u(jwk.d, "d"))
      .mpint(fromB64u(jwk.qi, "qi"))
      .mpint(fromB64u(jwk.p, "p"))
      .mpint(fromB64u(jwk.q, "q"));
  } else {
    writeKeyBody(p, privateKey, type);
    p.mpint(fromB64u(jwk.d, "d"));
  }
  p.string(comment);
  const padLen = (8 - (p.length % 8)) % 8;
  for (let i = 1; i <= padLen; i++) p.raw(Buffer.of(i));
  const body = new SshWriter()
    .raw(MAGIC)
    .string("none")
    .string("none")
    .string("")
    .uint32(1)
    .bytes(pub)
    .bytes(p.toBuffer())
    .toBuffer()
    .toString("base64");
  const lines = body.match(/.{1,70}/g) ?? [];
  return `${PEM_BEGIN}\n${lines.join("\n")}\n${PEM_END}\n`;
}

/** Unencrypted openssh-key-v1 PEM -> private KeyObject (e.g. a key made by `ssh-keygen`). */
export function parseOpenSshPrivateKey(pem: string): { privateKey: KeyObject; comment: string } {
  const text = pem.trim();
  if (!text.startsWith(PEM_BEGIN) || !text.endsWith(PEM_END))
    throw new BadParameterError("not an OpenSSH private key");
  const raw = Buffer.from(text.slice(PEM_BEGIN.length, -PEM_END.length).replace(/\s+/g, ""), "base64");
  if (!raw.subarray(0, MAGIC.length).equals(MAGIC)) throw new BadParameterError("not an openssh-key-v1 key");
  const r = new SshReader(raw.subarray(MAGIC.length), "openssh private key");
  if (r.string() !== "none" || r.string() !== "none")
    throw new BadParameterError("encrypted OpenSSH keys are not supported");
  r.bytes();
  if (r.uint32() !== 1) throw new BadParameterError("OpenSSH key file must hold exactly one key");
  const pubBlob = r.bytes();
  const priv = new SshReader(r.bytes(), "openssh private key");
  r.end();
  const check1 = priv.uint32();
  if (check1 !== priv.uint32()) throw new BadParameterError("OpenSSH private key check words differ");
  const type = priv.string();
  const pub = parseSshPublicKeyBlob(pubBlob);
  if (pub.type !== type) throw new BadParameterError("OpenSSH private key type mismatch");
  let jwk: Record<string, string>;
  if (type === "ssh-ed25519") {
    const pk = priv.bytes();
    const sk = priv.bytes();
    if (sk.length !== 64) throw new BadParameterError("ed25519 private key must be 64 bytes");
    jwk = { kty: "OKP", crv: "Ed25519", x: b64u(pk), d: b64u(sk.subarray(0, 32)) };
  } else if (type === "ssh-rsa") {
    const [n, e, d, qi, p, q] = [0, 1, 2, 3, 4, 5].map(() => priv.mpintUnsigned()) as Buffer[];
    const pub2 = pub.key.export({ format: "jwk" });
    // dp and dq are not stored by OpenSSH; node's JWK import needs them, so derive them.
    const big = (b: Buffer | undefined): bigint =>
      BigInt(`0x${(b ?? Buffer.alloc(1)).toString("hex") || "0"}`);
    const toB = (v: bigint): string => {
      const hex = v.toString(16);
      return b64u(Buffer.from(hex.length % 2 ? `0${hex}` : hex, "hex"));
    };
    const dv = big(d);
    jwk = {
      kty: "RSA",
      n: b64u(n as Buffer),
      e: b64u(e as Buffer),
      d: b64u(d as Buffer),
      p: b64u(p as Buffer),
      q: b64u(q as Buffer),
      dp: toB(dv % (big(p) - 1n)),
      dq: toB(dv % (big(q) - 1n)),
      qi: b64u(qi as Buffer),
    };
    if (pub2.n !== jwk.n) throw new BadParameterError("OpenSSH private key does not match its public key");
  } else {
    const curve = priv.string();
    const point = priv.bytes();
    const d = priv.mpintUnsigned();
    const pubJwk = pub.key.export({ format: "jwk" });
    const size = type === "ecdsa-sha2-nistp384" ? 48 : 32;
    if (curve !== (size === 48 ? "nistp384" : "nistp256") || point.length !== 1 + 2 * size) {
      throw new BadParameterError("OpenSSH ecdsa private key is malformed");
    }
    jwk = {
      kty: "EC",
      crv: String(pubJwk.crv),
      x: String(pubJwk.x),
      y: String(pubJwk.y),
      d: b64u(Buffer.concat([Buffer.alloc(size - d.length), d])),
    };
  }
  const comment = priv.string();
  try {
    return { privateKey: createPrivateKey({ key: jwk, format: "jwk" }), comment };
  } catch (err) {
    throw new BadParameterError("OpenSSH private key is not valid", { cause: err });
  }
}
