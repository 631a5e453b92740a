// Local login: username + password -> session (or "MFA required"). Unknown users and wrong
// passwords get the same error, and both pay one argon2id verification (a dummy hash for unknown
// users), so neither status, body nor timing tells them apart. Failed attempts are counted per
// name (known or not, for the same reason), reserved before the password is checked so parallel
// guesses cannot slip past the count; after `maxFailures` within the window the name is locked
// for `lockoutMs`, its sessions are revoked and `user.locked` is audited.
import type { Backend } from "../../core/backend/backend.ts";
import type { Clock } from "../../core/clock.ts";
import {
  BadParameterError,
  isAlreadyExists,
  isCompareFailed,
  isNotFound,
  LimitExceededError,
  NotAuthenticatedError,
  UnavailableError,
} from "../../core/errors.ts";
import type { JsonObject } from "../../core/json.ts";
import { getPasswordHash, hashPassword, MAX_PASSWORD_LENGTH, verifyPassword } from "./passwords.ts";
import type { SessionScope, SessionStore, WebSession } from "./sessions.ts";
import { hasControlChars } from "./text.ts";
import type { WebAuthnStore } from "./webauthn.ts";

export interface LockoutPolicy {
  /** Failed attempts that lock the name. */
  maxFailures: number;
  /** How long failures are remembered and how long a lock lasts. */
  lockoutMs: number;
}

export const DEFAULT_LOCKOUT: LockoutPolicy = { maxFailures: 5, lockoutMs: 15 * 60 * 1000 };
const FAILURES_PREFIX = "login-failures/";
const LOCK_PREFIX = "login-locks/";
const INVALID = "invalid username or password";

/** Per name: failed attempts in the window, and attempts whose password is being checked now. */
interface Attempts {
  failures: number;
  pending: number;
}

export type LoginResult =
  | { kind: "session"; id: string; session: WebSession }
  | { kind: "mfa"; username: string; mfaToken: string };

export interface LocalLoginDeps {
  backend: Backend;
  clock: Clock;
  sessions: SessionStore;
  webauthn: WebAuthnStore;
  /** May this user log in with a password at all (exists, local_login, not disabled or role-locked)? */
  loginAllowed: (username: string) => boolean;
  /** Do the user's roles require a second factor (role option require_mfa)? */
  requireMfa: (username: string) => boolean;
  lockout?: LockoutPolicy;
}

export class LocalLogin {
  readonly #d: LocalLoginDeps;
  readonly #lockout: LockoutPolicy;
  #dummy: Promise<string> | undefined;

  constructor(deps: LocalLoginDeps) {
    this.#d = deps;
    this.#lockout = deps.lockout ?? DEFAULT_LOCKOUT;
  }

