// What `svc apps` keeps and how it reaches an app host. App sessions live next to the profile, one
// file per App ($SVC_HOME/apps/<name>.json, 0600: the cookie is a bearer credential). The app
// host is reached at the proxy's address from the profile with TLS server name and Host set to the
// app host, so the app's name need not resolve on this machine.
import { createHash } from "node:crypto";
import { mkdir, readdir, readFile, rm } from "node:fs/promises";
import { request } from "node:https";
import { join } from "node:path";
import { writeFileAtomic } from "../core/atomic-file.ts";
import { SvcError, UnavailableError } from "../core/errors.ts";
// The app host's cookies (docs/apps.md): the names the proxy sets, from its own module.
import { APP_SESSION_COOKIE, APP_STATE_COOKIE } from "../server/proxy/apps/cookies.ts";
import { svcHome } from "./profile.ts";
import { errorOfResponse, type ProxyTarget, readBody, splitProxyAddress } from "./proxy-client.ts";

export { APP_SESSION_COOKIE, APP_STATE_COOKIE };

export interface StoredAppSession {
  app: string;
  public_addr: string;
  public_url: string;
  /** the cookie value; a credential */
  session: string;
  /** RFC 3339 */
  expires_at: string;
  /** sha256 hex of the web session it came from: a new `svc login` makes it stale */
  web_session_hash: string;
}

export const appsDir = (env: NodeJS.ProcessEnv = process.env): string => join(svcHome(env), "apps");
const fileOf = (name: string, env?: NodeJS.ProcessEnv): string => join(appsDir(env), `${name}.json`);
/** The CA the profile trusts, as a file for tools like curl (written at `svc apps login`). */
export const caFileOf = (env?: NodeJS.ProcessEnv): string => join(appsDir(env), "ca.pem");

export const webSessionHash = (sessionId: string): string =>
  createHash("sha256").update(sessionId).digest("hex");

export async function saveAppSession(s: StoredAppSession, caPem: string | undefined): Promise<void> {
  await mkdir(appsDir(), { recursive: true, mode: 0o700 });
  await writeFileAtomic(fileOf(s.app), `${JSON.stringify(s, null, 2)}\n`, 0o600);
  if (caPem) await writeFileAtomic(caFileOf(), caPem, 0o644);
}

export async function loadAppSession(name: string): Promise<StoredAppSession | undefined> {
  let text: string;
  try {
    text = await readFile(fileOf(name), "utf8");
  } catch (err) {
    if ((err as { code?: unknown }).code === "ENOENT") return undefined;
    throw err;
  }
  const v: unknown = JSON.parse(text);
  if (typeof v !== "object" || v === null || typeof (v as StoredAppSession).session !== "string") {
    return undefined;
  }
  return v as StoredAppSession;
}

/** The stored sessions of one App, or of every App. */
export async function storedAppSessions(name?: string): Promise<StoredAppSession[]> {
  const names =
    name !== undefined
      ? [name]
      : (await readdir(appsDir()).catch(() => [] as string[]))
          .filter((f) => f.endsWith(".json"))
          .map((f) => f.slice(0, -".json".length));
  const found: StoredAppSession[] = [];
  for (const n of names) {
    const s = await loadAppSession(n);
    if (s) found.push(s);
  }
  return found;
}

export async function removeAppSession(name: string): Promise<void> {
  await rm(fileOf(name), { force: true });
}

/**
 * POST /x-svc/logout on the app host with the stored cookie: the proxy replica answering drops its
 * cached grant at once (others re-check with auth within 30 s). Best effort: the session is
 * already ended at auth when this runs; a failure here only delays the proxy noticing.
 */
export async function logoutAtAppHost(target: ProxyTarget, s: StoredAppSession): Promise<boolean> {
  try {
    const r = await appHostRequest(target, "POST", new URL("/x-svc/logout", s.public_url), {
      cookie: `${APP_SESSION_COOKIE}=${s.session}`,
    });
    return r.status === 303;
  } catch {
    return false;
  }
}

export interface AppLoginAnswer {
  status: number;
  location?: string;
  setCookies: string[];
  body: unknown;
}

/**
 * A bodiless request to `url` (on the app host) through the proxy address of `target`: TLS server
 * name and Host are the URL's host, the certificate is checked against that name with the
 * profile's trust.
 */
export function appHostRequest(
  target: ProxyTarget,
  method: "GET" | "POST",
  url: URL,
  headers: Record<string, string>,
  timeoutMs = 30_000,
): Promise<AppLoginAnswer> {
  const { host, port } = splitProxyAddress(target.proxy);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host,
        port,
        method,
        path: `${url.pathname}${url.search}`,
        servername: url.hostname,
        headers: { ...headers, host: url.host, accept: "application/json" },
        agent: false,
        ...(target.insecure ? { rejectUnauthorized: false } : { ca: target.caPem ?? [] }),
        timeout: timeoutMs,
      },
      (res) => {
        readBody(res).then(
          (body) =>
            resolve({
              status: res.statusCode ?? 0,
              ...(res.headers.location ? { location: res.headers.location } : {}),
              setCookies: res.headers["set-cookie"] ?? [],
              body,
            }),
          reject,
        );
      },
    );
    req.on("timeout", () =>
      req.destroy(new UnavailableError(`${url.host} (through ${target.proxy}) did not answer in time`)),
    );
    req.on("error", (err: Error & { code?: string }) => {
      if (err instanceof UnavailableError) reject(err);
      else
        reject(
          new UnavailableError(
            `cannot reach ${url.host} through the proxy at ${target.proxy}: ${err.message}`,
          ),
        );
    });
    req.end();
  });
}

/** The value and lifetime of cookie `name` in Set-Cookie lines. */
export function cookieFrom(
  setCookies: readonly string[],
  name: string,
): { value: string; maxAgeSeconds?: number } | undefined {
  for (const line of setCookies) {
    const [pair, ...attrs] = line.split(";").map((p) => p.trim());
    if (!pair?.startsWith(`${name}=`)) continue;
    const value = pair.slice(name.length + 1);
    const maxAge = attrs.find((a) => a.toLowerCase().startsWith("max-age="));
    const seconds = maxAge === undefined ? undefined : Number(maxAge.slice("max-age=".length));
    return {
      value,
      ...(seconds !== undefined && Number.isFinite(seconds) ? { maxAgeSeconds: seconds } : {}),
    };
  }
  return undefined;
}

/**
 * Trades a one-time code at the app host's login path, as the browser would after the launch
 * page, with a state of our own in the state cookie; the answer's Set-Cookie holds the session.
 */
export async function exchangeAtAppHost(
  target: ProxyTarget,
  loginUrl: string,
  code: string,
  state: string,
): Promise<{ session: string; maxAgeSeconds?: number }> {
  const url = new URL(loginUrl);
  url.search = new URLSearchParams({ code, state, path: "/" }).toString();
  const r = await appHostRequest(target, "GET", url, { cookie: `${APP_STATE_COOKIE}=${state}` });
  if (r.status < 300 || r.status >= 400) throw errorOfResponse(r);
  const cookie = cookieFrom(r.setCookies, APP_SESSION_COOKIE);
  if (!cookie || cookie.value === "") {
    throw new SvcError("internal", `${url.host} answered the login without an app session cookie`);
  }
  return {
    session: cookie.value,
    ...(cookie.maxAgeSeconds !== undefined ? { maxAgeSeconds: cookie.maxAgeSeconds } : {}),
  };
}
