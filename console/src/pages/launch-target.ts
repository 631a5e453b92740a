// Where the launch page may send the browser (pure functions, no DOM: unit-tested in Node).

/** Where the proxy's app login lives on every app host (the app never sees /x-svc/ paths). */
export const APP_LOGIN_PATH = "/x-svc/app-login";

/**
 * The address the launch page goes to: the server's login_url with the code, the state and the
 * path added, or undefined when login_url is not an https app-login address on the host the user
 * asked for. The host comes from the server's answer only, never from the launch page's address.
 */
export function appLoginTarget(
  loginUrl: string,
  requestedHost: string,
  params: { code: string; state: string; path: string },
): string | undefined {
  let url: URL;
  try {
    url = new URL(loginUrl);
  } catch {
    return undefined;
  }
  if (url.protocol !== "https:" || url.pathname !== APP_LOGIN_PATH) return undefined;
  if (url.username || url.password || url.search || url.hash) return undefined;
  if (url.hostname !== requestedHost.toLowerCase().replace(/:\d+$/, "")) return undefined;
  url.searchParams.set("code", params.code);
  url.searchParams.set("state", params.state);
  url.searchParams.set("path", params.path);
  return url.href;
}

/** The path to land on; the app host checks it again, anything odd becomes "/". */
export function safeAppPath(path: string | null): string {
  if (!path?.startsWith("/") || path.startsWith("//") || path.startsWith("/\\")) return "/";
  return /[\r\n]/.test(path) ? "/" : path;
}
