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
    // The attempt is counted before the password is checked, atomically: parallel guesses each
    // take their own number, so the (max+1)th is refused unverified however many run at once.
    const attempt = await this.#reserveAttempt(username);
    if (attempt > this.#lockout.maxFailures) {
      await this.#lock(username, attempt - 1);
      await refuseLocked();
    }
    const allowed = this.#d.loginAllowed(username);
    const phc = allowed ? await getPasswordHash(backend, username) : undefined;
    const matches = await verifyPassword(password, phc ?? (await this.#dummyHash()));
    if (!allowed || phc === undefined || !matches) {
      await this.#auditFailure(username, fields, "invalid credentials");
      if (attempt >= this.#lockout.maxFailures) await this.#lock(username, attempt);
      throw new NotAuthenticatedError(INVALID);
    }
    await backend.delete(FAILURES_PREFIX + username).catch((err: unknown) => {
      if (!isNotFound(err)) throw err;
    });
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

  /** Counts one more attempt for the name (compare-and-swap: every replica and caller counts). */
  async #reserveAttempt(username: string): Promise<number> {
    const { backend } = this.#d;
    const key = FAILURES_PREFIX + username;
    for (let attempt = 0; attempt < 50; attempt++) {
      try {
        const item = await backend.get(key);
        const count = Number((item.value as JsonObject)["count"]) + 1;
        await backend.compareAndSwap(key, item.revision, { count }, { expires: item.expires });
        return count;
      } catch (err) {
        if (isNotFound(err)) {
          try {
            await backend.create(key, { count: 1 }, { ttlMs: this.#lockout.lockoutMs });
            return 1;
          } catch (e) {
            if (isAlreadyExists(e)) continue;
            throw e;
          }
        }
        if (isCompareFailed(err)) continue;
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
