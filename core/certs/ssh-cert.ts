// OpenSSH certificates (PROTOCOL.certkeys): build and sign with an Ed25519 CA, parse strictly, and
// verify against trusted CA keys the way sshd does (type, window, principal, source-address).

import { KeyObject, randomFillSync, sign, verify } from "node:crypto";
import { BlockList, isIP } from "node:net";
import type { Clock } from "../clock.ts";
import { AccessDeniedError, BadParameterError, NotAuthenticatedError } from "../errors.ts";
import {
  parseSshPublicKey,
  parseSshPublicKeyBlob,
  readKeyBody,
  type SshKeyType,
  type SshPublicKey,
  sshKeyType,
  sshPublicKeyBlob,
} from "./ssh-keys.ts";
import { SshReader, SshWriter, unpackStrings } from "./ssh-wire.ts";

export type SshCertType = "user" | "host";

export const SSH_CERT_EXTENSIONS = [
  "permit-X11-forwarding",
  "permit-agent-forwarding",
  "permit-port-forwarding",
  "permit-pty",
  "permit-user-rc",
] as const;
export type SshCertExtension = (typeof SSH_CERT_EXTENSIONS)[number];

/** Critical options sshd understands; any other one makes a certificate unusable there. */
const KNOWN_CRITICAL = new Set(["force-command", "source-address", "verify-required"]);

const CERT_TYPES: Record<SshKeyType, string> = {
  "ssh-ed25519": "ssh-ed25519-cert-v01@openssh.com",
  "ecdsa-sha2-nistp256": "ecdsa-sha2-nistp256-cert-v01@openssh.com",
  "ecdsa-sha2-nistp384": "ecdsa-sha2-nistp384-cert-v01@openssh.com",
  "ssh-rsa": "ssh-rsa-cert-v01@openssh.com",
};
const KEY_TYPE_OF_CERT = new Map(Object.entries(CERT_TYPES).map(([k, v]) => [v, k as SshKeyType]));

const MAX_U64 = 0xffff_ffff_ffff_ffffn;
const MAX_PRINCIPALS = 256;

export interface SshCertificateRequest {
  type: SshCertType;
  /** subject public key: a KeyObject, an OpenSSH public key line, or a parsed one */
  publicKey: KeyObject | string | SshPublicKey;
  keyId: string;
  principals: readonly string[];
  validAfter: Date;
  validBefore: Date;
  /** default: random 63-bit */
  serial?: bigint;
  /** user certificates only */
  forceCommand?: string;
  /** user certificates only: CIDRs or addresses the certificate may be used from */
  sourceAddress?: readonly string[];
  /** user certificates only; sorted and de-duplicated here */
  extensions?: readonly SshCertExtension[];
  /**
   * user certificates only: vendor extensions ("name@domain") with a string value, signed with the
   * rest. OpenSSH ignores extensions it does not know, so these carry data for our own nodes.
   */
  valueExtensions?: Readonly<Record<string, string>>;
}

export interface SshCertificate {
  /** certificate in SSH wire encoding */
  blob: Buffer;
  /** "<cert type> <base64> <key id>", the content of an id_*-cert.pub file */
  readonly line: string;
  serial: bigint;
  /**
   * The signing CA's public key blob, when the signer has it at hand (the same Buffer for every
   * certificate of one CA key): the issued-certificate journal reads it here instead of walking
   * the certificate for it.
   */
  readonly caKeyBlob?: Buffer;
}

export interface ParsedSshCertificate {
  certType: string;
  keyType: SshKeyType;
  nonce: Buffer;
  publicKey: KeyObject;
  serial: bigint;
  type: SshCertType;
  keyId: string;
  principals: string[];
  validAfter: Date;
  /** far future (year 9999) when the certificate says "forever" */
  validBefore: Date;
  /** name -> value ("" for flags) */
  criticalOptions: Record<string, string>;
  extensions: string[];
  /** name -> value of extensions that carry a string value (see valueExtensions) */
  extensionValues: Record<string, string>;
  signatureKey: Buffer;
  signatureKeyType: SshKeyType;
  blob: Buffer;
}

