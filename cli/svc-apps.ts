// `svc apps ls | login | logout | config`: web applications behind the proxy (docs/apps.md).
// login does what the console's launch page and a browser do: POST /v1/webapi/apps/sessions with
// the profile's session for a one-time code, then the app host's login path with a state of its
// own, keeping the app session cookie in $SVC_HOME/apps/<name>.json for scripts (config).
import { type Command, Option } from "commander";
import { BadParameterError, NotAuthenticatedError, NotFoundError } from "../core/errors.ts";
import { DNS_LABEL_MAX, DNS_LABEL_PATTERN } from "../core/resources/meta.ts";
import { newState } from "../server/proxy/apps/cookies.ts";
import {
  APP_SESSION_COOKIE,
  caFileOf,
  exchangeAtAppHost,
  loadAppSession,
  logoutAtAppHost,
  removeAppSession,
  type StoredAppSession,
  saveAppSession,
  storedAppSessions,
  webSessionHash,
} from "./app-sessions.ts";
import { formatLabels, printJson, printTable } from "./output.ts";
import { requireSession } from "./profile.ts";
import { proxyCall } from "./proxy-client.ts";
import { targetOf } from "./svc-session.ts";

export interface AppItem {
  name: string;
  description: string;
  public_addr: string;
  public_url: string;
  labels: Record<string, string>;
  uri?: string;
}

interface StartAnswer {
  code: string;
  login_url: string;
  app: AppItem;
  expires: string;
}

export type ListFormat = "text" | "json";
export const LIST_FORMATS: readonly ListFormat[] = ["text", "json"];
export type ConfigFormat = "text" | "uri" | "cookie" | "curl" | "json";
export const CONFIG_FORMATS: readonly ConfigFormat[] = ["text", "uri", "cookie", "curl", "json"];

const APP_NAME = new RegExp(DNS_LABEL_PATTERN);

/** An App name given on the command line (it also names a file: nothing else is accepted). */
function appNameArg(name: string): string {
  if (name.length > DNS_LABEL_MAX || !APP_NAME.test(name)) {
    throw new BadParameterError(
      `${JSON.stringify(name)} is not an app name (lower-case letters, digits and -)`,
    );
  }
  return name;
}

export async function appsLs(o: { format: ListFormat }): Promise<void> {
  const p = await requireSession();
  const { apps } = await proxyCall<{ apps: AppItem[] }>(targetOf(p), "GET", "/v1/webapi/apps", {
    sessionId: p.session_id,
  });
  const shown = [...apps].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  if (o.format === "json") {
    printJson(shown);
    return;
  }
  if (shown.length === 0) {
    process.stdout.write("No apps your roles reach.\n");
    return;
  }
  printTable(
    ["NAME", "URL", "DESCRIPTION", "LABELS"],
    shown.map((a) => [a.name, a.public_url, a.description, formatLabels(a.labels)]),
  );
}

/** POST /v1/webapi/apps/sessions for `app`: a URL or a dotted host name is where the app is reached. */
async function startSession(
  p: Awaited<ReturnType<typeof requireSession>>,
  app: string,
): Promise<StartAnswer> {
  // App names are DNS labels: anything with a dot is a host name.
  const body: Record<string, string> = /^https?:\/\//i.test(app)
    ? { public_addr: new URL(app).hostname }
    : app.includes(".")
      ? { public_addr: app.toLowerCase() }
      : { app_name: appNameArg(app.toLowerCase()) };
  return proxyCall<StartAnswer>(targetOf(p), "POST", "/v1/webapi/apps/sessions", {
    sessionId: p.session_id,
    body,
  });
}

export async function appsLogin(app: string, o: { format: ListFormat }): Promise<void> {
  const p = await requireSession();
  const target = targetOf(p);
  const started = await startSession(p, app);
  // The state the app host's login path compares with its state cookie: ours, both sides.
  const state = newState();
  const got = await exchangeAtAppHost(target, started.login_url, started.code, state);
  // The cookie's Max-Age is the app session's life; the web session's end bounds it (and stands
  // in for it when the cookie carries none).
  const webEnds = p.expires_at ? Date.parse(p.expires_at) : Number.POSITIVE_INFINITY;
  const cookieEnds = got.maxAgeSeconds !== undefined ? Date.now() + got.maxAgeSeconds * 1000 : webEnds;
  const expires = Math.min(cookieEnds, webEnds);
  const stored: StoredAppSession = {
    app: appNameArg(started.app.name),
    public_addr: started.app.public_addr,
    public_url: started.app.public_url,
    session: got.session,
    // neither known (an old profile, a cookie without Max-Age): config trusts it for an hour
    expires_at: new Date(Number.isFinite(expires) ? expires : Date.now() + 3600_000).toISOString(),
    web_session_hash: webSessionHash(p.session_id),
  };
  await saveAppSession(stored, target.insecure ? undefined : target.caPem);
  if (o.format === "json") {
    printJson({ app: stored.app, public_url: stored.public_url, expires_at: stored.expires_at });
    return;
  }
  process.stdout.write(
    `Logged in to ${stored.app}: ${stored.public_url} (until ${stored.expires_at})\n` +
      `Call it from a script: svc apps config ${stored.app} --format curl\n` +
      `  (or --format cookie for the Cookie header value; the host need not resolve: curl's\n` +
      `   --connect-to sends it to the proxy at ${p.proxy})\n`,
  );
}

