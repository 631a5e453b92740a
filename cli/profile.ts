// The CLI profile: which proxy, which user, the session and the CA to trust, in
// $SVC_HOME/profile.json (default ~/.svc), mode 0600 because it holds a bearer session id.
import { mkdir, readFile, rm } from "node:fs/promises";
import { homedir } from "node:os";
import { join } from "node:path";
import { writeFileAtomic } from "../core/atomic-file.ts";
import { NotAuthenticatedError } from "../core/errors.ts";
import { CliError, EXIT } from "./exit-codes.ts";

export interface Profile {
  /** host:port of the proxy's HTTPS listener */
  proxy: string;
  /** PEM of the CA that issued the proxy's certificate (the host CA); absent with insecure */
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
