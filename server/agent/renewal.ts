// When the agent renews its certificates (docs/agent.md "Renewal"): at about 2/3 of their
// lifetime, with jitter so agents that joined together do not renew together; on failure again
// after a capped exponential backoff, but never past expiry. An expired identity cannot renew
// (auth refuses the handshake): the agent says to join again with a new token.
import type { Logger } from "pino";
import { type Clock, systemClock } from "../../core/clock.ts";
import { hasCode } from "../../core/errors.ts";
import { expiredIdentityMessage, identityValidity } from "./credentials.ts";
import type { AgentIdentity } from "./identity.ts";

export interface RenewalPolicy {
  /** share of the lifetime after which to renew; default 2/3 */
  at: number;
  /** +- share of the lifetime the renewal time is moved by at random; default 0.05 */
  jitter: number;
  /** first retry delay; default 10 s */
  retryInitialMs: number;
  /** retry delay cap; default 10 min */
  retryMaxMs: number;
}

export const DEFAULT_RENEWAL_POLICY: RenewalPolicy = {
  at: 2 / 3,
  jitter: 0.05,
  retryInitialMs: 10_000,
  retryMaxMs: 10 * 60_000,
};

/** Milliseconds from `now` to the planned renewal of a certificate valid [validAfter, validBefore). */
export function renewalDelay(
  validity: { validAfter: Date; validBefore: Date },
  now: Date,
  policy: RenewalPolicy = DEFAULT_RENEWAL_POLICY,
  random: () => number = Math.random,
): number {
  const start = validity.validAfter.getTime();
  const life = validity.validBefore.getTime() - start;
  const offset = (random() * 2 - 1) * policy.jitter * life;
  return Math.max(0, start + life * policy.at + offset - now.getTime());
}

/**
 * Milliseconds before retry `attempt` (0 = the first retry): doubling from retryInitialMs up to
 * retryMaxMs, "full jitter" in its upper half, and never later than shortly before `expires` (a
 * last try while the certificate is still valid). Undefined when there is no time left.
 */
export function retryDelay(
  attempt: number,
  now: Date,
  expires: Date,
  policy: RenewalPolicy = DEFAULT_RENEWAL_POLICY,
  random: () => number = Math.random,
): number | undefined {
  const left = expires.getTime() - now.getTime();
  if (left <= 0) return undefined;
  const cap = Math.min(policy.retryMaxMs, policy.retryInitialMs * 2 ** Math.min(attempt, 30));
  const wait = cap / 2 + random() * (cap / 2);
  // The last try lands a little before expiry (a tenth of what is left, at most a minute).
  const lastChance = left - Math.min(60_000, left / 10);
  return Math.max(0, Math.min(wait, lastChance));
}

export interface RenewalLoopOptions {
  /** the identity in force now */
  identity: () => AgentIdentity;
  /** renews (credentials.ts AgentCredentials.renew: RPC, atomic save, live swap) */
  renew: () => Promise<unknown>;
  dataDir: string;
  logger: Logger;
  clock?: Clock;
  policy?: Partial<RenewalPolicy>;
  random?: () => number;
}

/** Timers: schedules renewals from the identity in force, retries with backoff. */
export class RenewalLoop {
  readonly #o: RenewalLoopOptions;
  readonly #clock: Clock;
  readonly #policy: RenewalPolicy;
  #timer: NodeJS.Timeout | undefined;
  #attempt = 0;
  #running: Promise<void> | undefined;
  #stopped = false;
  #next: Date | undefined;

  constructor(o: RenewalLoopOptions) {
    this.#o = o;
    this.#clock = o.clock ?? systemClock;
    this.#policy = { ...DEFAULT_RENEWAL_POLICY, ...o.policy };
  }

  start(): void {
    this.#schedule(this.#planned());
  }

  /** When the next renewal (or retry) is due; undefined when none is planned. */
  next(): Date | undefined {
    return this.#next;
  }

  /** Renews now (also for a CA rotation, rotation-follow.ts); rejects when it fails. */
  renewNow(reason: string): Promise<void> {
    this.#o.logger.info({ reason }, "renewing the node's certificates");
    this.#running ??= this.#o
      .renew()
      .then(
        () => {
          this.#attempt = 0;
          const v = identityValidity(this.#o.identity());
          this.#o.logger.info({ expires: v.validBefore.toISOString() }, "node certificates renewed");
          this.#schedule(this.#planned());
        },
        (err: unknown) => {
          this.#failed(err);
          throw err;
        },
      )
      .finally(() => {
        this.#running = undefined;
      });
    return this.#running;
  }

  stop(): void {
    this.#stopped = true;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#next = undefined;
  }

  #planned(): number {
    const random = this.#o.random ?? Math.random;
    return renewalDelay(identityValidity(this.#o.identity()), this.#clock.now(), this.#policy, random);
  }

  #failed(err: unknown): void {
    const message = err instanceof Error ? err.message : String(err);
    const expires = identityValidity(this.#o.identity()).validBefore;
    const wait = retryDelay(this.#attempt++, this.#clock.now(), expires, this.#policy, this.#o.random);
    if (wait === undefined) {
      this.#o.logger.error(
        { err: message },
        `certificate renewal failed and ${expiredIdentityMessage(this.#o.dataDir, expires)}`,
      );
      this.stop();
      return;
    }
    // A removed node never renews again: say so, and stop asking.
    if (hasCode(err, "not_authenticated") && /removed/.test(message)) {
      this.#o.logger.error({ err: message }, "certificate renewal refused: this node has been removed");
      this.stop();
      return;
    }
    this.#o.logger.warn(
      { err: message, retryInSeconds: Math.round(wait / 1000), expires: expires.toISOString() },
      "certificate renewal failed; the current certificates stay in use until they expire",
    );
    this.#schedule(wait);
  }

  #schedule(ms: number): void {
    if (this.#stopped) return;
    if (this.#timer) clearTimeout(this.#timer);
    // setTimeout holds at most ~24.8 days; longer waits re-plan on wake-up.
    const wait = Math.min(ms, 2 ** 31 - 1);
    this.#next = new Date(this.#clock.now().getTime() + ms);
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      if (wait < ms) {
        this.#schedule(ms - wait);
        return;
      }
      this.renewNow("scheduled").catch(() => undefined);
    }, wait);
    this.#timer.unref();
  }
}
