// OpenSSH key revocation lists (the KRL format of OpenSSH's PROTOCOL.krl, what `ssh-keygen -k`
// writes and sshd's RevokedKeys reads). Written by hand: no maintained JavaScript library encodes
// KRLs. Only an encoder: we never parse KRLs (ssh-keygen -Q checks what we write, krl.test.ts).
//
// Layout: magic "SSHKRL\n\0", uint32 format version 1, uint64 krl_version, uint64 generated date
// (Unix seconds), uint64 flags (none defined), string reserved, string comment, then sections,
// each a type byte and a string body. A certificate section names its CA key (wire blob; an empty
// string means any CA) and a reserved string, then sub-sections of its own (type byte + string).
import { BadParameterError } from "../errors.ts";
import { SshWriter } from "./ssh-wire.ts";

const MAGIC = Buffer.from("SSHKRL\n\0", "latin1");
const FORMAT_VERSION = 1;

const SECTION_CERTIFICATES = 1;
const SECTION_EXPLICIT_KEY = 2;
const SECTION_FINGERPRINT_SHA256 = 5;
const CERT_SERIAL_LIST = 0x20;
const CERT_KEY_ID = 0x23;

const MAX_U64 = 0xffff_ffff_ffff_ffffn;

/** Certificates one CA signed that are revoked, by key id and/or serial. */
export interface KrlCertificates {
  /** The CA public key in SSH wire encoding; undefined: certificates of any CA. */
  caKeyBlob?: Uint8Array;
  keyIds?: readonly string[];
  /** Serial 0 is ignored by OpenSSH (the "no serial" value), so it is refused here. */
  serials?: readonly bigint[];
}

export interface KrlContent {
  /** Grows with every change (ssh-keygen -k -u does the same); default 0. */
  version?: bigint;
  generatedAt: Date;
  comment?: string;
  certificates?: readonly KrlCertificates[];
  /** Plain public keys (wire blobs) revoked outright, with every certificate of them. */
  explicitKeys?: readonly Uint8Array[];
  /** SHA-256 digests (32 bytes) of revoked public key blobs (OpenSSH 7.9 and later). */
  sha256Fingerprints?: readonly Uint8Array[];
}

const byBytes = (a: Uint8Array, b: Uint8Array): number => Buffer.compare(a, b);

/** Sorted and de-duplicated, as ssh-keygen writes them (sshd does not require it). */
function uniqueBlobs(list: readonly Uint8Array[]): Buffer[] {
  const sorted = list.map((b) => Buffer.from(b)).sort(byBytes);
  return sorted.filter((b, i) => i === 0 || !b.equals(sorted[i - 1] as Buffer));
}

function certificateSection(c: KrlCertificates): Buffer {
  const w = new SshWriter();
  w.bytes(c.caKeyBlob ?? Buffer.alloc(0)).string("");
  const serials = [...new Set(c.serials ?? [])].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  if (serials.length > 0) {
    const sub = new SshWriter();
    for (const s of serials) {
      if (s <= 0n || s > MAX_U64) throw new BadParameterError("a revoked serial must be 1..2^64-1");
      sub.uint64(s);
    }
    w.raw(Buffer.of(CERT_SERIAL_LIST)).bytes(sub.toBuffer());
  }
  const keyIds = [...new Set(c.keyIds ?? [])].sort();
  if (keyIds.length > 0) {
    const sub = new SshWriter();
    for (const id of keyIds) {
      // sshd reads key ids as C strings: a NUL would cut one short and revoke another.
      if (id.length === 0 || id.includes("\0"))
        throw new BadParameterError("a revoked key id must be non-empty");
      sub.string(id);
    }
    w.raw(Buffer.of(CERT_KEY_ID)).bytes(sub.toBuffer());
  }
  return w.toBuffer();
}

function blobSection(blobs: readonly Uint8Array[]): Buffer {
  const w = new SshWriter();
  for (const b of uniqueBlobs(blobs)) w.bytes(b);
  return w.toBuffer();
}

/** The KRL file's bytes. No sections at all is a valid KRL that revokes nothing. */
export function encodeKrl(k: KrlContent): Buffer {
  const version = k.version ?? 0n;
  if (version < 0n || version > MAX_U64) throw new BadParameterError("KRL version must fit in 64 bits");
  const seconds = Math.floor(k.generatedAt.getTime() / 1000);
  if (!Number.isFinite(seconds) || seconds < 0) throw new BadParameterError("KRL date must be after 1970");
  const comment = k.comment ?? "";
  if (comment.includes("\0")) throw new BadParameterError("KRL comment must not contain NUL");
  const w = new SshWriter()
    .raw(MAGIC)
    .uint32(FORMAT_VERSION)
    .uint64(version)
    .uint64(BigInt(seconds))
    .uint64(0n)
    .string("")
    .string(comment);
  for (const c of k.certificates ?? []) {
    if ((c.keyIds?.length ?? 0) === 0 && (c.serials?.length ?? 0) === 0) continue;
    w.raw(Buffer.of(SECTION_CERTIFICATES)).bytes(certificateSection(c));
  }
  if ((k.explicitKeys?.length ?? 0) > 0) {
    w.raw(Buffer.of(SECTION_EXPLICIT_KEY)).bytes(blobSection(k.explicitKeys ?? []));
  }
  if ((k.sha256Fingerprints?.length ?? 0) > 0) {
    for (const f of k.sha256Fingerprints ?? [])
      if (f.length !== 32) throw new BadParameterError("a SHA-256 fingerprint is 32 bytes");
    w.raw(Buffer.of(SECTION_FINGERPRINT_SHA256)).bytes(blobSection(k.sha256Fingerprints ?? []));
  }
  return w.toBuffer();
}
