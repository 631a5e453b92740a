// What an app sees of the user (docs/apps.md): the Svc-Jwt-Assertion (ES256 by the App CA, served
// as a JWKS at <public URL>/workload-identity/app-jwt-jwks.json) and the App's rewrite.headers
// with their templates filled in.
import { randomUUID } from "node:crypto";
import { type JwtKey, signJwt } from "../../../core/ca/jwt.ts";
import type { Clock } from "../../../core/clock.ts";
import { NotFoundError, UnavailableError } from "../../../core/errors.ts";
import type { JsonValue } from "../../../core/json.ts";
import type { Traits } from "../../../core/rbac/index.ts";
import type { AppHeader } from "../../../core/resources/index.ts";

export const ASSERTION_TTL_SECONDS = 120;

export interface AssertionInput {
  /** iss: the proxy's public URL (where the JWKS is served). */
  issuer: string;
  /** aud: the App's spec.uri. */
  audience: string;
  username: string;
  roles: readonly string[];
  traits: Traits;
  /** The app session's expiry: the assertion never outlives it. */
  sessionExpires: Date;
}

/** Signs a fresh assertion; its expiry is 120 s from now or the session's end, whichever is first. */
export async function signAssertion(
  key: JwtKey | undefined,
  a: AssertionInput,
  clock: Clock,
): Promise<{ jwt: string; expires: Date }> {
  if (!key) throw new UnavailableError("the App CA has no signing key");
  const nowS = Math.floor(clock.now().getTime() / 1000);
  const ttl = Math.min(ASSERTION_TTL_SECONDS, Math.floor(a.sessionExpires.getTime() / 1000) - nowS);
  if (ttl < 1) throw new NotFoundError("unknown or expired app session");
  const traits: Record<string, JsonValue> = {};
  for (const [k, v] of Object.entries(a.traits)) traits[k] = [...v];
  const jwt = await signJwt(
    key,
    { username: a.username, roles: [...a.roles], traits },
    {
      subject: a.username,
      audience: a.audience,
      issuer: a.issuer,
      ttlSeconds: ttl,
      clock,
      jti: randomUUID(),
    },
  );
  return { jwt, expires: new Date((nowS + ttl) * 1000) };
}

const EXPRESSION = /\{\{\s*([^{}]*?)\s*\}\}/g;
const REFERENCE = /^(internal|external)\.([A-Za-z0-9_][A-Za-z0-9_.:/-]*)$/;
/** What may go into a header value: visible ASCII, space and tab (no CR/LF, no controls). */
const HEADER_VALUE = /^[\t\x20-\x7e]*$/;

/**
 * rewrite.headers for one user: `{{user}}`, `{{internal.<trait>}}` and `{{external.<trait>}}`
 * replaced (several values joined by ","). A header naming a trait the user lacks, an unknown
 * expression, or a value that would not be a valid header value is left out: the app then sees
 * no claim rather than an empty or forged one. (core/rbac/template.ts expands logins, one
 * expression, yielding login names only; header values need several expressions and any text.)
 */
export function fillHeaders(
  headers: readonly AppHeader[],
  user: { username: string; internal: Traits; external: Traits },
): { name: string; value: string }[] {
  const out: { name: string; value: string }[] = [];
  for (const h of headers) {
    let missing = false;
    const value = h.value.replace(EXPRESSION, (_all, expr: string) => {
      if (expr === "user") return user.username;
      const ref = REFERENCE.exec(expr);
      const traits = ref?.[1] === "internal" ? user.internal : user.external;
      const values = ref && Object.hasOwn(traits, ref[2] as string) ? (traits[ref[2] as string] ?? []) : [];
      if (values.length === 0) missing = true;
      return values.join(",");
    });
    if (missing || value.includes("{{") || value.includes("}}") || !HEADER_VALUE.test(value)) continue;
    out.push({ name: h.name, value });
  }
  return out;
}
