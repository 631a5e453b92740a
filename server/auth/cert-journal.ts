// The issued-certificate journal: one backend item per SSH user certificate key id that auth signed
// (users, bots, workloads), holding what a lock can match (the name, the roles) and which CA key
// signed it, and expiring with the last certificate of that key id. ExportKrl (krl.ts) reads it to
// name in a KRL the certificates a lock covers. No certificate body and no secret is stored.
import { hash } from "node:crypto";
import type { Backend, Item } from "../../core/backend/backend.ts";
import { sshFingerprint } from "../../core/certs/ssh-keys.ts";
import { SshReader } from "../../core/certs/ssh-wire.ts";
import type { Clock } from "../../core/clock.ts";
import { isAlreadyExists, isCompareFailed, isNotFound } from "../../core/errors.ts";
import type { LockSubject } from "../../core/locks/lock.ts";

export const CERT_JOURNAL_PREFIX = "cert-journal/";

export type JournalKind = "user" | "bot" | "workload";

export interface JournalEntry {
  keyId: string;
  kind: JournalKind;
  /** user name, bot name or SPIFFE ID */
  name: string;
  roles: string[];
  /** "SHA256:..." of every CA key that signed a certificate with this key id */
  caFingerprints: string[];
  /** the latest valid_before among them (or the later keepUntil bound they were recorded with) */
  validBefore: Date;
}

export interface IssuedCertificate {
  keyId: string;
  kind: JournalKind;
  name: string;
  roles: readonly string[];
  validBefore: Date;
  /** the certificate's wire blob: the CA key is read from it (no signature check: we just signed it) */
  certBlob: Uint8Array;
  /** the signing CA's key blob when the signer gave it (SshCertificate.caKeyBlob): not read again */
  caKeyBlob?: Uint8Array | undefined;
  /**
   * A bound no certificate of this key id can outlive (a login session's expiry: its certificates
   * end with it). The entry is kept until then, so the session's later certificates find it
   * already covering them and cost no write; listing an expired certificate's key id in a KRL a
   * little longer is harmless.
   */
  keepUntil?: Date;
}

interface Stored {
  key_id: string;
  kind: JournalKind;
  name: string;
  roles: string[];
  ca_fingerprints: string[];
  valid_before: string;
}

/** Key-specific fields (length-prefixed strings) per certificate type, before the serial. */
const KEY_FIELDS: Record<string, number> = {
  "ssh-ed25519-cert-v01@openssh.com": 1,
  "ecdsa-sha2-nistp256-cert-v01@openssh.com": 2,
  "ecdsa-sha2-nistp384-cert-v01@openssh.com": 2,
  "ecdsa-sha2-nistp521-cert-v01@openssh.com": 2,
  "ssh-rsa-cert-v01@openssh.com": 2,
};

/** The signature (CA) key blob of a certificate, walked field by field (PROTOCOL.certkeys). */
export function certificateCaKeyBlob(blob: Uint8Array): Buffer {
  const r = new SshReader(blob, "certificate");
  const fields = KEY_FIELDS[r.string()];
  if (fields === undefined) throw new Error("not an OpenSSH certificate of a known type");
  r.bytes(); // nonce
  for (let i = 0; i < fields; i++) r.bytes();
  r.uint64(); // serial
  r.uint32(); // type
  for (let i = 0; i < 2; i++) r.bytes(); // key id, principals
  r.uint64();
  r.uint64(); // validity
  for (let i = 0; i < 3; i++) r.bytes(); // critical options, extensions, reserved
  return r.bytes();
}

const itemKey = (keyId: string): string => CERT_JOURNAL_PREFIX + hash("sha256", keyId, "hex");

function fromStored(v: Stored): JournalEntry {
  return {
    keyId: v.key_id,
    kind: v.kind,
    name: v.name,
    roles: v.roles,
    caFingerprints: v.ca_fingerprints,
    validBefore: new Date(v.valid_before),
  };
}

const union = (a: readonly string[], b: readonly string[]): string[] => [...new Set([...a, ...b])].sort();

/** What a lock is matched against for this entry (core/locks/lock.ts). */
export function journalSubject(e: JournalEntry): LockSubject {
  return {
    ...(e.kind === "user" ? { user: e.name } : {}),
    ...(e.kind === "bot" ? { bot: e.name } : {}),
    roles: e.roles,
    keyId: e.keyId,
  };
}

/** What this replica last wrote or read for a key id: the entry holds at least this until `before`. */
interface Known {
  roles: ReadonlySet<string>;
  cas: ReadonlySet<string>;
  before: number;
}

/** Key ids remembered per replica; past it the oldest is forgotten (it costs one read later). */
const MAX_KNOWN = 10_000;

