// The two cookies of an app host (docs/apps.md) and the small parsing around them. Both are
// __Host- cookies (Secure, Path=/, no Domain): a sibling app host cannot plant or read them, and
// they never reach the app (stripped from the forwarded Cookie header).
import { randomBytes, timingSafeEqual } from "node:crypto";

/** The app session: its value is the session id auth gave on the code exchange. */
export const APP_SESSION_COOKIE = "__Host-svc_app_session";
/** The login state: binds /x-svc/app-login to the browser that was sent to the launch page. */
export const APP_STATE_COOKIE = "__Host-svc_app_state";
/** How long a login started on the app host may take (seconds). */
export const STATE_MAX_AGE_SECONDS = 300;

const OURS = new Set([APP_SESSION_COOKIE, APP_STATE_COOKIE]);

/** Ids, codes and states are 32 random bytes, base64url: anything else is refused unread. */
export const TOKEN = /^[A-Za-z0-9_-]{43}$/;

export const newState = (): string => randomBytes(32).toString("base64url");

/** Splits a Cookie header into name/value pairs (order kept; values as sent). */
function pairs(header: string | undefined): Array<[string, string, string]> {
  if (!header) return [];
  const out: Array<[string, string, string]> = [];
  for (const raw of header.split(";")) {
    const part = raw.trim();
    if (part === "") continue;
    const eq = part.indexOf("=");
    const name = (eq < 0 ? part : part.slice(0, eq)).trim();
    const value = eq < 0 ? "" : part.slice(eq + 1).trim();
    out.push([name, value, part]);
  }
  return out;
}

/** The value of cookie `name` (the first one sent), if any. */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const [n, v] of pairs(header)) if (n === name) return v;
  return undefined;
}

/** The Cookie header without our cookies (undefined when nothing is left): what the app gets. */
export function withoutOurCookies(header: string | undefined): string | undefined {
  const kept = pairs(header)
    .filter(([n]) => !OURS.has(n))
    .map(([, , part]) => part);
  return kept.length > 0 ? kept.join("; ") : undefined;
}

/** Whether a Set-Cookie line from the app names one of our cookies (dropped: the host's are ours). */
export function setsOurCookie(line: string): boolean {
  const eq = line.indexOf("=");
  return OURS.has((eq < 0 ? line : line.slice(0, eq)).trim());
}

const attrs = (maxAge: number): string => `Path=/; Secure; HttpOnly; SameSite=Lax; Max-Age=${maxAge}`;

export const sessionCookie = (sessionId: string, maxAgeSeconds: number): string =>
  `${APP_SESSION_COOKIE}=${sessionId}; ${attrs(Math.max(0, Math.floor(maxAgeSeconds)))}`;
export const stateCookie = (state: string): string =>
  `${APP_STATE_COOKIE}=${state}; ${attrs(STATE_MAX_AGE_SECONDS)}`;
export const clearSessionCookie = (): string => `${APP_SESSION_COOKIE}=; ${attrs(0)}`;
export const clearStateCookie = (): string => `${APP_STATE_COOKIE}=; ${attrs(0)}`;

/** Constant-time equality of two state strings (unequal lengths are unequal, at once). */
export function sameState(a: string | undefined, b: string | undefined): boolean {
  if (!a || !b) return false;
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * Where to go after the login: a path on this host only. Anything that could leave it
 * ("//evil", "/\evil", a scheme, CR/LF) becomes "/".
 */
export function safePath(path: string | undefined): string {
  if (!path || path.length > 8192) return "/";
  if (!path.startsWith("/") || path.startsWith("//") || path.startsWith("/\\")) return "/";
  if (/[\r\n\t\0]/.test(path)) return "/";
  // A browser treats "\" as "/" in special URLs: "/.\\evil" resolves on the host, but refuse any.
  if (path.includes("\\")) return "/";
  return path;
}
