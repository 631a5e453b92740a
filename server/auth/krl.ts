// ExportKrl: the OpenSSH KRL (core/certs/krl.ts) of every certificate auth issued that a lock in
// force covers, for agentless nodes whose sshd reads it through RevokedKeys (docs/locks.md
// "Agentless nodes (KRL)"). Key ids come from the issued-certificate journal (cert-journal.ts);
// a key-id lock is listed even without a journal entry. Each key id is listed under every user CA
// key auth trusts now, so a rotation's old and new keys are both covered.
import { createHash } from "node:crypto";
import { encodeKrl } from "../../core/certs/krl.ts";
import { parseSshPublicKey } from "../../core/certs/ssh-keys.ts";
import type { Clock } from "../../core/clock.ts";
import { AccessDeniedError } from "../../core/errors.ts";
import { type LockRecord, lockCovering } from "../../core/locks/lock.ts";
import type { ExportKrlResponse } from "../../proto/generated/svc/v1/ExportKrlResponse.ts";
import type { PublicKeys } from "../../proto/generated/svc/v1/PublicKeys.ts";
import type { Caller } from "./caller.ts";
import { type CertJournal, type JournalEntry, journalSubject } from "./cert-journal.ts";

/**
 * The last KRL, reused while the locks and CA keys are the same and it is young. Every node with a
 * KRL file asks right after a lock changes; without this each of them made auth scan the whole
 * journal. Reuse is sound while the locks stay the same: a locked identity gets no new
 * certificate, so the covered entries only expire. The age bound catches a certificate whose
 * issuance began just before a lock and was journaled just after the KRL was built.
 */
export class KrlCache {
  readonly maxAgeMs: number;
  #entry: { key: string; at: number; value: Promise<ExportKrlResponse> } | undefined;
  constructor(maxAgeMs = 30_000) {
    this.maxAgeMs = maxAgeMs;
  }

  get(key: string, nowMs: number, make: () => Promise<ExportKrlResponse>): Promise<ExportKrlResponse> {
    const e = this.#entry;
    if (e && e.key === key && nowMs - e.at < this.maxAgeMs) return e.value;
    const value = make();
    this.#entry = { key, at: nowMs, value };
    value.catch(() => {
      if (this.#entry?.value === value) this.#entry = undefined;
    });
    return value;
  }
}

export interface ExportKrlDeps {
  journal: Pick<CertJournal, "list">;
  /** reuse across calls (one per auth); none: every call builds the KRL */
  cache?: KrlCache;
  /** the locks in force now */
  locks: () => readonly LockRecord[] | Promise<readonly LockRecord[]>;
  publicKeys: () => PublicKeys | Promise<PublicKeys>;
  clock: Clock;
  /** whether an agent id names a joined node that runs an agent (the agent caller check) */
  isNode: (agentId: string) => Promise<boolean>;
}

/** The key ids a KRL must list: journal entries a lock covers, and every key-id lock. */
export function revokedKeyIds(
  entries: readonly JournalEntry[],
  locks: readonly LockRecord[],
  now: Date,
): string[] {
  const inForce = locks.filter((l) => l.expires === undefined || l.expires > now);
  const ids = new Set<string>();
  for (const l of inForce) if ("keyId" in l.target) ids.add(l.target.keyId);
  for (const e of entries) if (lockCovering(inForce, journalSubject(e), now)) ids.add(e.keyId);
  return [...ids].sort();
}

/** Nodes (their own agent identity), proxies ("proxy:<name>") and admins (already checked by RBAC). */
async function admit(caller: Caller, isNode: (agentId: string) => Promise<boolean>): Promise<void> {
  if (caller.kind === "user") return;
  if (caller.kind === "agent") {
    if (caller.agentId.startsWith("proxy:")) return;
    if (!caller.agentId.includes(":") && (await isNode(caller.agentId))) return;
  }
  throw new AccessDeniedError("ExportKrl serves nodes, proxies and admins");
}

export async function exportKrl(caller: Caller, d: ExportKrlDeps): Promise<ExportKrlResponse> {
  await admit(caller, d.isNode);
  const now = d.clock.now();
  const [locks, pub] = await Promise.all([d.locks(), d.publicKeys()]);
  const caKeys = [...new Set((pub.user_ca_ssh_public_keys ?? []).map((l) => l.trim()))].sort();
  const build = async (): Promise<ExportKrlResponse> =>
    buildKrl(revokedKeyIds(await d.journal.list(), locks, now), caKeys, now);
  if (!d.cache) return build();
  const key = JSON.stringify({
    locks: locks.map((l) => [l.name, l.target, l.expires?.toISOString() ?? ""]).sort(),
    caKeys,
  });
  return d.cache.get(key, now.getTime(), build);
}

function buildKrl(keyIds: string[], caKeys: string[], now: Date): ExportKrlResponse {
  const caBlobs = caKeys.map((l) => parseSshPublicKey(l).blob);
  // What the KRL says, without its date: equal digests mean the same revocations.
  const digest = createHash("sha256")
    .update(JSON.stringify({ ca: caKeys.map((l) => l.split(/\s+/).slice(0, 2).join(" ")), keyIds }))
    .digest("hex");
  const krl = encodeKrl({
    // Seconds of generation as the version: it grows from one export to the next.
    version: BigInt(Math.floor(now.getTime() / 1000)),
    generatedAt: now,
    comment: "svc: certificates covered by locks",
    certificates: keyIds.length === 0 ? [] : caBlobs.map((caKeyBlob) => ({ caKeyBlob, keyIds })),
  });
  return { krl, digest };
}