  /** Hash verified for unknown users, so their answer costs the same as a wrong password. */
  #dummyHash(): Promise<string> {
    this.#dummy ??= hashPassword(`dummy-${Math.random()}`);
    return this.#dummy;
  }

  async lockedUntil(username: string): Promise<Date | undefined> {
    try {
      const item = await this.#d.backend.get(LOCK_PREFIX + username);
      return new Date(String((item.value as JsonObject)["until"]));
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  async login(username: string, password: string, clientAddress: string): Promise<LoginResult> {
    if (
      typeof username !== "string" ||
      username.length === 0 ||
      username.length > 253 ||
      hasControlChars(username) ||
      username.includes("/")
    ) {
      throw new BadParameterError("username is required");
    }
    if (typeof password !== "string" || password.length === 0 || password.length > MAX_PASSWORD_LENGTH) {
      throw new BadParameterError("password is required");
    }
    const { backend } = this.#d;
    const fields = { client_address: clientAddress.slice(0, 128), method: "local" };
    const refuseLocked = async (): Promise<never> => {
      await this.#auditFailure(username, fields, "locked");
      throw new LimitExceededError("too many failed logins; try again later");
    };
    if (await this.lockedUntil(username)) await refuseLocked();
    // The attempt takes a slot before the password is checked, atomically: failures so far plus
    // attempts still being checked may not exceed the limit, so parallel guesses cannot all pass
    // the lock check before any failure counts. An attempt refused this way is not a failure and
    // locks nothing (a user's own parallel logins only wait), see docs/auth.md.
    if (
      !(await this.#updateAttempts(username, (a) =>
        a.failures + a.pending < this.#lockout.maxFailures ? { ...a, pending: a.pending + 1 } : undefined,
      ))
    ) {
      await this.#auditFailure(username, fields, "too many attempts");
      throw new LimitExceededError("too many login attempts for this user at once; try again later");
    }
    const allowed = this.#d.loginAllowed(username);
    let matches = false;
    let phc: string | undefined;
    try {
      phc = allowed ? await getPasswordHash(backend, username) : undefined;
      matches = await verifyPassword(password, phc ?? (await this.#dummyHash()));
    } catch (err) {
      await this.#updateAttempts(username, (a) => ({ ...a, pending: Math.max(0, a.pending - 1) }));
      throw err;
    }
    if (!allowed || phc === undefined || !matches) {
      const after = await this.#updateAttempts(username, (a) => ({
        failures: a.failures + 1,
        pending: Math.max(0, a.pending - 1),
      }));
      await this.#auditFailure(username, fields, "invalid credentials");
      if (after && after.failures >= this.#lockout.maxFailures) await this.#lock(username, after.failures);
      throw new NotAuthenticatedError(INVALID);
    }
    // A right password clears the failures (its own slot included).
    await this.#updateAttempts(username, (a) => ({ failures: 0, pending: Math.max(0, a.pending - 1) }));
    if (await this.#d.webauthn.hasDevices(username)) {
      const mfaToken = await this.#d.webauthn.issueMfaToken(username);
      await backend.appendAudit({
        event_type: "user.login",
        user_name: username,
        success: true,
        fields: { ...fields, mfa: "required" },
      });
      return { kind: "mfa", username, mfaToken };
    }
    if (this.#d.requireMfa(username)) {
      // Roles require MFA and there is no device yet: a session that can only enrol one
      // (docs/auth.md, "MFA required by a role"); the user then logs in again with it.
      return this.completeLogin(
        username,
        { ...fields, mfa: "enrollment required" },
        { scope: "mfa_enrollment" },
      );
    }
    return this.completeLogin(username, fields);
  }

  /** Issues the session once every factor passed (also used by the WebAuthn finish step). */
  async completeLogin(
    username: string,
    fields: JsonObject,
    o: { mfa?: boolean; scope?: SessionScope } = {},
  ): Promise<LoginResult> {
    const { id, session } = await this.#d.sessions.create(username, o);
    await this.#d.backend.appendAudit({
      event_type: "user.login",
      user_name: username,
      success: true,
      fields,
    });
    return { kind: "session", id, session };
  }

  async #auditFailure(username: string, fields: JsonObject, reason: string): Promise<void> {
    await this.#d.backend.appendAudit({
      event_type: "user.login",
      user_name: username,
      success: false,
      fields: { ...fields, reason },
    });
  }

  /**
   * Changes the name's attempt record (failures in the window, attempts being checked) with
   * compare-and-swap, so every replica and parallel caller counts. `change` answers the new record,
   * or undefined to leave it as it is; the answer is the record written (undefined: not written).
   */
  async #updateAttempts(
    username: string,
    change: (a: Attempts) => Attempts | undefined,
  ): Promise<Attempts | undefined> {
    const { backend } = this.#d;
    const key = FAILURES_PREFIX + username;
    for (let round = 0; round < 50; round++) {
      let current: { a: Attempts; revision: number } | undefined;
      try {
        const item = await backend.get(key);
        const v = item.value as JsonObject;
        current = {
          a: { failures: Number(v["failures"] ?? v["count"] ?? 0), pending: Number(v["pending"] ?? 0) },
          revision: item.revision,
        };
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
      const next = change(current?.a ?? { failures: 0, pending: 0 });
      if (!next) return undefined;
      const value = { failures: next.failures, pending: next.pending };
      // Each write restarts the window: failures are remembered lockoutMs after the last attempt.
      const opts = { ttlMs: this.#lockout.lockoutMs };
      try {
        if (current) await backend.compareAndSwap(key, current.revision, value, opts);
        else await backend.create(key, value, opts);
        return next;
      } catch (err) {
        if (isCompareFailed(err) || isAlreadyExists(err) || isNotFound(err)) continue;
        throw err;
      }
    }
    throw new UnavailableError("too much contention on the login counter; try again");
  }

  /** Locks the name (once: the replica or caller that creates the lock audits it). */
  async #lock(username: string, failures: number): Promise<void> {
    const { backend, clock } = this.#d;
    const until = new Date(clock.now().getTime() + this.#lockout.lockoutMs);
    try {
      await backend.create(LOCK_PREFIX + username, { until: until.toISOString() }, { expires: until });
    } catch (err) {
      if (isAlreadyExists(err)) return; // another replica or caller locked it first and audited it
      throw err;
    }
    await backend.delete(FAILURES_PREFIX + username).catch(() => undefined);
    const revoked = await this.#d.sessions.revokeAll(username);
    await backend.appendAudit({
      event_type: "user.locked",
      user_name: username,
      success: true,
      fields: {
        reason: "too many failed logins",
        failures,
        locked_until: until.toISOString(),
        sessions_revoked: revoked,
      },
    });
  }
}
