// The CLI profile: which proxy, which user, the session and the CA to trust, in
// $SVC_HOME/profile.json (default ~/.svc), mode 0600 because it holds a bearer session id.
import { mkdir, readFile, rm } from "node:fs/promises";
import { homedir } from "node:os";
import { join } from "node:path";
import { writeFileAtomic } from "../core/atomic-file.ts";
import { knownHostsCertAuthority } from "../core/certs/key-ids.ts";
import { NotAuthenticatedError, PreconditionFailedError } from "../core/errors.ts";
import type { AuthRoute } from "../server/auth/via-proxy.ts";
import { CliError, EXIT } from "./exit-codes.ts";

export interface Profile {
  /** host:port of the proxy's HTTPS listener */
  proxy: string;
  /**
   * PEM of the CAs that may issue the proxy's certificate (every trusted host X.509 CA, several
   * during a rotation, refreshed at each login: refreshTrust); absent with insecure
   */
  ca_pem?: string;
  /** first contact without a CA: TLS is not verified (loudly warned on every use) */
  insecure?: boolean;
  cluster_name?: string;
  user?: string;
  session_id?: string;
  /** RFC 3339 */
  expires_at?: string;
  /** host:port of auth's gRPC listener, for svcctl (svc login --auth) */
  auth?: string;
}

export function svcHome(env: NodeJS.ProcessEnv = process.env): string {
  return env.SVC_HOME && env.SVC_HOME.length > 0 ? env.SVC_HOME : join(homedir(), ".svc");
}

export function profilePath(env: NodeJS.ProcessEnv = process.env): string {
  return join(svcHome(env), "profile.json");
}

export async function loadProfile(env: NodeJS.ProcessEnv = process.env): Promise<Profile | undefined> {
  let text: string;
  try {
    text = await readFile(profilePath(env), "utf8");
  } catch (err) {
    if ((err as { code?: unknown }).code === "ENOENT") return undefined;
    throw err;
  }
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    throw new CliError(`${profilePath(env)} is not valid JSON; remove it and run svc login`);
  }
  if (typeof v !== "object" || v === null || typeof (v as Profile).proxy !== "string") {
    throw new CliError(`${profilePath(env)} is not a profile; remove it and run svc login`);
  }
  return v as Profile;
}

export async function saveProfile(p: Profile, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const home = svcHome(env);
  await mkdir(home, { recursive: true, mode: 0o700 });
  const file = profilePath(env);
  await writeFileAtomic(file, `${JSON.stringify(p, null, 2)}\n`, 0o600);
}

export async function removeProfile(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  await rm(profilePath(env), { force: true });
}

/** The profile with a live-looking session, or exit 3 with a clear message. */
export async function requireSession(
  env: NodeJS.ProcessEnv = process.env,
  now = Date.now(),
): Promise<Profile & { session_id: string; user: string }> {
  const p = await loadProfile(env);
  if (!p?.session_id || !p.user) throw new NotAuthenticatedError("not logged in (run: svc login)");
  if (p.expires_at && Date.parse(p.expires_at) <= now) {
    throw new NotAuthenticatedError(`the session of ${p.user} expired at ${p.expires_at} (run: svc login)`);
  }
  return p as Profile & { session_id: string; user: string };
}

export async function requireProfile(env: NodeJS.ProcessEnv = process.env): Promise<Profile> {
  const p = await loadProfile(env);
  if (!p) throw new CliError("no proxy known yet (run: svc login --proxy host:port)", EXIT.notLoggedIn);
  return p;
}

/** The certificates of a PEM bundle, each normalised (one block, trimmed lines). */
function pemBlocks(text: string): string[] {
  return (text.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? []).map((b) =>
    b
      .split(/\r?\n/)
      .map((l) => l.trim())
      .filter((l) => l !== "")
      .join("\n"),
  );
}

/** The known_hosts text trusting every host CA key: one `@cert-authority *` line per key. */
export function knownHostsText(hostCaKeys: readonly string[]): string {
  const keys = [...new Set(hostCaKeys.map((k) => k.trim()).filter((k) => k !== ""))];
  return `${keys.map((k) => knownHostsCertAuthority("*", k)).join("\n")}\n`;
}

/** Where `svc certs` writes its files when no --out is given. */
export function defaultKeysDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(svcHome(env), "keys");
}

/**
 * The profile with its trust brought up to date from GetPublicKeys: every host CA PEM auth trusts
 * now (a CA rotation adds one at init and drops the old one at standby), asked over TLS verified
 * with the trust the profile already has, so a login during a rotation learns the new CA before
 * the proxy's certificate switches to it. The default known_hosts `svc certs` wrote is rewritten
 * with every trusted host CA key for the same reason. Best effort: on any failure the profile
 * keeps what it had (`warn` says why), since the login itself succeeded.
 */
export async function refreshTrust(
  p: Profile,
  o: { warn: (line: string) => void; env?: NodeJS.ProcessEnv; timeoutMs?: number },
): Promise<Profile> {
  // Without a verified CA the answer could come from anyone: never learn trust from it.
  if (p.insecure || !p.ca_pem) return p;
  // Loaded here, not at the top: every svc command reads the profile, few need gRPC.
  const [{ callUnary, createAuthClient }, { authRouteViaProxy }] = await Promise.all([
    import("../server/auth/client.ts"),
    import("../server/auth/via-proxy.ts"),
  ]);
  let route: AuthRoute;
  try {
    route = p.auth
      ? { address: p.auth }
      : await authRouteViaProxy(p.proxy, { timeoutMs: o.timeoutMs ?? 10_000 });
  } catch (err) {
    // A proxy that does not route gRPC to auth: nothing to ask, the given CA stays.
    if (err instanceof PreconditionFailedError) return p;
    o.warn(`host CA list not refreshed (${err instanceof Error ? err.message : String(err)})`);
    return p;
  }
  const client = createAuthClient({
    address: route.address,
    caPems: [p.ca_pem],
    ...(route.serverName ? { serverName: route.serverName } : {}),
  });
  try {
    const pub = await callUnary(client, "GetPublicKeys", {}, undefined, {
      deadline: Date.now() + (o.timeoutMs ?? 10_000),
    });
    const pems = [...new Set((pub.host_ca_pems ?? []).flatMap(pemBlocks))];
    const knownHosts = join(defaultKeysDir(o.env), "known_hosts");
    const hostKeys = pub.host_ca_ssh_public_keys ?? [];
    if (hostKeys.length > 0 && (await readFile(knownHosts, "utf8").catch(() => undefined)) !== undefined)
      await writeFileAtomic(knownHosts, knownHostsText(hostKeys), 0o644);
    // Only a profile that trusts a host CA follows the host CAs: one given another CA (a public
    // certificate on the proxy) keeps it.
    const mine = pemBlocks(p.ca_pem);
    if (pems.length === 0 || !mine.some((pem) => pems.includes(pem))) return p;
    return { ...p, ca_pem: `${pems.join("\n")}\n` };
  } catch (err) {
    o.warn(`host CA list not refreshed (${err instanceof Error ? err.message : String(err)})`);
    return p;
  } finally {
    client.close();
  }
}
