// Where an SSO login may send the browser afterwards: a path on the proxy itself, or a CLI's
// loopback listener (RFC 8252). Auth enforces the same rules when the request is created; the
// proxy checks again before it answers a 302, so a bug on either side is not an open redirect.
import { AccessDeniedError, BadParameterError } from "../../core/errors.ts";

export const DEFAULT_BROWSER_REDIRECT = "/web/";
export const MAX_REDIRECT_LENGTH = 2048;

/**
 * JSON Schema patterns of the same rules (no lookarounds: schemathesis generates from them).
 * Browser: "/" alone or "/" then anything but a second "/" or "\" first; never "\" or control
 * characters anywhere.
 */
export const BROWSER_REDIRECT_PATTERN = "^/([^/\\\\\\u0000-\\u001f\\u007f][^\\\\\\u0000-\\u001f\\u007f]*)?$";
export const LOOPBACK_REDIRECT_PATTERN =
  "^http://(127\\.0\\.0\\.1|\\[::1\\]|localhost):[0-9]{1,5}/[^\\\\#\\u0000-\\u0020\\u007f]*$";

const hasControl = (s: string) => [...s].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f);
const LOOPBACK_HOSTS = new Set(["127.0.0.1", "[::1]", "localhost"]);

/**
 * A browser redirect as a path on `publicOrigin`, percent-encoded (safe for a Location header);
 * throws BadParameterError for anything else: "//host", "/\\host", schemes, control characters.
 */
export function browserRedirect(raw: string | undefined, publicOrigin: string): string {
  if (raw === undefined || raw === "") return DEFAULT_BROWSER_REDIRECT;
  const refuse = (why: string) => new BadParameterError(`redirect_url refused: ${why}`);
  if (raw.length > MAX_REDIRECT_LENGTH) throw refuse(`longer than ${MAX_REDIRECT_LENGTH} characters`);
  if (!raw.startsWith("/") || raw.startsWith("//")) throw refuse("must be a path on this proxy");
  if (raw.includes("\\")) throw refuse("backslash");
  if (hasControl(raw)) throw refuse("control character");
  const url = new URL(raw, publicOrigin);
  if (url.origin !== new URL(publicOrigin).origin) throw refuse("must be a path on this proxy");
  return `${url.pathname}${url.search}${url.hash}`;
}

/**
 * The loopback URL of a CLI (http on 127.0.0.1, [::1] or localhost with an explicit port), as
 * parsed; throws BadParameterError for anything else (look-alikes such as 127.0.0.1.evil.com,
 * user info, https, another host).
 */
export function loopbackRedirect(raw: string): URL {
  const refuse = (why: string) =>
    new BadParameterError(`redirect_url refused: ${why} (a CLI's http://127.0.0.1:<port>/ only)`);
  if (raw.length > MAX_REDIRECT_LENGTH) throw refuse(`longer than ${MAX_REDIRECT_LENGTH} characters`);
  if (hasControl(raw) || raw.includes("\\")) throw refuse("control character or backslash");
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw refuse("not a URL");
  }
  if (url.protocol !== "http:") throw refuse("not http");
  if (!LOOPBACK_HOSTS.has(url.hostname)) throw refuse("not a loopback address");
  if (url.username !== "" || url.password !== "") throw refuse("user info");
  if (url.port === "" || url.hash !== "") throw refuse("no port, or a fragment");
  // The text must say what the parser understood: no tricks that normalise into a loopback.
  if (!raw.startsWith(`http://${url.hostname}:${url.port}/`)) throw refuse("not in canonical form");
  return url;
}

/** For URLs auth hands back for the browser: a loopback one, or a refusal (never a 302 elsewhere). */
export function loopbackOnly(raw: string): string {
  try {
    return loopbackRedirect(raw).href;
  } catch {
    throw new AccessDeniedError("auth answered a redirect that is not a loopback address");
  }
}

/** The identity provider's URL from auth: absolute http(s), nothing else (no javascript:, data:). */
export function providerRedirect(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new AccessDeniedError("auth answered no usable identity provider URL");
  }
  if (url.protocol !== "https:" && url.protocol !== "http:")
    throw new AccessDeniedError("auth answered an identity provider URL that is not http(s)");
  return url.href;
}
