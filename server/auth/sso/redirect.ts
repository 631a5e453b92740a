// Where a browser or CLI may be sent after an SSO login: never anywhere an attacker chooses (no
// open redirect). A browser goes to a path on the proxy itself; a CLI to its own loopback listener
// (RFC 8252 section 7.3). Auth enforces this at CreateSSOAuthRequest; the proxy checks again.
import { BadParameterError } from "../../../core/errors.ts";
import { hasControlChars } from "../text.ts";

export const DEFAULT_BROWSER_REDIRECT = "/web/";
const MAX_REDIRECT = 2048;

/** A path on the proxy: "/" then anything but a second "/" or "\" at the start, no scheme, no controls. */
export function checkBrowserRedirect(url: string): string {
  if (url === "") return DEFAULT_BROWSER_REDIRECT;
  if (
    url.length > MAX_REDIRECT ||
    !url.startsWith("/") ||
    url.startsWith("//") ||
    url.includes("\\") ||
    hasControlChars(url) ||
    // A path never needs these; browsers would read "/%2F/evil" or "/\t/evil" oddly.
    /^\/(%2f|%5c)/i.test(url)
  ) {
    throw new BadParameterError('client_redirect_url must be a path on this proxy ("/web/...")');
  }
  // Resolved against a placeholder origin, the path must stay on that origin.
  const resolved = new URL(url, "https://proxy.invalid");
  if (resolved.origin !== "https://proxy.invalid")
    throw new BadParameterError('client_redirect_url must be a path on this proxy ("/web/...")');
  return url;
}

const LOOPBACK_HOSTS = new Set(["127.0.0.1", "[::1]", "localhost"]);

/** http://127.0.0.1:<port>/<path>, http://[::1]:<port>/<path> or http://localhost:<port>/<path>. */
export function checkCliRedirect(url: string): string {
  const refuse = () =>
    new BadParameterError(
      "client_redirect_url must be a loopback URL: http://127.0.0.1:<port>/..., http://[::1]:<port>/... or http://localhost:<port>/...",
    );
  if (url.length === 0 || url.length > MAX_REDIRECT || hasControlChars(url) || url.includes("\\"))
    throw refuse();
  // Parsed by the WHATWG URL parser (what browsers use), then required to read back exactly the
  // same: no user info, no fragment, an explicit port, one of the loopback hosts.
  const m = /^http:\/\/(127\.0\.0\.1|\[::1\]|localhost):([0-9]{1,5})(\/[^#]*)?$/.exec(url);
  if (!m) throw refuse();
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw refuse();
  }
  const port = Number(m[2]);
  if (
    parsed.protocol !== "http:" ||
    !LOOPBACK_HOSTS.has(parsed.hostname) ||
    parsed.username !== "" ||
    parsed.password !== "" ||
    parsed.hash !== "" ||
    port < 1 ||
    port > 65535 ||
    parsed.port !== String(port)
  ) {
    throw refuse();
  }
  return url;
}

/** The loopback URL with the one-time code added as the `code` query parameter. */
export function withCode(loopbackUrl: string, code: string): string {
  const u = new URL(loopbackUrl);
  u.searchParams.set("code", code);
  return u.toString();
}
