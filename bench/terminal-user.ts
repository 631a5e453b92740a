// The terminal benchmark's login: a Unix user made for the run, whose login shell (/bin/sh) finds
// no dotfiles in an empty temporary home, so an open measures the platform and OpenSSH, not a
// profile (the test machine's root runs `pyenv init` from its profile: 0.35 s idle, seconds with
// eight at once). Its password field is "*" (no password, but not locked: sshd without PAM
// refuses a locked account to certificate logins too). Removed by `remove()`, which the benchmark
// registers as a cleanup as soon as the user exists.
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chown, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { API_VERSION } from "../core/resources/index.ts";
import { setPassword } from "../server/auth/passwords.ts";
import type { AgentAuthEnv } from "../test/agent-fixture.ts";
import { PASSWORD } from "../test/auth-fixture.ts";

const run = promisify(execFile);

export interface BenchLogin {
  /** the Unix login, granted to the benchmark's platform user */
  login: string;
  /** that platform user's name (log in with env.login(user)) */
  user: string;
  remove(): Promise<void>;
}

/** Creates the Unix user and a platform user whose role (preset `access`) grants it as a login. */
export async function createBenchLogin(env: AgentAuthEnv): Promise<BenchLogin> {
  const login = `svcbench${randomBytes(3).toString("hex")}`;
  const home = await mkdtemp(join(tmpdir(), "svc-bench-home-"));
  const remove = async (): Promise<void> => {
    await run("userdel", ["-f", login]).catch(() => undefined);
    await rm(home, { recursive: true, force: true });
  };
  try {
    // -M: the home is ours (empty, no skeleton dotfiles); -U: a group of its own, removed with it.
    await run("useradd", ["-M", "-U", "-d", home, "-s", "/bin/sh", "-p", "*", login]);
    const { stdout } = await run("id", ["-u", login]);
    const { stdout: gid } = await run("id", ["-g", login]);
    await chown(home, Number(stdout.trim()), Number(gid.trim()));
  } catch (err) {
    await remove();
    throw err;
  }
  const user = "bench";
  await env.source.apply({
    apiVersion: API_VERSION,
    kind: "User",
    metadata: { name: user },
    spec: { roles: ["access"], traits: { logins: [login] } },
  } as never);
  await setPassword(env.backend, user, PASSWORD);
  return { login, user, remove };
}