// Regular expressions used per certificate live here: a literal in a function body is a new
// RegExp object each time it is evaluated.
const LINE_BREAK_OR_NUL = /[\0\r\n]/;
const WHITE_SPACE = /\s/g;

function checkText(v: unknown, what: string, max = 1024): string {
  if (typeof v !== "string" || v.length === 0 || v.length > max || LINE_BREAK_OR_NUL.test(v)) {
    throw new BadParameterError(
      `${what} must be a non-empty single-line string of at most ${max} characters`,
    );
  }
  return v;
}

function checkSourceAddresses(list: readonly string[]): string {
  if (list.length === 0) throw new BadParameterError("source-address must list at least one address");
  for (const a of list) parseCidr(a);
  return list.join(",");
}

function parseCidr(entry: string): { addr: string; prefix: number; family: "ipv4" | "ipv6" } {
  const [addr = "", prefixText, extra] = entry.split("/");
  const v = isIP(addr);
  if (v === 0 || extra !== undefined)
    throw new BadParameterError(`source-address entry ${JSON.stringify(entry)} is not an address or CIDR`);
  const max = v === 4 ? 32 : 128;
  const prefix = prefixText === undefined ? max : Number(prefixText);
  if (!/^\d+$/.test(prefixText ?? String(max)) || prefix > max) {
    throw new BadParameterError(`source-address entry ${JSON.stringify(entry)} has a bad prefix length`);
  }
  return { addr, prefix, family: v === 4 ? "ipv4" : "ipv6" };
}

/** Whole seconds since the epoch (a Date's range fits a uint64 and a double exactly). */
const toU64Seconds = (d: Date, what: string): number => {
  const ms = d.getTime();
  if (!Number.isFinite(ms) || ms < 0) throw new BadParameterError(`${what} is not a valid time`);
  return Math.floor(ms / 1000);
};

const EMPTY = Buffer.alloc(0);

// The certificate is written into one buffer sized exactly beforehand (checked at the end), so
// these write bytes directly: Buffer's own writers check bounds and call into C++ per field.

/** Writes a uint32 at `o`; returns the offset after it. */
function putU32(buf: Buffer, o: number, v: number): number {
  buf[o] = v >>> 24;
  buf[o + 1] = v >>> 16;
  buf[o + 2] = v >>> 8;
  buf[o + 3] = v;
  return o + 4;
}

/** Writes a uint64 (a non-negative safe integer) at `o`. */
function putU64(buf: Buffer, o: number, v: number): number {
  return putU32(buf, putU32(buf, o, Math.floor(v / 0x1_0000_0000)), v >>> 0);
}

/** UTF-8 length; short ASCII (key ids, principals, type names) counted without a native call. */
function utf8Length(v: string): number {
  if (v.length > 64) return Buffer.byteLength(v);
  for (let i = 0; i < v.length; i++) if (v.charCodeAt(i) > 0x7f) return Buffer.byteLength(v);
  return v.length;
}

/** Writes an SSH string at `o`; returns the offset after it. */
function putStr(buf: Buffer, o: number, v: string): number {
  const len = v.length;
  if (len <= 64) {
    let i = 0;
    for (; i < len; i++) {
      const c = v.charCodeAt(i);
      if (c > 0x7f) break;
      buf[o + 4 + i] = c;
    }
    if (i === len) return putU32(buf, o, len) + len;
  }
  const n = buf.write(v, o + 4, "utf8");
  putU32(buf, o, n);
  return o + 4 + n;
}

function putBytes(buf: Buffer, o: number, v: Buffer): number {
  putU32(buf, o, v.length);
  return o + 4 + v.copy(buf, o + 4);
}

// Nonces and serials come from a pooled random buffer: one randomFillSync per ~100 certificates.
let pool = Buffer.alloc(0);
let poolPos = 0;
function randomChunk(n: number): Buffer {
  if (poolPos + n > pool.length) {
    pool = randomFillSync(Buffer.allocUnsafe(4096));
    poolPos = 0;
  }
  const out = pool.subarray(poolPos, poolPos + n);
  poolPos += n;
  return out;
}

const subjectCache = new WeakMap<KeyObject, { type: SshKeyType; blob: Buffer }>();

