// Reading the web credential and the CSRF proof. Pure functions over headers and cookies.
import { createHash, timingSafeEqual } from "node:crypto";
import { NotAuthenticatedError } from "../../core/errors.ts";

// The spec's svc_session, with the __Host- prefix: browsers accept such a cookie only Secure,
// with Path=/ and without Domain, set by this host itself, so a sibling subdomain cannot plant
// one (session fixation). Unprefixed names are not read at all, or planting them would still work.
export const SESSION_COOKIE = "__Host-svc_session";
export const CSRF_COOKIE = "__Host-svc_csrf";
export const CSRF_HEADER = "x-csrf-token";

export interface Credential {
  sessionId: string;
  /** cookie credentials need CSRF proof on state-changing requests; bearer ones do not */
  via: "bearer" | "cookie";
}

/** Session ids are opaque to the proxy; this only bounds what we forward to auth. */
const plausibleId = /^[A-Za-z0-9_-]{16,256}$/;

/**
 * Bearer wins over the cookie: a cross-site page cannot set the Authorization header, so a
 * request carrying it is not a CSRF candidate. A malformed header is an error, not a fallback.
 */
export function readCredential(
  authorization: string | undefined,
  cookies: Record<string, string | undefined>,
): Credential | undefined {
  if (authorization !== undefined) {
    const m = /^Bearer ([^\s]+)$/i.exec(authorization.trim());
    if (!m?.[1] || !plausibleId.test(m[1])) throw new NotAuthenticatedError("malformed Authorization header");
    return { sessionId: m[1], via: "bearer" };
  }
  const fromCookie = cookies[SESSION_COOKIE];
  if (fromCookie === undefined || fromCookie === "") return undefined;
  if (!plausibleId.test(fromCookie)) throw new NotAuthenticatedError("malformed session cookie");
  return { sessionId: fromCookie, via: "cookie" };
}

/**
 * The CSRF token is derived from the session id, so any replica can check it without state and a
 * token planted by another site (cookie tossing) cannot match the victim's session. The hash
 * does not reveal the session id, so the token may live in a script-readable cookie.
 */
export function csrfTokenFor(sessionId: string): string {
  return createHash("sha256").update("svc-csrf-v1\0").update(sessionId).digest("base64url");
}

function sameString(a: string, b: string): boolean {
  const ab = Buffer.from(a);
  const bb = Buffer.from(b);
  return ab.length === bb.length && timingSafeEqual(ab, bb);
}

export type CsrfVerdict = { ok: true } | { ok: false; reason: string };

/**
 * Cookie-authenticated state-changing requests must show (1) an Origin, or failing that a
 * Referer, from our public origin and (2) the X-CSRF-Token header equal to the token of the
 * session (the value of the svc_csrf cookie).
 */
export function checkCsrf(input: {
  sessionId: string;
  publicOrigin: string;
  origin: string | undefined;
  referer: string | undefined;
  headerToken: string | undefined;
}): CsrfVerdict {
  const source = input.origin ?? originOf(input.referer);
  if (source === undefined) return { ok: false, reason: "missing Origin" };
  if (source !== input.publicOrigin) return { ok: false, reason: "cross-origin request" };
  if (input.headerToken === undefined || input.headerToken === "") {
    return { ok: false, reason: "missing CSRF token" };
  }
  if (!sameString(input.headerToken, csrfTokenFor(input.sessionId))) {
    return { ok: false, reason: "CSRF token does not match the session" };
  }
  return { ok: true };
}

function originOf(url: string | undefined): string | undefined {
  if (url === undefined) return undefined;
  try {
    return new URL(url).origin;
  } catch {
    return undefined;
  }
}

/** Origin check alone, for login-like routes that have no session yet (login CSRF). */
export function originAllowed(origin: string | undefined, publicOrigin: string): boolean {
  return origin === undefined || origin === publicOrigin;
}
