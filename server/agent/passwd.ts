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
