// Local login: username + password -> session (or "MFA required"). Unknown users and wrong
// passwords get the same error, and both pay one argon2id verification (a dummy hash for unknown
// users), so neither status, body nor timing tells them apart. Failed attempts are throttled per
// client address and per name (known or not, for the same reason) with growing waits
// (login-throttle.ts, docs/auth.md "Login throttling"): never a hard lock, never a revoked session,
// and an address the user logged in from before is not held back by others' failures for the name.
import type { Backend } from "../../core/backend/backend.ts";
import type { Clock } from "../../core/clock.ts";
import {
  AccessDeniedError,
  BadParameterError,
  LimitExceededError,
  NotAuthenticatedError,
} from "../../core/errors.ts";
import type { JsonObject } from "../../core/json.ts";
import { LoginThrottle, type ThrottlePolicy } from "./login-throttle.ts";
import { getPasswordHash, hashPassword, MAX_PASSWORD_LENGTH, verifyPassword } from "./passwords.ts";
import type { CreateSessionOptions, SessionStore, WebSession } from "./sessions.ts";
import { hasControlChars } from "./text.ts";
import type { WebAuthnStore } from "./webauthn.ts";

/** The `lockout` option of auth (config `auth.lockout`): see ThrottlePolicy. */
export type LockoutPolicy = ThrottlePolicy;
export { DEFAULT_THROTTLE as DEFAULT_LOCKOUT } from "./login-throttle.ts";

const INVALID = "invalid username or password";

/** The host of a gRPC peer string ("ipv4:1.2.3.4:5", "[::1]:5", "1.2.3.4:5"). */
export function peerHost(peer: string): string {
  const p = peer.replace(/^ipv[46]:/, "");
  const v6 = /^\[([^\]]+)\]:\d+$/.exec(p);
  if (v6?.[1]) return v6[1];
  const v4 = /^([^:]+):\d+$/.exec(p);
  return v4?.[1] ?? p;
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
  /** "locked: <message>" when a lock covers the user (docs/locks.md); asked once the password matched. */
  lockedOut?: (username: string) => string | undefined;
  /** Do the user's roles require a second factor (role option require_mfa)? */
  requireMfa: (username: string) => boolean;
  lockout?: LockoutPolicy;
}

export class LocalLogin {
  readonly #d: LocalLoginDeps;
  readonly #throttle: LoginThrottle;
  #dummy: Promise<string> | undefined;

  constructor(deps: LocalLoginDeps) {
    this.#d = deps;
    this.#throttle = new LoginThrottle(deps.backend, deps.clock, deps.lockout, async (e) => {
      await deps.backend.appendAudit({ ...e, success: true });
    });
  }

  /** Hash verified for unknown users, so their answer costs the same as a wrong password. */
  #dummyHash(): Promise<string> {
    this.#dummy ??= hashPassword(`dummy-${Math.random()}`);
    return this.#dummy;
  }

  /**
   * Until when attempts for the name wait (from clients not known for it), if they do now. Not a
   * lock: a client that logged in as the user before is not held by it.
   */
  async lockedUntil(username: string): Promise<Date | undefined> {
    return this.#throttle.waitingUntil("user", username);
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
    const address = clientAddress.slice(0, 128);
    const fields = { client_address: address, method: "local" };
    const ctx = { user_name: username, client_address: address };
    // Slots on the address counter and (unless this address logged in as the user before) the
    // name counter, taken before the password is checked, atomically (compare-and-swap), so
    // parallel guesses cannot all pass before any failure counts.
    const admission = await this.#throttle.admit(username, address, ctx);
    if (!admission.ok) {
      const seconds = Math.max(1, Math.ceil(admission.retryAfterMs / 1000));
      await this.#auditFailure(
        username,
        { ...fields, throttled: admission.scope, retry_after_s: seconds },
        admission.busy ? "too many attempts" : "throttled",
      );
      throw new LimitExceededError(
        admission.busy
          ? "too many login attempts at once; try again shortly"
          : `too many failed logins; try again in ${seconds} s`,
        { retryAfterSeconds: seconds },
      );
    }
    const settle = (outcome: "success" | "failure" | "error") =>
      this.#throttle.settle(username, address, admission.taken, outcome, ctx);
    const allowed = this.#d.loginAllowed(username);
    let matches = false;
    let phc: string | undefined;
    try {
      phc = allowed ? await getPasswordHash(backend, username) : undefined;
      matches = await verifyPassword(password, phc ?? (await this.#dummyHash()));
    } catch (err) {
      await settle("error");
      throw err;
    }
    if (!allowed || phc === undefined || !matches) {
      await settle("failure");
      await this.#auditFailure(username, fields, "invalid credentials");
      throw new NotAuthenticatedError(INVALID);
    }
    await settle("success");
    // After the password check, so the refusal tells nothing to someone without it.
    const locked = this.#d.lockedOut?.(username);
    if (locked !== undefined) {
      await this.#auditFailure(username, fields, "locked");
      throw new AccessDeniedError(locked);
    }
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

  /**
   * Issues the session once every factor passed (also used by the WebAuthn finish step and by
   * single sign-on, which passes its connector and session cap).
   */
  async completeLogin(
    username: string,
    fields: JsonObject,
    o: CreateSessionOptions = {},
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
}
