// The generation counter of a bot's credentials, as a pure decision. Auth keeps the current
// generation with the hash of its renewal secret, and the hashes of a few earlier generations.
// A credential of an earlier generation that really was issued (its secret matches) can only be
// presented by someone holding a copy: the real bot has moved on (or the copy did first). That
// is the signal to lock the bot. A guess (secret matching nothing) is just refused, so nobody can
// lock a bot without having held its credentials.
import { sameHash } from "./renewal-credential.ts";

/** How many earlier generations auth remembers to recognise a stale credential. */
export const GENERATION_HISTORY = 8;

export interface GenerationRecord {
  generation: number;
  secret_hash: string;
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
  /** nothing auth issued: refuse, do not lock */
  | { kind: "unknown" };

export function judgeRenewal(
  stored: StoredGenerations,
  presented: { generation: number; secretHash: string },
): RenewalVerdict {
  const { current } = stored;
  if (presented.generation === current.generation) {
    return sameHash(presented.secretHash, current.secret_hash) ? { kind: "current" } : { kind: "unknown" };
  }
  if (presented.generation < current.generation) {
    const old = stored.history.find((h) => h.generation === presented.generation);
    if (old && sameHash(presented.secretHash, old.secret_hash))
      return { kind: "stale", presented: presented.generation, current: current.generation };
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
