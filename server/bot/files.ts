// The bot's folder: what it needs to renew (one JSON file, 0600: the renewal credential and the
// current TLS key and certificate, replaced in ONE rename so they never disagree) and the outputs
// other programs read (SSH key + certificate, X.509 key + certificate + CA bundle, known_hosts),
// each replaced atomically (temp file + rename).
import { chmod, mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { writeFileAtomic as writeAtomic } from "../../core/atomic-file.ts";
import { knownHostsCertAuthority } from "../../core/certs/key-ids.ts";
import { writeSshIdentity } from "../../core/certs/ssh-key-files.ts";
import { BadParameterError } from "../../core/errors.ts";

export const STATE_FILE = ".bot-state.json";
export const OUTPUT_FILES = {
  sshKey: "ssh_key",
  sshCert: "ssh_key-cert.pub",
  tlsKey: "tls.key",
  tlsCert: "tls.crt",
  caBundle: "ca.pem",
  knownHosts: "known_hosts",
} as const;

/** A key pair for each certificate; private keys in PEM / OpenSSH form. */
export interface BotKeys {
  sshPrivateOpenSsh: string;
  sshPublicLine: string;
  tlsKeyPem: string;
  tlsPublicPem: string;
}

/** Everything the bot needs to renew; holds secrets: 0600, never logged. */
export interface BotStateFile {
  version: 1;
  name: string;
  generation: number;
  renewalToken: string;
  tlsKeyPem: string;
  tlsCertificatePem: string;
  hostCaPems: string[];
  /** local time the credentials arrived, and what auth said about them */
  issuedAtMs: number;
  expiresAtMs: number;
  renewAfterMs: number;
  /** the keys a renewal was sent with, until its answer is saved: every retry reuses them */
  pendingKeys?: BotKeys;
}

export interface BotOutputs {
  sshPrivateOpenSsh: string;
  sshPublicLine: string;
  /** empty when the bot's roles grant no logins */
  sshCertificate: string;
  tlsKeyPem: string;
  tlsCertificatePem: string;
  hostCaPems: string[];
  hostCaSshPublicKeys: string[];
}

export async function prepareFolder(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await chmod(dir, 0o700);
}

function isBotKeys(v: unknown): v is BotKeys {
  if (typeof v !== "object" || v === null) return false;
  const o = v as Record<string, unknown>;
  return ["sshPrivateOpenSsh", "sshPublicLine", "tlsKeyPem", "tlsPublicPem"].every(
    (k) => typeof o[k] === "string",
  );
}

export async function readState(dir: string): Promise<BotStateFile | undefined> {
  let text: string;
  try {
    text = await readFile(join(dir, STATE_FILE), "utf8");
  } catch (err) {
    if ((err as { code?: unknown }).code === "ENOENT") return undefined;
    throw err;
  }
  let v: Partial<BotStateFile>;
  try {
    v = JSON.parse(text) as Partial<BotStateFile>;
  } catch {
    throw new BadParameterError(`${STATE_FILE} is damaged: remove the folder and bootstrap with a new token`);
  }
  if (
    v.version !== 1 ||
    typeof v.name !== "string" ||
    typeof v.renewalToken !== "string" ||
    typeof v.tlsKeyPem !== "string" ||
    typeof v.tlsCertificatePem !== "string" ||
    !Array.isArray(v.hostCaPems) ||
    typeof v.generation !== "number" ||
    (v.pendingKeys !== undefined && !isBotKeys(v.pendingKeys))
  )
    throw new BadParameterError(`${STATE_FILE} is damaged: remove the folder and bootstrap with a new token`);
  return v as BotStateFile;
}

export async function writeState(dir: string, state: BotStateFile): Promise<void> {
  await writeAtomic(join(dir, STATE_FILE), JSON.stringify(state), 0o600);
}

/** Writes the outputs; the TLS key before its certificate, like the SSH identity. */
export async function writeOutputs(dir: string, o: BotOutputs): Promise<void> {
  await writeSshIdentity(join(dir, OUTPUT_FILES.sshKey), {
    privateOpenSsh: o.sshPrivateOpenSsh,
    publicLine: o.sshPublicLine,
    ...(o.sshCertificate ? { certificateLine: o.sshCertificate } : {}),
  });
  await writeAtomic(join(dir, OUTPUT_FILES.tlsKey), o.tlsKeyPem, 0o600);
  await writeAtomic(join(dir, OUTPUT_FILES.tlsCert), o.tlsCertificatePem, 0o644);
  await writeAtomic(join(dir, OUTPUT_FILES.caBundle), o.hostCaPems.join(""), 0o644);
  await writeAtomic(
    join(dir, OUTPUT_FILES.knownHosts),
    o.hostCaSshPublicKeys.map((k) => `${knownHostsCertAuthority("*", k)}\n`).join(""),
    0o644,
  );
}