export class CertJournal {
  readonly #backend: Backend;
  readonly #clock: Clock;
  /**
   * Entries only ever grow (roles and CA keys are merged, valid_before only moves later) and are
   * removed only by their expiry, so an entry seen covering a certificate keeps covering it until
   * `before`: a repeat costs no backend read (about 80 us of auth's CPU per certificate).
   */
  readonly #known = new Map<string, Known>();
  /** The last CA key blob's fingerprint: the same key signs nearly every certificate. */
  #lastCa: { blob: Uint8Array; fingerprint: string } | undefined;
  constructor(o: { backend: Backend; clock: Clock }) {
    this.#backend = o.backend;
    this.#clock = o.clock;
  }

  #caFingerprint(c: IssuedCertificate): string {
    const blob = c.caKeyBlob ?? certificateCaKeyBlob(c.certBlob);
    // The signer hands out the same blob object per CA key: usually no byte compare either.
    const last = this.#lastCa;
    if (last && (last.blob === blob || Buffer.compare(last.blob, blob) === 0)) return last.fingerprint;
    const fingerprint = sshFingerprint(blob);
    this.#lastCa = { blob, fingerprint };
    return fingerprint;
  }

  /** Keyed by key id (not the item key): a covered repeat needs no hash of it either. */
  #remember(keyId: string, s: Stored): void {
    this.#known.delete(keyId);
    if (this.#known.size >= MAX_KNOWN) {
      const oldest = this.#known.keys().next().value;
      if (oldest !== undefined) this.#known.delete(oldest);
    }
    this.#known.set(keyId, {
      roles: new Set(s.roles),
      cas: new Set(s.ca_fingerprints),
      before: new Date(s.valid_before).getTime(),
    });
  }

  #covered(keyId: string, before: number, roles: readonly string[], ca: string): boolean {
    const k = this.#known.get(keyId);
    if (!k) return false;
    if (k.before <= this.#clock.now().getTime()) {
      this.#known.delete(keyId);
      return false;
    }
    return k.before >= before && k.cas.has(ca) && roles.every((r) => k.roles.has(r));
  }

  /**
   * Records one signed certificate before it is handed out (so a lock created right after finds it).
   * Certificates sharing a key id (one login session's, one bot generation's) share an entry: the
   * roles and CA keys are merged and the entry lives until the last of them expires.
   */
  async record(c: IssuedCertificate): Promise<void> {
    const until = c.keepUntil && c.keepUntil > c.validBefore ? c.keepUntil : c.validBefore;
    const ca = this.#caFingerprint(c);
    // Checked before anything is built: a session's repeat certificates end here.
    if (this.#covered(c.keyId, until.getTime(), c.roles, ca)) return;
    const fresh: Stored = {
      key_id: c.keyId,
      kind: c.kind,
      name: c.name,
      roles: union([], c.roles),
      ca_fingerprints: [ca],
      valid_before: until.toISOString(),
    };
    const key = itemKey(c.keyId);
    for (let attempt = 0; attempt < 8; attempt++) {
      let cur: Item;
      try {
        cur = await this.#backend.get(key);
      } catch (err) {
        if (!isNotFound(err)) throw err;
        try {
          await this.#backend.create(key, { ...fresh }, { expires: until });
          this.#remember(c.keyId, fresh);
          return;
        } catch (e) {
          if (isAlreadyExists(e)) continue;
          throw e;
        }
      }
      const old = cur.value as unknown as Stored;
      const oldBefore = new Date(old.valid_before);
      const before = oldBefore > until ? oldBefore : until;
      const merged: Stored = {
        ...fresh,
        roles: union(old.roles, fresh.roles),
        ca_fingerprints: union(old.ca_fingerprints, fresh.ca_fingerprints),
        valid_before: before.toISOString(),
      };
      if (JSON.stringify(merged) === JSON.stringify(old)) {
        this.#remember(c.keyId, old);
        return;
      }
      try {
        await this.#backend.compareAndSwap(key, cur.revision, { ...merged }, { expires: before });
        this.#remember(c.keyId, merged);
        return;
      } catch (err) {
        if (!isCompareFailed(err) && !isNotFound(err)) throw err;
      }
    }
    throw new Error("the certificate journal is busy: too many concurrent writes of one key id");
  }

  /** Every entry with a certificate still valid now. */
  async list(): Promise<JournalEntry[]> {
    const now = this.#clock.now();
    const items = await this.#backend.range(CERT_JOURNAL_PREFIX);
    return items.map((i) => fromStored(i.value as unknown as Stored)).filter((e) => e.validBefore > now);
  }
}
