// `svc login | status | logout | ping`: the session part of the user CLI. Everything goes to the
// proxy over HTTPS (the public surface); the profile keeps what later commands need.
import { readFile } from "node:fs/promises";
import { isDuration, parseDuration } from "../core/duration.ts";
import { NotAuthenticatedError } from "../core/errors.ts";
import { SERVER_VERSION } from "../server/version.ts";
import { CliError, EXIT } from "./exit-codes.ts";
import { printJson, warn } from "./output.ts";
import {
  loadProfile,
  type Profile,
  refreshTrust,
  requireProfile,
  requireSession,
  saveProfile,
} from "./profile.ts";
import { newPassword, promptHidden, promptLine, readSecretFile } from "./prompt.ts";
import {
  errorOfResponse,
  type ProxyTarget,
  proxyCall,
  proxyRequest,
  splitProxyAddress,
} from "./proxy-client.ts";
import { ssoLogin } from "./svc-sso.ts";
import { versionVerdict } from "./version-policy.ts";

/** The version of this binary (the platform ships CLIs and servers from one package). */
export const CLIENT_VERSION = SERVER_VERSION;

export function targetOf(p: Profile): ProxyTarget {
  if (p.insecure)
    warn(
      `TLS to ${p.proxy} is NOT verified (--insecure-skip-verify); anyone on the path can read your session`,
    );
  return { proxy: p.proxy, caPem: p.ca_pem, insecure: p.insecure };
}

interface PingAnswer {
  cluster_name: string;
  server_version: string;
  client_version_policy: { minimum?: string; recommended?: string };
  /** absent from proxies before single sign-on: password login then */
  auth?: { local_login?: boolean; default_connector?: string };
}

/** Pings and applies the version policy: warns below recommended, throws (exit 7) below minimum. */
export async function pingChecked(target: ProxyTarget): Promise<PingAnswer & { verdict: string }> {
  const ping = await proxyCall<PingAnswer>(target, "GET", "/v1/webapi/ping");
  const verdict = versionVerdict(CLIENT_VERSION, ping.client_version_policy ?? {});
  if (verdict.kind === "unsupported") {
    throw new CliError(
      `this svc (${CLIENT_VERSION}) is older than the minimum version ${verdict.minimum} cluster "${ping.cluster_name}" supports: upgrade svc`,
      EXIT.clientTooOld,
    );
  }
  if (verdict.kind === "upgrade_recommended") {
    warn(
      `this svc (${CLIENT_VERSION}) is older than the version cluster "${ping.cluster_name}" recommends (${verdict.recommended}): please upgrade`,
    );
  }
  return { ...ping, verdict: verdict.kind };
}

export async function ping(opts: {
  proxy?: string;
  ca?: string;
  insecureSkipVerify?: boolean;
  json?: boolean;
}): Promise<void> {
  let profile: Profile = opts.proxy
    ? { proxy: opts.proxy, ...(await trustFor(opts.proxy)) }
    : await requireProfile();
  if (opts.ca) profile = { proxy: profile.proxy, ca_pem: await readCa(opts.ca) };
  else if (opts.insecureSkipVerify) profile = { proxy: profile.proxy, insecure: true };
  const p = await pingChecked(targetOf(profile));
  if (opts.json) {
    printJson({ ...p, client_version: CLIENT_VERSION });
    return;
  }
  process.stdout.write(
    [
      `Proxy:          ${profile.proxy}`,
      `Cluster:        ${p.cluster_name}`,
      `Server version: ${p.server_version}`,
      `Client version: ${CLIENT_VERSION} (minimum ${p.client_version_policy.minimum || "none"}, recommended ${p.client_version_policy.recommended || "none"})`,
      "",
    ].join("\n"),
  );
}

async function readCa(path: string): Promise<string> {
  const pem = await readFile(path, "utf8").catch((err: Error) => {
    throw new CliError(`cannot read --ca ${path}: ${err.message}`, EXIT.usage);
  });
  if (!pem.includes("-----BEGIN CERTIFICATE-----"))
    throw new CliError(`${path} holds no PEM certificate`, EXIT.usage);
  return pem;
}

/** Trust for a proxy named on the command line: the profile's CA when it is the same proxy. */
async function trustFor(proxy: string): Promise<Pick<Profile, "ca_pem" | "insecure">> {
  const p = await loadProfile();
  if (p && p.proxy === proxy)
    return { ...(p.ca_pem ? { ca_pem: p.ca_pem } : {}), ...(p.insecure ? { insecure: true } : {}) };
  return {};
}

