// Failed-login throttling (docs/auth.md, "Login throttling"): counters per login name and per
// client address, each with a few free failures and then exponentially growing waits, capped.
// No hard lock and no session revocation, so failures cannot be used to shut a user out; a client
// address that has logged in as a user before skips that user's name counter (its own address
// counter still applies). Counters change by compare-and-swap and an attempt reserves its slot
// before the password is checked, so parallel guesses on any number of replicas cannot exceed them.
import { createHash, randomBytes } from "node:crypto";
import type { Backend } from "../../core/backend/backend.ts";
import type { Clock } from "../../core/clock.ts";
import { isAlreadyExists, isCompareFailed, isNotFound, UnavailableError } from "../../core/errors.ts";
import type { JsonObject } from "../../core/json.ts";

export interface ThrottlePolicy {
  /** Failures for one name (from clients not known for it) before waits start. */
  maxFailures: number;
  /** The longest wait between attempts (the cap of the doubling). */
  lockoutMs: number;
  /** Failures from one client address (any names) before waits start (default 20). */
  perAddressFailures?: number;
  /** The first wait; each further failure doubles it (default 1 s). */
  baseDelayMs?: number;
  /** Failures are forgotten this long after the last one (default 24 h). */
  windowMs?: number;
  /** How long a successful login makes its address known for that user (default 30 days). */
  knownClientMs?: number;
}

export const DEFAULT_THROTTLE: Required<ThrottlePolicy> = {
  maxFailures: 5,
  lockoutMs: 15 * 60_000,
  perAddressFailures: 20,
  baseDelayMs: 1000,
  windowMs: 24 * 3_600_000,
  knownClientMs: 30 * 24 * 3_600_000,
};

export type ThrottleScope = "user" | "address";

/** One counter: failures in the window, attempts being checked now, and the next allowed time. */
interface Counter {
  failures: number;
  /** attempts being checked now: a token per slot and when it was taken (ms since the epoch) */
  slots: Record<string, number>;
  /** ms since the epoch before which no attempt is checked (0: none) */
  until: number;
  /** ms since the epoch of the last failure */
  last: number;
}

const EMPTY: Counter = { failures: 0, slots: {}, until: 0, last: 0 };
/**
 * A password check takes well under a second (and the proxy gives up after 10 s); a slot older
 * than this belongs to a caller that died (a killed replica), so it no longer counts.
 */
const SLOT_STALE_MS = 30_000;
const inFlight = (c: Counter): number => Object.keys(c.slots).length;
const without = (slots: Record<string, number>, token: string): Record<string, number> => {
  const { [token]: _gone, ...rest } = slots;
  return rest;
};
const COUNTER_PREFIX = "login-throttle/";
const KNOWN_PREFIX = "login-known/";

export interface ThrottleEvent {
  event_type: "login.throttled" | "login.released";
  user_name: string;
  fields: JsonObject;
}

export type Reservation = { ok: true; token: string } | { ok: false; retryAfterMs: number; busy: boolean };

/** A slot held on one counter: scope, subject, slot token. */
export type Slot = readonly [ThrottleScope, string, string];

export type Admission =
  | { ok: true; taken: Slot[] }
  | { ok: false; scope: ThrottleScope; retryAfterMs: number; busy: boolean };

const hashOf = (s: string): string => createHash("sha256").update(s).digest("hex").slice(0, 32);

export class LoginThrottle {
  readonly policy: Required<ThrottlePolicy>;
  readonly #backend: Backend;
  readonly #clock: Clock;
  readonly #audit: (e: ThrottleEvent) => Promise<void>;

  constructor(
    backend: Backend,
    clock: Clock,
    policy: ThrottlePolicy | undefined,
    audit: (e: ThrottleEvent) => Promise<void>,
  ) {
    this.#backend = backend;
    this.#clock = clock;
    this.#audit = audit;
    this.policy = { ...DEFAULT_THROTTLE, ...policy };
  }

