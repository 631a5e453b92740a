// One-time password-reset tokens (docs/cli.md): how a user gets a first password, or a new one,
// without an admin ever choosing it. The token is 256 random bits shown once; the backend keeps
// only sha256(token) with a TTL. Consumption is a compare-and-delete of that item, so exactly one
// caller wins a token. Issuing a new token for a user voids the previous one.
import type { Backend, Item } from "../../core/backend/backend.ts";
import type { Clock } from "../../core/clock.ts";
import { BadParameterError, isNotFound, NotAuthenticatedError } from "../../core/errors.ts";
import type { JsonObject } from "../../core/json.ts";
import { checkNewPassword, setPassword } from "./passwords.ts";
import { hashSecret, randomSecret } from "./sessions.ts";

export const RESET_TOKEN_TTL_MS = 24 * 60 * 60 * 1000;
const TOKEN_PREFIX = "password-resets/";
const BY_USER_PREFIX = "password-reset-users/";
// base64url of 32 bytes; anything else is refused before the backend is asked.
const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;
const INVALID = "password reset token is not valid (expired, used or replaced)";

export interface IssuedReset {
  username: string;
  token: string;
  expires: Date;
}

export class PasswordResets {
  readonly #backend: Backend;
  readonly #clock: Clock;
  readonly #ttlMs: number;

  constructor(deps: { backend: Backend; clock: Clock; ttlMs?: number }) {
    this.#backend = deps.backend;
    this.#clock = deps.clock;
    this.#ttlMs = deps.ttlMs ?? RESET_TOKEN_TTL_MS;
  }

  /** A fresh token for `username`; the user's previous token (if any) stops working. */
  async issue(username: string): Promise<IssuedReset> {
    await this.#voidPrevious(username);
    const token = randomSecret(32);
    const hash = hashSecret(token);
    const expires = new Date(this.#clock.now().getTime() + this.#ttlMs);
    await this.#backend.create(
      TOKEN_PREFIX + hash,
      { username, expires: expires.toISOString() },
      { expires },
    );
    await this.#backend.put(BY_USER_PREFIX + username, { hash }, { expires });
    return { username, token, expires };
  }

  /**
   * Sets the new password if the token holds, and burns the token. The password is checked
   * BEFORE the token is consumed, so a too-short password does not cost the user their token.
   */
  async consume(token: string, newPassword: string): Promise<string> {
    if (typeof token !== "string" || !TOKEN_PATTERN.test(token))
      throw new BadParameterError("password reset token is malformed");
    checkNewPassword(newPassword);
    const key = TOKEN_PREFIX + hashSecret(token);
    let item: Item;
    try {
      item = await this.#backend.get(key);
    } catch (err) {
      if (isNotFound(err)) throw new NotAuthenticatedError(INVALID);
      throw err;
    }
    const v = item.value as JsonObject;
    const username = typeof v["username"] === "string" ? v["username"] : "";
    const expires = Date.parse(String(v["expires"]));
    if (username === "" || !(expires > this.#clock.now().getTime())) throw new NotAuthenticatedError(INVALID);
    try {
      await this.#backend.compareAndDelete(key, item.revision);
    } catch {
      // Someone else consumed it between our read and delete: exactly one wins.
      throw new NotAuthenticatedError(INVALID);
    }
    await this.#backend.delete(BY_USER_PREFIX + username).catch(ignoreNotFound);
    await setPassword(this.#backend, username, newPassword);
    return username;
  }

  /** Voids any pending token of a user (user deleted or a new token issued). */
  async revoke(username: string): Promise<void> {
    await this.#voidPrevious(username);
  }

  async #voidPrevious(username: string): Promise<void> {
    try {
      const prev = await this.#backend.get(BY_USER_PREFIX + username);
      const hash = (prev.value as JsonObject)["hash"];
      if (typeof hash === "string") await this.#backend.delete(TOKEN_PREFIX + hash).catch(ignoreNotFound);
      await this.#backend.delete(BY_USER_PREFIX + username).catch(ignoreNotFound);
    } catch (err) {
      ignoreNotFound(err);
    }
  }
}

function ignoreNotFound(err: unknown): void {
  if (!isNotFound(err)) throw err;
}

/** Rejects a malformed name early with a clear message (the resource schema checks it again). */
export function checkUserName(name: string): string {
  if (typeof name !== "string" || !/^[a-z0-9]([a-z0-9.-]{0,62}[a-z0-9])?$/.test(name)) {
    throw new BadParameterError("user name must be lower-case letters, digits, '.' or '-' (at most 64)");
  }
  return name;
}