/**
 * The subject key's type and wire blob, without re-encoding a parsed key; the certificate holds
 * the blob's key fields (after the type name).
 */
function subjectKey(k: KeyObject | string | SshPublicKey): { type: SshKeyType; blob: Buffer } {
  if (k instanceof KeyObject) {
    let hit = subjectCache.get(k);
    if (!hit) {
      hit = { type: sshKeyType(k), blob: sshPublicKeyBlob(k) };
      subjectCache.set(k, hit);
    }
    return hit;
  }
  return typeof k === "string" ? parseSshPublicKey(k) : k;
}

/** A signed certificate; the text line is built on first use. */
class IssuedCertificate implements SshCertificate {
  readonly blob: Buffer;
  readonly serial: bigint;
  readonly caKeyBlob: Buffer;
  readonly #certType: string;
  readonly #keyId: string;
  constructor(blob: Buffer, certType: string, keyId: string, serial: bigint, caKeyBlob: Buffer) {
    this.blob = blob;
    this.serial = serial;
    this.caKeyBlob = caKeyBlob;
    this.#certType = certType;
    this.#keyId = keyId;
  }
  get line(): string {
    return `${this.#certType} ${this.blob.toString("base64")} ${this.#keyId.replace(WHITE_SPACE, "_")}`;
  }
  toJSON(): { line: string; serial: string } {
    return { line: this.line, serial: this.serial.toString() };
  }
}

/** Signs certificates with one Ed25519 CA key; caches the CA's wire blob (done once, not per cert). */
export class SshCertSigner {
  readonly #caKey: KeyObject;
  readonly #caBlob: Buffer;
  constructor(caPrivateKey: KeyObject) {
    if (caPrivateKey.type !== "private" || caPrivateKey.asymmetricKeyType !== "ed25519") {
      throw new BadParameterError("an SSH CA key must be an Ed25519 private key");
    }
    this.#caKey = caPrivateKey;
    this.#caBlob = sshPublicKeyBlob(caPrivateKey);
  }
  /** extension sections by bitmask over SSH_CERT_EXTENSIONS (which is already sorted) */
  readonly #extCache: (Buffer | undefined)[] = [];

