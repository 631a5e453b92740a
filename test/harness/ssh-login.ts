// A login with the real OpenSSH client holding a user certificate file, as a user types it from
// the files `svc certs` (or ssh-keygen -s) writes: no ssh_config, no agent, no other identity, and
// the host trusted only through the given known_hosts with StrictHostKeyChecking=yes. Shared so
// each test says what it logs in with, not the same dozen options again.
import { execFile } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import { basename } from "node:path";
import { promisify } from "node:util";

const execFileP = promisify(execFile);

export interface CertLogin {
  /** the private key file */
  key: string;
  /** the certificate file; `<key>-cert.pub` (ssh-keygen's name) when absent */
  certificate?: string;
  knownHosts: string;
  port: number;
  /** the name the host certificate must carry (certificates name nodes, never an address) */
  hostAlias?: string;
  /** the login; root when absent */
  user?: string;
  /** ssh options put before the destination, e.g. ["-tt"] */
  extra?: string[];
}

export interface SshResult {
  /** ssh's exit status (255 when ssh itself failed), -1 when it was killed (timeout) */
  code: number;
  stdout: string;
  stderr: string;
}

export type LoginOutcome = { ok: true } | { ok: false; why: string };

/** The `ssh` arguments up to and including the destination (append a command, or not). */
export function certSshArgs(l: CertLogin): string[] {
  return [
    "-F",
    "/dev/null",
    "-i",
    l.key,
    "-o",
    `CertificateFile=${l.certificate ?? `${l.key}-cert.pub`}`,
    "-o",
    "IdentitiesOnly=yes",
    "-o",
    "IdentityAgent=none",
    "-o",
    `UserKnownHostsFile=${l.knownHosts}`,
    "-o",
    "GlobalKnownHostsFile=/dev/null",
    "-o",
    "StrictHostKeyChecking=yes",
    "-o",
    "BatchMode=yes",
    "-o",
    "ConnectTimeout=30",
    ...(l.hostAlias === undefined ? [] : ["-o", `HostKeyAlias=${l.hostAlias}`]),
    "-p",
    String(l.port),
    ...(l.extra ?? []),
    `${l.user ?? "root"}@127.0.0.1`,
  ];
}

/** Runs `ssh args`; never rejects: a refusal is a result like any other. */
export function runSsh(args: string[], timeoutMs = 60_000): Promise<SshResult> {
  return new Promise((resolve) => {
    execFile("ssh", args, { timeout: timeoutMs }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === "number" ? err.code : -1) : 0;
      resolve({ code, stdout: String(stdout), stderr: String(stderr) });
    });
  });
}

/** One fresh login running `command`. */
export function certSsh(l: CertLogin, command: string): Promise<SshResult> {
  return runSsh([...certSshArgs(l), command]);
}

/** One fresh login that must run a shell command on the node; why it did not when it did not. */
export async function certLogin(l: CertLogin): Promise<LoginOutcome> {
  // The expansion proves a remote shell ran it (the command line alone does not say 42).
  const r = await certSsh(l, "echo login-$((40+2))");
  if (r.code !== 0) return { ok: false, why: r.stderr || `exit ${r.code}` };
  return r.stdout.trim() === "login-42" ? { ok: true } : { ok: false, why: `stdout ${r.stdout}` };
}

/** The files `svc certs --json` reports, as a CertLogin's credentials (known_hosts overridable). */
export function svcCertFiles(
  f: { private_key: string; certificate: string; known_hosts: string },
  knownHosts = f.known_hosts,
): Pick<CertLogin, "key" | "certificate" | "knownHosts"> {
  return { key: f.private_key, certificate: f.certificate, knownHosts };
}

/**
 * A fresh ed25519 key at `keyPath` (ssh-keygen, as a user makes one) and beside it
 * `<keyPath>-cert.pub`, the certificate `issue` returns for its public key line; returns that line.
 */
export async function keyWithCertificate(
  keyPath: string,
  issue: (publicKeyLine: string) => Promise<string>,
): Promise<string> {
  await execFileP("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", basename(keyPath), "-f", keyPath]);
  const certLine = await issue(await readFile(`${keyPath}.pub`, "utf8"));
  await writeFile(`${keyPath}-cert.pub`, `${certLine}\n`);
  return certLine;
}