  #free(scope: ThrottleScope): number {
    return scope === "user" ? this.policy.maxFailures : this.policy.perAddressFailures;
  }

  /** Has `address` logged in as `username` before (within knownClientMs)? */
  async isKnown(username: string, address: string): Promise<boolean> {
    if (address === "") return false;
    try {
      await this.#backend.get(`${KNOWN_PREFIX}${username}/${hashOf(address)}`);
      return true;
    } catch (err) {
      if (isNotFound(err)) return false;
      throw err;
    }
  }

  /** Remembers a successful login's address for the user (only a hash of it is stored). */
  async remember(username: string, address: string): Promise<void> {
    if (address === "") return;
    await this.#backend.put(
      `${KNOWN_PREFIX}${username}/${hashOf(address)}`,
      { at: this.#clock.now().toISOString() },
      { ttlMs: this.policy.knownClientMs },
    );
  }

  /**
   * Admits one login attempt of `username` from `address`: a slot on the address counter and, if
   * the address has not logged in as the user before, on the name counter. On refusal no slot is
   * kept. Settle an admitted attempt with `settle` once the password was checked.
   */
  async admit(username: string, address: string, ctx: JsonObject): Promise<Admission> {
    const counters: Array<[ThrottleScope, string]> = [];
    if (address !== "") counters.push(["address", address]);
    if (!(await this.isKnown(username, address))) counters.push(["user", username]);
    const taken: Slot[] = [];
    for (const [scope, subject] of counters) {
      const r = await this.reserve(scope, subject, ctx);
      if (!r.ok) {
        for (const [s, subj, token] of taken) await this.release(s, subj, token, ctx);
        return { ok: false, scope, retryAfterMs: r.retryAfterMs, busy: r.busy };
      }
      taken.push([scope, subject, r.token]);
    }
    return { ok: true, taken };
  }

  /** The outcome of an admitted attempt: a right or wrong password, or no answer (an error). */
  async settle(
    username: string,
    address: string,
    taken: readonly Slot[],
    outcome: "success" | "failure" | "error",
    ctx: JsonObject,
  ): Promise<void> {
    for (const [scope, subject, token] of taken) {
      if (outcome === "success") await this.succeed(scope, subject, token, ctx);
      else if (outcome === "failure") await this.fail(scope, subject, token, ctx);
      else await this.release(scope, subject, token, ctx);
    }
    if (outcome === "success") await this.remember(username, address);
  }

  /** When the counter next allows an attempt, if it is waiting now. */
  async waitingUntil(scope: ThrottleScope, subject: string): Promise<Date | undefined> {
    const c = await this.#read(scope, subject);
    const now = this.#clock.now().getTime();
    if (!c || this.#expired(c.c, now) || c.c.until <= now) return undefined;
    return new Date(c.c.until);
  }

  /**
   * Takes a slot for one attempt, atomically: refused while the counter waits, when free failures
   * plus attempts in flight reach the limit, and (once waits started) while another is in flight.
   */
  async reserve(scope: ThrottleScope, subject: string, ctx: JsonObject): Promise<Reservation> {
    const token = randomBytes(9).toString("base64url");
    let refusal: Reservation = { ok: true, token };
    await this.#update(scope, subject, ctx, (c, now) => {
      if (c.until > now) {
        refusal = { ok: false, retryAfterMs: c.until - now, busy: false };
        return undefined;
      }
      if (c.failures + inFlight(c) < this.#free(scope) || inFlight(c) === 0)
        return { ...c, slots: { ...c.slots, [token]: now } };
      refusal = { ok: false, retryAfterMs: this.policy.baseDelayMs, busy: true };
      return undefined;
    });
    return refusal;
  }

  /** Gives a reserved slot back without counting anything (the check itself failed). */
  async release(scope: ThrottleScope, subject: string, token: string, ctx: JsonObject): Promise<void> {
    await this.#update(scope, subject, ctx, (c) => ({ ...c, slots: without(c.slots, token) }));
  }

  /** Counts a failure for a reserved slot; from the limit on, each one doubles the wait. */
  async fail(scope: ThrottleScope, subject: string, token: string, ctx: JsonObject): Promise<void> {
    const free = this.#free(scope);
    const after = await this.#update(scope, subject, ctx, (c, now) => {
      const failures = c.failures + 1;
      const waitMs =
        failures < free
          ? 0
          : Math.min(this.policy.baseDelayMs * 2 ** Math.min(failures - free, 40), this.policy.lockoutMs);
      return {
        ...c,
        failures,
        slots: without(c.slots, token),
        until: waitMs ? now + waitMs : 0,
        last: now,
      };
    });
    // Audited once per episode: when the failure that starts the waits is written.
    if (after && after.failures === free) {
      await this.#audit({
        event_type: "login.throttled",
        user_name: String(ctx["user_name"] ?? ""),
        fields: {
          ...ctx,
          scope,
          failures: after.failures,
          retry_after_ms: after.until - after.last,
          until: new Date(after.until).toISOString(),
        },
      });
    }
  }

  /** A right password for a reserved slot: the slot is returned and, for a name, failures cleared. */
  async succeed(scope: ThrottleScope, subject: string, token: string, ctx: JsonObject): Promise<void> {
    let was: Counter | undefined;
    await this.#update(scope, subject, ctx, (c) => {
      was = c;
      // An address keeps its failures: logging in to one's own account must not reset a guesser.
      const slots = without(c.slots, token);
      return scope === "user" ? { ...EMPTY, slots } : { ...c, slots };
    });
    const before = was as Counter | undefined;
    if (scope === "user" && before && before.failures >= this.#free(scope)) {
      await this.#released(scope, ctx, "successful login", before.failures);
    }
  }

  #expired(c: Counter, now: number): boolean {
    return c.last > 0 && now - c.last > this.policy.windowMs && c.until <= now;
  }

  async #released(scope: ThrottleScope, ctx: JsonObject, reason: string, failures: number): Promise<void> {
    await this.#audit({
      event_type: "login.released",
      user_name: String(ctx["user_name"] ?? ""),
      fields: { ...ctx, scope, reason, failures },
    });
  }

  async #read(scope: ThrottleScope, subject: string): Promise<{ c: Counter; revision: number } | undefined> {
    try {
      const item = await this.#backend.get(`${COUNTER_PREFIX}${scope}/${subject}`);
      const v = item.value as JsonObject;
      const now = this.#clock.now().getTime();
      const slots: Record<string, number> = {};
      const stored = v["slots"];
      if (stored && typeof stored === "object" && !Array.isArray(stored)) {
        for (const [token, at] of Object.entries(stored)) {
          if (typeof at === "number" && now - at < SLOT_STALE_MS) slots[token] = at;
        }
      }
      return {
        c: {
          failures: Number(v["failures"] ?? 0),
          slots,
          until: Number(v["until"] ?? 0),
          last: Number(v["last"] ?? 0),
        },
        revision: item.revision,
      };
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  /**
   * Changes one counter with compare-and-swap, so every replica and parallel caller counts.
   * `change` answers the new counter, or undefined to leave it; the answer is the counter written.
   * A counter whose window passed starts again from zero (and its release is audited then).
   */
  async #update(
    scope: ThrottleScope,
    subject: string,
    ctx: JsonObject,
    change: (c: Counter, now: number) => Counter | undefined,
  ): Promise<Counter | undefined> {
    const key = `${COUNTER_PREFIX}${scope}/${subject}`;
    for (let round = 0; round < 50; round++) {
      const current = await this.#read(scope, subject);
      const now = this.#clock.now().getTime();
      const stale = current !== undefined && this.#expired(current.c, now);
      const base = stale || !current ? { ...EMPTY, slots: current?.c.slots ?? {} } : current.c;
      const next = change(base, now);
      if (!next) return undefined;
      // Kept past the window so that a release by time can still be audited at the next attempt.
      const opts = { ttlMs: this.policy.windowMs + this.policy.lockoutMs };
      try {
        if (current) await this.#backend.compareAndSwap(key, current.revision, { ...next }, opts);
        else await this.#backend.create(key, { ...next }, opts);
      } catch (err) {
        if (isCompareFailed(err) || isAlreadyExists(err) || isNotFound(err)) continue;
        throw err;
      }
      if (stale && current && current.c.failures >= this.#free(scope)) {
        await this.#released(scope, ctx, "window passed", current.c.failures);
      }
      return next;
    }
    throw new UnavailableError("too much contention on the login counter; try again");
  }
}