export interface LoginOptions {
  proxy?: string;
  user?: string;
  ca?: string;
  insecureSkipVerify?: boolean;
  passwordFile?: string;
  resetToken?: string;
  /** a connector name (single sign-on), "local" (password), or auth's host:port for svcctl */
  auth?: string;
  /** --timeout for the browser of a single sign-on, e.g. "5m" */
  timeout?: string;
  /** commander's --no-browser */
  browser?: boolean;
  json?: boolean;
}

/** Connector names are resource names; anything with a ":" is auth's host:port (remembered for svcctl). */
function splitAuthOption(auth: string | undefined): { connector?: string; authAddress?: string } {
  if (auth === undefined) return {};
  if (auth.includes(":")) return { authAddress: auth };
  if (!/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(auth)) {
    throw new CliError(
      `--auth ${JSON.stringify(auth)}: a connector name (lower-case letters, digits, "-"), "local", or auth's host:port`,
      EXIT.usage,
    );
  }
  return { connector: auth };
}

/** Which connector this login goes through; undefined: a password login. */
function chooseConnector(
  opts: LoginOptions,
  connector: string | undefined,
  info: PingAnswer,
): string | undefined {
  if (connector === "local") return undefined;
  if (connector !== undefined) return connector;
  const passwordAsked = opts.passwordFile !== undefined || opts.resetToken !== undefined;
  if (info.auth?.local_login !== false || passwordAsked) return undefined;
  if (info.auth.default_connector) return info.auth.default_connector;
  throw new CliError(
    `password login is off on cluster "${info.cluster_name}" and it names no default connector: pass --auth <connector>`,
    EXIT.usage,
  );
}

export async function login(opts: LoginOptions): Promise<void> {
  const previous = await loadProfile();
  const proxy = opts.proxy ?? previous?.proxy;
  if (!proxy) throw new CliError("which proxy? pass --proxy host:port", EXIT.usage);
  splitProxyAddress(proxy);
  let trust: Pick<Profile, "ca_pem" | "insecure">;
  if (opts.ca) {
    trust = { ca_pem: await readCa(opts.ca) };
  } else if (opts.insecureSkipVerify) {
    warn(
      "--insecure-skip-verify: the proxy's identity is NOT checked; use --ca with the cluster's host-ca.pem instead",
    );
    trust = { insecure: true };
  } else if (previous && previous.proxy === proxy && (previous.ca_pem || previous.insecure)) {
    trust = {
      ...(previous.ca_pem ? { ca_pem: previous.ca_pem } : {}),
      ...(previous.insecure ? { insecure: true } : {}),
    };
  } else {
    throw new CliError(
      `first contact with ${proxy}: pass --ca <file> with the cluster's host CA (host-ca.pem in the data folder), or --insecure-skip-verify`,
      EXIT.usage,
    );
  }
  const target: ProxyTarget = { proxy, caPem: trust.ca_pem, insecure: trust.insecure };
  const { connector: asked, authAddress } = splitAuthOption(opts.auth);
  const info = await pingChecked(target);
  const connector = chooseConnector(opts, asked, info);

  let username: string;
  let session: { session_id: string; expires_at: string; scope?: string };
  if (connector !== undefined) {
    session = await ssoLogin({
      target,
      connector,
      timeoutMs: opts.timeout ? parseTimeout(opts.timeout) : 5 * 60_000,
      openBrowser: opts.browser !== false,
      say: (line) => process.stderr.write(`${line}\n`),
    });
    // The user name is auth's mapping of the identity: ask the session whose it is.
    const who = await proxyCall<{ username: string }>(target, "GET", "/v1/webapi/session", {
      sessionId: session.session_id,
    });
    username = who.username;
  } else {
    ({ username, session } = await passwordLogin(opts, target, previous, proxy));
  }

  const rememberedAuth = authAddress ?? (previous?.proxy === proxy ? previous.auth : undefined);
  // A CA rotation adds host CAs: learn them now, while the current one still verifies the proxy.
  const profile: Profile = await refreshTrust(
    {
      proxy,
      ...trust,
      cluster_name: info.cluster_name,
      user: username,
      session_id: session.session_id,
      expires_at: session.expires_at,
      ...(rememberedAuth ? { auth: rememberedAuth } : {}),
    },
    { warn },
  );
  await saveProfile(profile);
  const scope = session.scope ?? "full";
  if (opts.json)
    printJson({
      proxy,
      cluster_name: info.cluster_name,
      user: username,
      expires_at: session.expires_at,
      scope,
      ...(connector !== undefined ? { connector } : {}),
    });
  else
    process.stdout.write(
      `Logged in to ${info.cluster_name} as ${username}${connector !== undefined ? ` through ${connector}` : ""} (until ${session.expires_at}).\n`,
    );
  if (scope === "mfa_enrollment") {
    warn(
      `your roles require multi-factor authentication and ${username} has no WebAuthn device yet: this session can only enrol one (POST https://${proxy}/v1/webapi/mfa/webauthn/register/begin and /finish), then sign in with it`,
    );
  }
}