export async function appsLogout(app: string | undefined, o: { format: ListFormat }): Promise<void> {
  const name = app === undefined ? undefined : appNameArg(app);
  const p = await requireSession();
  const target = targetOf(p);
  const query = name === undefined ? "" : `?app=${encodeURIComponent(name)}`;
  // Auth first: it ends every app session of the user (browser ones too) and counts them.
  const { ended } = await proxyCall<{ ended: number }>(target, "DELETE", `/v1/webapi/apps/sessions${query}`, {
    sessionId: p.session_id,
  });
  const forgotten: string[] = [];
  for (const s of await storedAppSessions(name)) {
    // Only cookies of this login: an older one's proxy may be another cluster's address.
    if (s.web_session_hash === webSessionHash(p.session_id)) await logoutAtAppHost(target, s);
    await removeAppSession(s.app);
    forgotten.push(s.app);
  }
  if (o.format === "json") {
    printJson({ ended, forgotten });
    return;
  }
  process.stdout.write(`Ended ${ended} app session${ended === 1 ? "" : "s"}${name ? ` of ${name}` : ""}.\n`);
}

/** Single-quoted for a POSIX shell. */
const sh = (s: string): string => `'${s.replaceAll("'", `'\\''`)}'`;

export async function appsConfig(app: string, o: { format: ConfigFormat }): Promise<void> {
  const name = appNameArg(app);
  const p = await requireSession();
  const s = await loadAppSession(name);
  if (!s) throw new NotFoundError(`no app session for ${name} (run: svc apps login ${name})`);
  if (s.web_session_hash !== webSessionHash(p.session_id)) {
    throw new NotAuthenticatedError(
      `the app session for ${name} belongs to an earlier login (run: svc apps login ${name})`,
    );
  }
  if (Date.parse(s.expires_at) <= Date.now()) {
    throw new NotAuthenticatedError(
      `the app session for ${name} expired at ${s.expires_at} (run: svc apps login ${name})`,
    );
  }
  const cookie = `${APP_SESSION_COOKIE}=${s.session}`;
  const url = new URL(s.public_url);
  const port = url.port || "443";
  const trust = p.insecure ? "-k" : `--cacert ${sh(caFileOf())}`;
  // --connect-to keeps the app host as TLS name and Host while dialing the proxy's address.
  const curl = `curl ${trust} --connect-to ${sh(`${url.hostname}:${port}:${p.proxy}`)} -H ${sh(`Cookie: ${cookie}`)} ${sh(s.public_url)}`;
  switch (o.format) {
    case "uri":
      process.stdout.write(`${s.public_url}\n`);
      return;
    case "cookie":
      process.stdout.write(`${cookie}\n`);
      return;
    case "curl":
      process.stdout.write(`${curl}\n`);
      return;
    case "json":
      printJson({
        app: s.app,
        public_url: s.public_url,
        cookie_name: APP_SESSION_COOKIE,
        cookie,
        expires_at: s.expires_at,
        proxy: p.proxy,
        ...(p.insecure ? {} : { ca_file: caFileOf() }),
      });
      return;
    default:
      process.stdout.write(
        `App:     ${s.app}\nURL:     ${s.public_url}\nExpires: ${s.expires_at}\nCookie:  ${cookie}\nProxy:   ${p.proxy}\n` +
          `Example: ${curl}\n`,
      );
  }
}

/** Adds `svc apps` and its subcommands to `program` (they inherit its exit and help settings). */
export function addAppsCommand(program: Command): void {
  const format = (choices: readonly string[], dflt: string): Option =>
    new Option("--format <format>", "output format").choices(choices).default(dflt);
  const json = (): Option => new Option("--json", "same as --format json");
  const formatOf = <F extends string>(o: { format: F; json?: boolean }): F | "json" =>
    o.json ? "json" : o.format;

  const apps = program
    .command("apps")
    .description("web applications behind the proxy: list them, log in for scripts, log out")
    .addHelpText(
      "after",
      `
Each app is reached at https://<app>.<proxy host>/ with your identity; a browser goes through
the console. For scripts: svc apps login <app>, then svc apps config <app> --format curl (or
--format cookie for the Cookie header value). Paths under /x-svc/ belong to the proxy.`,
    );

  apps
    .command("ls")
    .description("list the apps your roles reach")
    .addOption(format(LIST_FORMATS, "text"))
    .addOption(json())
    .action(async (o: { format: ListFormat; json?: boolean }) => appsLs({ format: formatOf(o) }));

  apps
    .command("login")
    .description(`start an app session and keep its cookie in $SVC_HOME/apps/<app>.json (mode 0600)`)
    .argument("<app>", "app name (or the host name / URL it is reached at)")
    .addOption(format(LIST_FORMATS, "text"))
    .addOption(json())
    .action(async (app: string, o: { format: ListFormat; json?: boolean }) =>
      appsLogin(app, { format: formatOf(o) }),
    );

  apps
    .command("logout")
    .description("end your app sessions (of one app, or of all) and forget their cookies")
    .argument("[app]", "app name (default: every app)")
    .addOption(format(LIST_FORMATS, "text"))
    .addOption(json())
    .action(async (app: string | undefined, o: { format: ListFormat; json?: boolean }) =>
      appsLogout(app, { format: formatOf(o) }),
    );

  apps
    .command("config")
    .description("print what a script needs to call an app you logged in to")
    .argument("<app>", "app name")
    .addOption(format(CONFIG_FORMATS, "text"))
    .addOption(json())
    .addHelpText(
      "after",
      `
Formats: uri (the app's URL), cookie (the Cookie header value), curl (a curl command that
trusts the profile's CA and dials the proxy's address, so the app host need not resolve), json,
text (all of it). The cookie is a credential: keep it out of logs and shell history.`,
    )
    .action(async (app: string, o: { format: ConfigFormat; json?: boolean }) =>
      appsConfig(app, { format: formatOf(o) }),
    );
}
