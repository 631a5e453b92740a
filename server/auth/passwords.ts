// Password hashing: argon2id through Node's built-in crypto.argon2 (no native addon).
// Parameters (docs/auth.md): memory 19 MiB, 2 passes, parallelism 1, 16-byte salt, 32-byte tag —
// the OWASP minimum profile for argon2id. Stored in PHC string form so parameters can change
// later without invalidating existing hashes.
import { argon2, randomBytes, timingSafeEqual } from "node:crypto";
import type { Backend } from "../../core/backend/backend.ts";
import { BadParameterError, isNotFound } from "../../core/errors.ts";
import type { JsonObject } from "../../core/json.ts";

export interface Argon2Params {
  memoryKiB: number;
  passes: number;
  parallelism: number;
  tagLength: number;
}

export const ARGON2_PARAMS: Argon2Params = { memoryKiB: 19456, passes: 2, parallelism: 1, tagLength: 32 };
const PASSWORD_PREFIX = "passwords/";
export const MIN_PASSWORD_LENGTH = 12;
export const MAX_PASSWORD_LENGTH = 1024;

function derive(password: string, salt: Buffer, p: Argon2Params): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    argon2(
      "argon2id",
      {
        message: password,
        nonce: salt,
        memory: p.memoryKiB,
        passes: p.passes,
        parallelism: p.parallelism,
        tagLength: p.tagLength,
      },
      (err, out) => (err ? reject(err) : resolve(out)),
    );
  });
}

export async function hashPassword(password: string, p: Argon2Params = ARGON2_PARAMS): Promise<string> {
  const salt = randomBytes(16);
  const tag = await derive(password, salt, p);
  return `$argon2id$v=19$m=${p.memoryKiB},t=${p.passes},p=${p.parallelism}$${salt.toString("base64url")}$${tag.toString("base64url")}`;
}

const PHC = /^\$argon2id\$v=19\$m=(\d+),t=(\d+),p=(\d+)\$([A-Za-z0-9_-]+)\$([A-Za-z0-9_-]+)$/;

/** Constant-time check of a password against a stored PHC string. */
export async function verifyPassword(password: string, phc: string): Promise<boolean> {
  const m = PHC.exec(phc);
  if (!m) return false;
  const tag = Buffer.from(m[5] ?? "", "base64url");
  const p: Argon2Params = {
    memoryKiB: Number(m[1]),
    passes: Number(m[2]),
    parallelism: Number(m[3]),
    tagLength: tag.length,
  };
  const got = await derive(password, Buffer.from(m[4] ?? "", "base64url"), p);
  return got.length === tag.length && timingSafeEqual(got, tag);
}

export function checkNewPassword(password: string): void {
  if (typeof password !== "string" || password.length < MIN_PASSWORD_LENGTH) {
    throw new BadParameterError(`a password needs at least ${MIN_PASSWORD_LENGTH} characters`);
  }
  if (password.length > MAX_PASSWORD_LENGTH) {
    throw new BadParameterError(`a password has at most ${MAX_PASSWORD_LENGTH} characters`);
  }
}

/** Sets (or replaces) a user's password hash in the state backend. Used by admin tooling. */
export async function setPassword(backend: Backend, username: string, password: string): Promise<void> {
  checkNewPassword(password);
  await backend.put(PASSWORD_PREFIX + username, { phc: await hashPassword(password) });
}

/** The stored hash, or undefined when the user has no password. */
export async function getPasswordHash(backend: Backend, username: string): Promise<string | undefined> {
  try {
    const item = await backend.get(PASSWORD_PREFIX + username);
    const v = item.value as JsonObject;
    return typeof v["phc"] === "string" ? v["phc"] : undefined;
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

export async function deletePassword(backend: Backend, username: string): Promise<void> {
  await backend.delete(PASSWORD_PREFIX + username).catch((err: unknown) => {
    if (!isNotFound(err)) throw err;
  });
}
