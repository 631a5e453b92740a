// The bot's renewal credential: "<generation>.<secret>". The generation travels inside it so a
// copy of stolen credentials is recognisable when used after the real bot renewed (or the
// reverse): its generation is then behind auth's. Auth stores only sha256(secret).
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { BadParameterError } from "../errors.ts";

const CREDENTIAL = /^([1-9][0-9]{0,14})\.([A-Za-z0-9_-]{43})$/;

export interface RenewalCredential {
  generation: number;
  secret: string;
}

/** sha256(secret) hex: what the state backend keeps. */
export function renewalSecretHash(secret: string): string {
  return createHash("sha256").update(secret, "utf8").digest("hex");
}

/** A fresh credential for `generation` (256 random bits). */
export function newRenewalCredential(generation: number): { token: string; secretHash: string } {
  if (!Number.isSafeInteger(generation) || generation < 1)
    throw new BadParameterError("generation must be a positive integer");
  const secret = randomBytes(32).toString("base64url");
  return { token: `${generation}.${secret}`, secretHash: renewalSecretHash(secret) };
}

export function parseRenewalCredential(token: string): RenewalCredential {
  const m = typeof token === "string" ? CREDENTIAL.exec(token) : null;
  if (!m?.[1] || !m[2]) throw new BadParameterError("renewal_token is malformed");
  return { generation: Number(m[1]), secret: m[2] };
}

/** Constant-time comparison of two sha256 hex digests. */
export function sameHash(a: string, b: string): boolean {
  const x = Buffer.from(a, "utf8");
  const y = Buffer.from(b, "utf8");
  return x.length === y.length && timingSafeEqual(x, y);
}
