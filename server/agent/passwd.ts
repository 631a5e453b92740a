// Who a login runs as: the passwd entry (through NSS, so LDAP/sssd users work too).
import { execFile } from "node:child_process";
import { promisify } from "node:util";

const run = promisify(execFile);

export interface PasswdEntry {
  name: string;
  uid: number;
  gid: number;
  home: string;
  shell: string;
}

export type PasswdLookup = (login: string) => Promise<PasswdEntry | undefined>;

/** POSIX-portable user names (plus the trailing $ of machine accounts); anything else is refused. */
export function isValidLoginName(login: string): boolean {
  return /^[A-Za-z_][A-Za-z0-9_.-]{0,31}\$?$/.test(login);
}

/** Parses one passwd line ("name:x:uid:gid:gecos:home:shell"). */
export function parsePasswdLine(line: string): PasswdEntry | undefined {
  const f = line.trim().split(":");
  if (f.length !== 7) return undefined;
  const [name = "", , uidText = "", gidText = "", , home = "", shell = ""] = f;
  if (!/^\d+$/.test(uidText) || !/^\d+$/.test(gidText)) return undefined;
  return { name, uid: Number(uidText), gid: Number(gidText), home: home || "/", shell: shell || "/bin/sh" };
}

/** Looks a login up with `getent passwd`; undefined when there is no such user. */
export const getentPasswd: PasswdLookup = async (login) => {
  if (!isValidLoginName(login)) return undefined;
  try {
    const { stdout } = await run("getent", ["passwd", "--", login], { timeout: 10_000 });
    const entry = parsePasswdLine(stdout.split("\n")[0] ?? "");
    return entry?.name === login ? entry : undefined;
  } catch {
    return undefined; // getent exits 2 for an unknown user
  }
};

/**
 * `lookup` with each found entry remembered for `ttlMs` and concurrent asks for one login sharing
 * one lookup: `getent` is a process spawn per login, the largest CPU cost of opening a session when
 * terminals open in bursts (docs/performance.md, "Opening a terminal"). Only found users are kept,
 * so a user added to the node is seen at once; a removed or changed one within `ttlMs`.
 */
export function cachedPasswd(
  lookup: PasswdLookup,
  ttlMs = 10_000,
  now = () => performance.now(),
): PasswdLookup {
  const found = new Map<string, { entry: PasswdEntry; until: number }>();
  const pending = new Map<string, Promise<PasswdEntry | undefined>>();
  return (login) => {
    const hit = found.get(login);
    if (hit && hit.until > now()) return Promise.resolve(hit.entry);
    found.delete(login);
    const running = pending.get(login);
    if (running) return running;
    const p = lookup(login).then(
      (entry) => {
        pending.delete(login);
        // At most one entry per user that exists on this node.
        if (entry) found.set(login, { entry, until: now() + ttlMs });
        return entry;
      },
      (err: unknown) => {
        pending.delete(login);
        throw err;
      },
    );
    pending.set(login, p);
    return p;
  };
}
