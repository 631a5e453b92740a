// JWT signing keys with a `kid` (RFC 7638 thumbprint), their public JWKS, and signing with jose.
import { createPublicKey, generateKeyPairSync, type KeyObject } from "node:crypto";
import { calculateJwkThumbprint, type JWK, SignJWT } from "jose";
import type { Clock } from "../clock.ts";
import { BadParameterError } from "../errors.ts";
import type { JsonObject, JsonValue } from "../json.ts";

export const JWT_ALG = "ES256";

export interface JwtKey {
  kid: string;
  alg: typeof JWT_ALG;
  privateKey: KeyObject;
}

export async function generateJwtKey(): Promise<JwtKey> {
  const { privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  return jwtKeyFrom(privateKey);
}

export async function jwtKeyFrom(privateKey: KeyObject): Promise<JwtKey> {
  const pub = createPublicKey(privateKey).export({ format: "jwk" }) as JWK;
  return { kid: await calculateJwkThumbprint(pub, "sha256"), alg: JWT_ALG, privateKey };
}

/** The public half as a JWK with kid/alg/use set. */
export function publicJwk(key: JwtKey, use = "sig"): JsonObject {
  const j = createPublicKey(key.privateKey).export({ format: "jwk" });
  return {
    kty: String(j.kty),
    crv: String(j.crv),
    x: String(j.x),
    y: String(j.y),
    kid: key.kid,
    alg: key.alg,
    use,
  };
}

export function jwks(keys: readonly JwtKey[]): { keys: JsonObject[] } {
  return { keys: keys.map((k) => publicJwk(k)) };
}

export interface JwtSignOptions {
  subject: string;
  audience: string | string[];
  ttlSeconds: number;
  clock: Clock;
  issuer?: string;
  /** upper bound for ttlSeconds */
  maxTtlSeconds?: number;
  jti?: string;
}

/** Signs claims with `key` (header: alg, kid, typ JWT); iat/nbf/exp come from the clock. */
export async function signJwt(
  key: JwtKey,
  claims: Record<string, JsonValue>,
  o: JwtSignOptions,
): Promise<string> {
  const max = o.maxTtlSeconds ?? 3600;
  if (!Number.isInteger(o.ttlSeconds) || o.ttlSeconds <= 0 || o.ttlSeconds > max) {
    throw new BadParameterError(`JWT ttl must be 1..${max} seconds`);
  }
  const aud = Array.isArray(o.audience) ? o.audience : [o.audience];
  if (aud.length === 0 || aud.some((a) => typeof a !== "string" || a.length === 0))
    throw new BadParameterError("JWT audience is required");
  if (!o.subject) throw new BadParameterError("JWT subject is required");
  const now = Math.floor(o.clock.now().getTime() / 1000);
  let jwt = new SignJWT(claims)
    .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: "JWT" })
    .setSubject(o.subject)
    .setAudience(aud.length === 1 ? (aud[0] as string) : aud)
    .setIssuedAt(now)
    .setNotBefore(now)
    .setExpirationTime(now + o.ttlSeconds);
  if (o.issuer) jwt = jwt.setIssuer(o.issuer);
  if (o.jti) jwt = jwt.setJti(o.jti);
  return jwt.sign(key.privateKey);
}
