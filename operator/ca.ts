// CA Secrets: created once when absent, never overwritten (the store's createOnce refuses, and the
// Secrets are immutable), never logged. The operator reconciles nothing else before they exist.
import { CA_NAMES, CertificateAuthorities } from "../core/ca/authorities.ts";
import type { CaKeyStore } from "../core/ca/key-store.ts";
import type { Clock } from "../core/clock.ts";

export interface EnsureCaOptions {
  clusterName: string;
  trustDomain: string;
  clock: Clock;
}

/** Names of the CAs that are not in `store` yet. */
export async function missingCas(store: CaKeyStore): Promise<string[]> {
  const names = Object.values(CA_NAMES);
  const present = await Promise.all(names.map(async (n) => (await store.get(n)) !== undefined));
  return names.filter((_, i) => !present[i]);
}

/**
 * Creates every missing CA in `store` and returns the names it found missing. Existing CAs are
 * only read (and checked to load); a CA another process created first is kept, never replaced.
 * The loaded key material is dropped here: the operator signs nothing.
 */
export async function ensureCas(store: CaKeyStore, o: EnsureCaOptions): Promise<string[]> {
  const missing = await missingCas(store);
  await CertificateAuthorities.loadOrCreate(store, o);
  return missing;
}