  /** Encoded extensions section, sorted and de-duplicated; cached per set (2^5 sets). */
  #extensions(mask: number): Buffer {
    const hit = this.#extCache[mask];
    if (hit) return hit;
    const w = new SshWriter();
    SSH_CERT_EXTENSIONS.forEach((n, i) => {
      if (mask & (1 << i)) w.string(n).uint32(0);
    });
    const out = w.toBuffer();
    this.#extCache[mask] = out;
    return out;
  }

  /** extension sections with valued extensions, by their exact content (see #valueExtensions) */
  readonly #valueExtCache = new Map<string, Buffer>();
  /** the same for sealed values (sealValueExtensions), by the object and then the flag bitmask */
  readonly #sealedExtCache = new WeakMap<object, (Buffer | undefined)[]>();

  /**
   * The extensions section with valued extensions. The identity extension is the same for every
   * certificate of a user with the same roles, so the section is cached: by the object itself when
   * it was sealed (it cannot change), else by its exact input (a JSON key: unambiguous whatever the
   * values hold); encoding it was ~15 us of each IssueUserCerts. A hit was validated when it was
   * encoded. Bounded: emptied when full (the sealed one goes with its objects).
   */
  #valueExtensions(
    flags: readonly SshCertExtension[],
    mask: number,
    values: Readonly<Record<string, string>>,
  ): Buffer {
    if (sealed.has(values)) {
      let byMask = this.#sealedExtCache.get(values);
      if (!byMask) {
        byMask = [];
        this.#sealedExtCache.set(values, byMask);
      }
      const hit = byMask[mask];
      if (hit) return hit;
      const out = withValueExtensions(flags, values);
      byMask[mask] = out;
      return out;
    }
    const key = JSON.stringify([flags, values]);
    const hit = this.#valueExtCache.get(key);
    if (hit) return hit;
    const out = withValueExtensions(flags, values);
    if (this.#valueExtCache.size >= VALUE_EXT_CACHE_SIZE) this.#valueExtCache.clear();
    this.#valueExtCache.set(key, out);
    return out;
  }

  /** the CA public key in wire encoding */
  get publicKeyBlob(): Buffer {
    return this.#caBlob;
  }

  sign(req: SshCertificateRequest): SshCertificate {
    if (req.type !== "user" && req.type !== "host")
      throw new BadParameterError("certificate type must be user or host");
    const subject = subjectKey(req.publicKey);
    const keyType = subject.type;
    const bodyStart = 4 + keyType.length;
    const bodyLength = subject.blob.length - bodyStart;
    const keyId = checkText(req.keyId, "key id");
    if (
      !Array.isArray(req.principals) ||
      req.principals.length === 0 ||
      req.principals.length > MAX_PRINCIPALS
    ) {
      // An empty principal list means "any principal" to OpenSSH: never issue that.
      throw new BadParameterError(`a certificate needs 1..${MAX_PRINCIPALS} principals`);
    }
    for (const p of req.principals) checkText(p, "principal", 255);
    const after = toU64Seconds(req.validAfter, "valid after");
    const before = toU64Seconds(req.validBefore, "valid before");
    if (before <= after) throw new BadParameterError("valid before must be later than valid after");
    const rnd = randomChunk(40);
    // Random 63 bits: the top bit of the pooled random bytes cleared (one BigInt, not two).
    const random = req.serial === undefined;
    let serial = req.serial;
    if (serial === undefined) {
      rnd[32] = (rnd[32] as number) & 0x7f;
      serial = rnd.readBigUInt64BE(32);
    }
    if (serial < 0n || serial > MAX_U64) throw new BadParameterError("serial must fit in 64 bits");

    let critical: Buffer = EMPTY;
    let exts: Buffer = EMPTY;
    if (req.type === "host") {
      if (
        req.forceCommand !== undefined ||
        req.sourceAddress !== undefined ||
        (req.extensions?.length ?? 0) > 0
      ) {
        throw new BadParameterError("host certificates carry no critical options or extensions");
      }
    } else {
      if (req.forceCommand !== undefined || req.sourceAddress !== undefined) {
        // Names are written in lexical order, as OpenSSH requires.
        const w = new SshWriter();
        if (req.forceCommand !== undefined) {
          w.string("force-command").bytes(
            new SshWriter().string(checkText(req.forceCommand, "force-command", 4096)).toBuffer(),
          );
        }
        if (req.sourceAddress !== undefined) {
          w.string("source-address").bytes(
            new SshWriter().string(checkSourceAddresses(req.sourceAddress)).toBuffer(),
          );
        }
        critical = w.toBuffer();
      }
      const flags = req.extensions ?? [];
      const mask = flagMask(flags);
      const values = req.valueExtensions;
      exts =
        values && (sealed.has(values) || Object.keys(values).length > 0)
          ? this.#valueExtensions(flags, mask, values)
          : this.#extensions(mask);
    }

    // One exact-size buffer: the signed part, then room for the signature string.
    const certType = CERT_TYPES[keyType];
    const sigLen = 4 + (4 + 11) + (4 + 64);
    let principalsLen = 0;
    for (const p of req.principals) principalsLen += 4 + utf8Length(p);
    const signedLen =
      4 +
      certType.length +
      36 +
      bodyLength +
      8 +
      4 +
      4 +
      utf8Length(keyId) +
      4 +
      principalsLen +
      16 +
      4 +
      critical.length +
      4 +
      exts.length +
      4 +
      4 +
      this.#caBlob.length;
    const blob = Buffer.allocUnsafe(signedLen + sigLen);
    let o = putStr(blob, 0, certType);
    o = putU32(blob, o, 32);
    o += rnd.copy(blob, o, 0, 32);
    o += subject.blob.copy(blob, o, bodyStart);
    // A random serial is its 8 bytes as they are: no BigInt arithmetic to write it back.
    o = random ? o + rnd.copy(blob, o, 32, 40) : blob.writeBigUInt64BE(serial, o);
    o = putU32(blob, o, req.type === "user" ? 1 : 2);
    o = putStr(blob, o, keyId);
    o = putU32(blob, o, principalsLen);
    for (const p of req.principals) o = putStr(blob, o, p);
    o = putU64(blob, o, after);
    o = putU64(blob, o, before);
    o = putBytes(blob, o, critical);
    o = putBytes(blob, o, exts);
    o = putU32(blob, o, 0);
    o = putBytes(blob, o, this.#caBlob);
    const signature = sign(null, blob.subarray(0, o), this.#caKey);
    o = putU32(blob, o, 4 + 11 + 4 + signature.length);
    o = putStr(blob, o, "ssh-ed25519");
    o = putBytes(blob, o, signature);
    if (o !== blob.length) throw new Error("certificate length mismatch");
    return new IssuedCertificate(blob, certType, keyId, serial, this.#caBlob);
  }
}

/** The set of flag extensions as a bitmask over SSH_CERT_EXTENSIONS; refuses an unknown one. */
function flagMask(list: readonly SshCertExtension[]): number {
  let mask = 0;
  for (let k = 0; k < list.length; k++) {
    const n = list[k] as SshCertExtension;
    const i = (SSH_CERT_EXTENSIONS as readonly string[]).indexOf(n);
    if (i < 0) throw new BadParameterError(`unknown extension ${JSON.stringify(String(n).slice(0, 64))}`);
    mask |= 1 << i;
  }
  return mask;
}

/** Valued extensions that were sealed: frozen copies holding only their own string values. */
const sealed = new WeakSet<object>();

/**
 * A frozen copy of valued extensions that signers may cache by identity (the same object for the
 * same user means no re-encoding and no content key per certificate). Any value that is not a
 * string is refused here, as signing would.
 */
export function sealValueExtensions(
  values: Readonly<Record<string, string>>,
): Readonly<Record<string, string>> {
  const copy: Record<string, string> = {};
  for (const [name, value] of Object.entries(values)) {
    if (typeof value !== "string") throw new BadParameterError(`extension ${name} must be a string`);
    copy[name] = value;
  }
  Object.freeze(copy);
  sealed.add(copy);
  return copy;
}

const VENDOR_EXTENSION = /^[a-z][a-z0-9-]{0,62}@[a-z0-9.-]{1,190}$/;
/** Distinct valued-extension sections a signer keeps (users x role sets in use at once). */
const VALUE_EXT_CACHE_SIZE = 4096;

/** The extensions section with flag extensions and valued vendor extensions, in lexical order. */
function withValueExtensions(
  flags: readonly SshCertExtension[],
  values: Readonly<Record<string, string>>,
): Buffer {
  const entries = new Map<string, Buffer>();
  for (const n of flags) {
    if (!(SSH_CERT_EXTENSIONS as readonly string[]).includes(n))
      throw new BadParameterError(`unknown extension ${JSON.stringify(String(n).slice(0, 64))}`);
    entries.set(n, EMPTY);
  }
  for (const [name, value] of Object.entries(values)) {
    if (!VENDOR_EXTENSION.test(name))
      throw new BadParameterError(`extension name ${JSON.stringify(name)} is not name@domain`);
    if (value.length > 16 * 1024) throw new BadParameterError(`extension ${name} is too large`);
    entries.set(name, new SshWriter().string(value).toBuffer());
  }
  const w = new SshWriter();
  for (const name of [...entries.keys()].sort()) w.string(name).bytes(entries.get(name) ?? EMPTY);
  return w.toBuffer();
}

/** One-shot helper; prefer a long-lived SshCertSigner when signing many. */
export function signSshCertificate(caPrivateKey: KeyObject, req: SshCertificateRequest): SshCertificate {
  return new SshCertSigner(caPrivateKey).sign(req);
}

function certBlobFrom(input: Uint8Array | string): Buffer {
  if (typeof input !== "string") return Buffer.from(input);
  const parts = input.trim().split(/\s+/);
  const b64 = parts[1] ?? "";
  if (parts.length < 2 || !/^[A-Za-z0-9+/]+={0,2}$/.test(b64) || b64.length % 4 !== 0) {
    throw new BadParameterError("certificate must look like '<type> <base64> [comment]'");
  }
  const blob = Buffer.from(b64, "base64");
  if (new SshReader(blob, "ssh certificate").string() !== parts[0])
    throw new BadParameterError("certificate line type does not match its blob");
  return blob;
}

function readOptions(buf: Buffer, what: string, flags: boolean): Record<string, string> {
  const r = new SshReader(buf, what);
  const out = Object.create(null) as Record<string, string>;
  let prev: string | undefined;
  while (r.remaining > 0) {
    const name = r.string();
    if (prev !== undefined && name <= prev)
      throw new BadParameterError(`${what} are not sorted or repeat a name`);
    prev = name;
    const data = r.bytes();
    if (data.length === 0) {
      out[name] = "";
    } else if (flags) {
      out[name] = data.toString("base64");
    } else {
      const inner = new SshReader(data, `${what} ${name}`);
      out[name] = inner.string();
      inner.end();
    }
  }
  return out;
}

/** Decodes a certificate (wire blob or "type base64 comment" line). Does not check trust: see verifySshCertificate. */
export function parseSshCertificate(input: Uint8Array | string): ParsedSshCertificate {
  const blob = certBlobFrom(input);
  const r = new SshReader(blob, "ssh certificate");
  const certType = r.string();
  const keyType = KEY_TYPE_OF_CERT.get(certType);
  if (!keyType)
    throw new BadParameterError(`unsupported certificate type ${JSON.stringify(certType.slice(0, 64))}`);
  const nonce = r.bytes();
  if (nonce.length < 16) throw new BadParameterError("certificate nonce is too short");
  const publicKey = readKeyBody(r, keyType);
  const serial = r.uint64();
  const typeNum = r.uint32();
  if (typeNum !== 1 && typeNum !== 2)
    throw new BadParameterError(`certificate type ${typeNum} is neither user nor host`);
  const keyId = r.string();
  const principals = unpackStrings(r.bytes(), "certificate principals");
  const after = r.uint64();
  const before = r.uint64();
  const criticalOptions = readOptions(r.bytes(), "critical options", false);
  const extensionData = readOptions(r.bytes(), "extensions", true);
  const extensions = Object.keys(extensionData);
  const extensionValues = Object.create(null) as Record<string, string>;
  for (const [name, b64] of Object.entries(extensionData)) {
    if (b64 === "" || !name.includes("@")) continue;
    try {
      const inner = new SshReader(Buffer.from(b64, "base64"), `extension ${name}`);
      const value = inner.string();
      inner.end();
      extensionValues[name] = value;
    } catch {
      // Not a string value: someone else's extension format; ignored like OpenSSH does.
    }
  }
  r.bytes(); // reserved
  const signatureKey = r.bytes();
  const signedLength = r.offset;
  const sigBlob = r.bytes();
  r.end();
  const ca = parseSshPublicKeyBlob(signatureKey);
  const toDate = (s: bigint): Date => new Date(Number(s > 253402300799n ? 253402300799n : s) * 1000);
  const parsed: ParsedSshCertificate = {
    certType,
    keyType,
    nonce,
    publicKey,
    serial,
    type: typeNum === 1 ? "user" : "host",
    keyId,
    principals,
    validAfter: toDate(after),
    validBefore: toDate(before),
    criticalOptions,
    extensions,
    extensionValues,
    signatureKey,
    signatureKeyType: ca.type,
    blob,
  };
  signatures.set(parsed, { signed: blob.subarray(0, signedLength), sig: sigBlob, caKey: ca.key });
  return parsed;
}

const signatures = new WeakMap<ParsedSshCertificate, { signed: Buffer; sig: Buffer; caKey: KeyObject }>();

/** Checks an SSH signature blob (string format, string sig) made by `key` over `data`. */
export function verifySshSignature(
  key: KeyObject,
  keyType: SshKeyType,
  data: Uint8Array,
  sigBlob: Uint8Array,
): boolean {
  const r = new SshReader(sigBlob, "ssh signature");
  const format = r.string();
  const sig = r.bytes();
  r.end();
  switch (keyType) {
    case "ssh-ed25519":
      return format === "ssh-ed25519" && verify(null, data, key, sig);
    case "ecdsa-sha2-nistp256":
    case "ecdsa-sha2-nistp384": {
      if (format !== keyType) return false;
      const size = keyType === "ecdsa-sha2-nistp256" ? 32 : 48;
      const rs = new SshReader(sig, "ecdsa signature");
      const [a, b] = [rs.mpintUnsigned(), rs.mpintUnsigned()];
      rs.end();
      if (a.length > size || b.length > size) return false;
      const p1363 = Buffer.concat([Buffer.alloc(size - a.length), a, Buffer.alloc(size - b.length), b]);
      return verify(size === 32 ? "sha256" : "sha384", data, { key, dsaEncoding: "ieee-p1363" }, p1363);
    }
    case "ssh-rsa":
      if (format === "rsa-sha2-256") return verify("sha256", data, key, sig);
      if (format === "rsa-sha2-512") return verify("sha512", data, key, sig);
      return false; // ssh-rsa (SHA-1) signatures are refused
  }
}

export interface VerifySshCertificateOptions {
  /** trusted CA public keys: KeyObjects, wire blobs or OpenSSH public key lines */
  trustedCaKeys: readonly (KeyObject | Uint8Array | string)[];
  type: SshCertType;
  clock: Clock;
  /** the login (user cert) or host name (host cert) that must be among the principals */
  principal?: string;
  /** the peer's address, checked against a source-address critical option when present */
  clientAddress?: string;
}

function caBlob(k: KeyObject | Uint8Array | string): Buffer {
  if (typeof k === "string") return parseSshPublicKey(k).blob;
  if (k instanceof Uint8Array) return Buffer.from(k);
  return sshPublicKeyBlob(k);
}

function addressAllowed(list: string, client: string): boolean {
  let addr = client;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(addr);
  if (mapped) addr = mapped[1] as string;
  const v = isIP(addr);
  if (v === 0) return false;
  const bl = new BlockList();
  for (const entry of list.split(",")) {
    const c = parseCidr(entry.trim());
    bl.addSubnet(c.addr, c.prefix, c.family);
  }
  return bl.check(addr, v === 4 ? "ipv4" : "ipv6");
}

/**
 * Parses and verifies a certificate. Malformed -> BadParameterError; untrusted CA, bad signature,
 * wrong type, outside the validity window, unknown critical option -> NotAuthenticatedError;
 * principal not listed or source-address mismatch -> AccessDeniedError.
 */
export function verifySshCertificate(
  input: Uint8Array | string | ParsedSshCertificate,
  opts: VerifySshCertificateOptions,
): ParsedSshCertificate {
  const cert = typeof input === "string" || input instanceof Uint8Array ? parseSshCertificate(input) : input;
  const sig = signatures.get(cert);
  if (!sig) throw new BadParameterError("certificate was not produced by parseSshCertificate");
  const trusted = opts.trustedCaKeys.some((k) => caBlob(k).equals(cert.signatureKey));
  if (!trusted) throw new NotAuthenticatedError("certificate is not signed by a trusted CA");
  if (!verifySshSignature(sig.caKey, cert.signatureKeyType, sig.signed, sig.sig)) {
    throw new NotAuthenticatedError("certificate signature is invalid");
  }
  if (cert.type !== opts.type)
    throw new NotAuthenticatedError(`expected a ${opts.type} certificate, got a ${cert.type} certificate`);
  const now = opts.clock.now().getTime();
  if (now < cert.validAfter.getTime()) throw new NotAuthenticatedError("certificate is not yet valid");
  if (now >= cert.validBefore.getTime()) throw new NotAuthenticatedError("certificate has expired");
  for (const name of Object.keys(cert.criticalOptions)) {
    if (!KNOWN_CRITICAL.has(name))
      throw new NotAuthenticatedError(`certificate has unsupported critical option ${JSON.stringify(name)}`);
  }
  if (cert.principals.length === 0) throw new AccessDeniedError("certificate names no principals");
  if (opts.principal !== undefined && !cert.principals.includes(opts.principal)) {
    throw new AccessDeniedError(`certificate is not valid for principal ${JSON.stringify(opts.principal)}`);
  }
  const src = cert.criticalOptions["source-address"];
  if (src !== undefined) {
    if (opts.clientAddress === undefined || !addressAllowed(src, opts.clientAddress)) {
      throw new AccessDeniedError("certificate may not be used from this address");
    }
  }
  return cert;
}