function parseTimeout(text: string): number {
  if (!isDuration(text))
    throw new CliError(`--timeout ${JSON.stringify(text)}: a duration such as 90s or 5m`, EXIT.usage);
  const ms = parseDuration(text);
  if (ms <= 0) throw new CliError("--timeout must be above zero", EXIT.usage);
  return ms;
}

async function passwordLogin(
  opts: LoginOptions,
  target: ProxyTarget,
  previous: Profile | undefined,
  proxy: string,
): Promise<{ username: string; session: { session_id: string; expires_at: string; scope?: string } }> {
  let username = opts.user ?? (previous?.proxy === proxy ? previous.user : undefined);
  let password: string;
  if (opts.resetToken) {
    password = await newPassword(opts.passwordFile);
    const done = await proxyCall<{ username: string }>(target, "POST", "/v1/webapi/password/reset", {
      body: { token: opts.resetToken, password },
    });
    if (opts.user && opts.user !== done.username) {
      throw new CliError(`the reset token was for ${done.username}, not ${opts.user}`, EXIT.usage);
    }
    username = done.username;
    process.stderr.write(`Password set for ${done.username}.\n`);
  } else {
    username ??= await promptLine("User: ");
    password = opts.passwordFile
      ? await readSecretFile(opts.passwordFile)
      : await promptHidden(`Password for ${username}: `);
  }
  if (!username) throw new CliError("which user? pass --user", EXIT.usage);

  const r = await proxyRequest(target, "POST", "/v1/webapi/login", { body: { username, password } });
  if (r.status === 401 && (r.body as { error?: { code?: string } })?.error?.code === "mfa_required") {
    throw new NotAuthenticatedError(
      `${username} has a WebAuthn device: this svc has no platform authenticator to answer the challenge; sign in at https://${proxy}/web/login instead`,
    );
  }
  if (r.status !== 200) throw errorOfResponse(r);
  return { username, session: r.body as { session_id: string; expires_at: string; scope?: string } };
}

export async function status(opts: { json?: boolean }): Promise<void> {
  const p = await requireSession();
  const s = await proxyCall<{
    username: string;
    roles: string[];
    expires_at: string;
    mfa_verified?: boolean;
    scope?: string;
  }>(targetOf(p), "GET", "/v1/webapi/session", { sessionId: p.session_id });
  if (opts.json) {
    printJson({ proxy: p.proxy, cluster_name: p.cluster_name ?? "", ...s });
    return;
  }
  process.stdout.write(
    [
      `Proxy:    ${p.proxy}`,
      `Cluster:  ${p.cluster_name ?? ""}`,
      `User:     ${s.username}`,
      `Roles:    ${s.roles.join(", ")}`,
      `Valid to: ${s.expires_at}`,
      `MFA:      ${s.mfa_verified ? "verified" : "no"}${s.scope === "mfa_enrollment" ? " (this session can only enrol a device)" : ""}`,
      "",
    ].join("\n"),
  );
}

export async function logout(opts: { json?: boolean }): Promise<void> {
  const p = await loadProfile();
  if (!p?.session_id) {
    if (opts.json) printJson({ logged_out: false });
    else process.stdout.write("Not logged in.\n");
    return;
  }
  // Revoke server-side first; an already dead session is fine, the local copy goes anyway.
  const r = await proxyRequest(targetOf(p), "POST", "/v1/webapi/logout", { sessionId: p.session_id });
  const { session_id: _s, expires_at: _e, ...rest } = p;
  await saveProfile(rest);
  if (r.status !== 200 && r.status !== 401) throw errorOfResponse(r);
  if (opts.json) printJson({ logged_out: true, user: p.user ?? "" });
  else process.stdout.write(`Logged out ${p.user ?? ""}.\n`);
}
