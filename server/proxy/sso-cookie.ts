// The SSO binding cookie, __Host-svc_sso: a random value set in the browser that starts an SSO
// login; auth keeps only its SHA-256 with the pending request and the callback must show the same
// cookie, so a login finished in another browser (login CSRF, a leaked callback URL) is refused.
// SameSite=None because the SAML provider answers with a cross-site POST, which would not carry a
// Lax or Strict cookie; the value grants nothing on its own (it is not a session).
import { createHash, randomBytes } from "node:crypto";
import type { FastifyReply, FastifyRequest } from "fastify";

export const SSO_COOKIE = "__Host-svc_sso";
/** As long as auth keeps the pending request. */
export const SSO_COOKIE_MAX_AGE = 600;

const attributes = { secure: true, httpOnly: true, sameSite: "none" as const, path: "/" };

/** A fresh binding: the cookie's value, and the hash auth keeps. */
export function newBinding(): { value: string; hash: string } {
  const value = randomBytes(32).toString("base64url");
  return { value, hash: bindingHash(value) };
}

/** Set once auth has accepted the binding: a refused start leaves the browser's cookies alone. */
export function setBindingCookie(reply: FastifyReply, value: string): void {
  reply.setCookie(SSO_COOKIE, value, { ...attributes, maxAge: SSO_COOKIE_MAX_AGE });
}

export function clearBindingCookie(reply: FastifyReply): void {
  reply.clearCookie(SSO_COOKIE, attributes);
}

/** The hash of the cookie the request carries; undefined when it has none (or a malformed one). */
export function requestBindingHash(request: FastifyRequest): string | undefined {
  const value = request.cookies[SSO_COOKIE];
  if (value === undefined || !/^[A-Za-z0-9_-]{43}$/.test(value)) return undefined;
  return bindingHash(value);
}

export function bindingHash(value: string): string {
  return createHash("sha256").update(value).digest("hex");
}
