// When a bot renews: at a fraction of its certificates' lifetime, a little earlier by a random
// jitter (so a fleet of bots bootstrapped together does not renew together), and, while auth is
// unreachable, after capped exponential backoff with jitter. Pure: randomness is passed in.

export interface RenewalTimingOptions {
  issuedAtMs: number;
  expiresAtMs: number;
  nowMs: number;
  /** 0.1..0.9: renew once this share of the lifetime has passed */
  fraction: number;
  /** share of the renewal point that may be taken off at random; default 0.1 */
  jitter?: number;
  /** uniform in [0, 1); default Math.random */
  random?: () => number;
}

/** Milliseconds from now until the renewal is due (0 when it is already due). */
export function renewalDelayMs(o: RenewalTimingOptions): number {
  const lifetime = Math.max(0, o.expiresAtMs - o.issuedAtMs);
  const fraction = Math.min(0.9, Math.max(0.1, o.fraction));
  const jitter = Math.min(0.5, Math.max(0, o.jitter ?? 0.1));
  const r = (o.random ?? Math.random)();
  const due = o.issuedAtMs + lifetime * fraction * (1 - jitter * r);
  return Math.max(0, Math.round(due - o.nowMs));
}

export interface BackoffOptions {
  /** first delay; default 1 s */
  baseMs?: number;
  /** cap; default 60 s */
  maxMs?: number;
  random?: () => number;
}

/** Delay before retry number `attempt` (0-based): half fixed, half random, doubling up to the cap. */
export function backoffDelayMs(attempt: number, o: BackoffOptions = {}): number {
  const base = o.baseMs ?? 1000;
  const max = o.maxMs ?? 60_000;
  const ceiling = Math.min(max, base * 2 ** Math.min(Math.max(0, attempt), 30));
  const r = (o.random ?? Math.random)();
  return Math.round(ceiling / 2 + (ceiling / 2) * r);
}
