// The generation counter of a bot's credentials, as a pure decision. Auth keeps the current
// generation with the hash of its renewal secret, and the hashes of a few earlier generations.
// A credential of an earlier generation that really was issued (its secret matches) can only be
// presented by someone holding a copy: the real bot has moved on (or the copy did first). That
// is the signal to lock the bot. A guess (secret matching nothing) is just refused, so nobody can
// lock a bot without having held its credentials.
// One exception keeps a crash from locking an honest bot: a renewal committed whose answer was
// lost is retried with the previous credential AND the same new public keys; that retry gets the
// current generation issued again (docs/machine-identity.md "Retry of a lost answer").
import { sameHash } from "./renewal-credential.ts";

/** How many earlier generations auth remembers to recognise a stale credential. */
export const GENERATION_HISTORY = 8;
/**
 * How often one generation may be issued again to a retry. Each re-issue puts the superseded
 * record in the history, so this stays well below GENERATION_HISTORY.
 */
export const MAX_REISSUES = 3;

export interface GenerationRecord {
  generation: number;
  secret_hash: string;
  /** renewals only: the hash of the credential this generation was renewed from */
  renewed_from?: string;
  /** renewals only: fingerprint of the public keys certified with this generation */
  keys_fingerprint?: string;
  /** how often this generation was issued again to a retry of its renewal */
  reissues?: number;
}

export interface StoredGenerations {
  current: GenerationRecord;
  /** earlier generations, newest first, at most GENERATION_HISTORY */
  history: readonly GenerationRecord[];
}

export type RenewalVerdict =
  /** the current credential: renew (if the compare-and-swap wins) */
  | { kind: "current" }
  /** an earlier credential that auth did issue: lock the bot */
  | { kind: "stale"; presented: number; current: number }
  /** the credential this generation was renewed from, with the same new keys: issue it again */
  | { kind: "retry" }
  /** nothing auth issued: refuse, do not lock */
  | { kind: "unknown" };

export function judgeRenewal(
  stored: StoredGenerations,
  presented: { generation: number; secretHash: string; keysFingerprint?: string },
): RenewalVerdict {
  const { current } = stored;
  if (presented.generation === current.generation && sameHash(presented.secretHash, current.secret_hash))
    return { kind: "current" };
  // The renewal to the current generation, asked again for the same keys: its answer was lost.
  // Other keys (or too many retries) fall through to the history: a copy, lock.
  if (
    presented.generation === current.generation - 1 &&
    current.renewed_from !== undefined &&
    current.keys_fingerprint !== undefined &&
    presented.keysFingerprint !== undefined &&
    sameHash(presented.secretHash, current.renewed_from) &&
    sameHash(presented.keysFingerprint, current.keys_fingerprint) &&
    (current.reissues ?? 0) < MAX_REISSUES
  )
    return { kind: "retry" };
  // An earlier generation, or a superseded record of this one (issued before a re-issue).
  if (presented.generation <= current.generation) {
    const old = stored.history.find(
      (h) => h.generation === presented.generation && sameHash(presented.secretHash, h.secret_hash),
    );
    if (old) return { kind: "stale", presented: presented.generation, current: current.generation };
  }
  return { kind: "unknown" };
}

/** The generations after a successful renewal to `next`. */
export function advanceGenerations(stored: StoredGenerations, next: GenerationRecord): StoredGenerations {
  return {
    current: next,
    history: [stored.current, ...stored.history].slice(0, GENERATION_HISTORY),
  };
}
