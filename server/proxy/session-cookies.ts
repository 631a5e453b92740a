// The two cookies a browser session carries, __Host-svc_session and __Host-svc_csrf (names in
// credentials.ts). Both Secure and SameSite=Strict on Path=/ with no Domain, as the __Host- prefix
// requires, so a sibling subdomain cannot plant or shadow them; only the session cookie is
// HttpOnly, because the page must read the CSRF cookie to echo it in X-CSRF-Token.
import type { FastifyReply } from "fastify";
import { CSRF_COOKIE, csrfTokenFor, SESSION_COOKIE } from "./credentials.ts";

const base = { secure: true, sameSite: "strict" as const, path: "/" };

export function setSessionCookies(reply: FastifyReply, sessionId: string, maxAgeSeconds: number): void {
  reply.setCookie(SESSION_COOKIE, sessionId, { ...base, httpOnly: true, maxAge: maxAgeSeconds });
  reply.setCookie(CSRF_COOKIE, csrfTokenFor(sessionId), { ...base, httpOnly: false, maxAge: maxAgeSeconds });
}

export function clearSessionCookies(reply: FastifyReply): void {
  reply.clearCookie(SESSION_COOKIE, { ...base, httpOnly: true });
  reply.clearCookie(CSRF_COOKIE, { ...base, httpOnly: false });
}
