// The agent's credentials on disk: one JSON file (mode 0600) in a folder of its own (0700), written
// atomically (temp file + rename), so a restart reuses them and needs no token. Holds private
// keys: never logged, never sent anywhere but into the TLS and SSH stacks.
import { chmod, mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { writeFileAtomic } from "../../core/atomic-file.ts";
import { BadParameterError } from "../../core/errors.ts";

export interface AgentIdentity {
  version: 1;
  agentId: string;
  hostname: string;
  /** OpenSSH private key (openssh-key-v1) of the host key */
  hostKeyOpenSsh: string;
  /** OpenSSH host certificate line for the host key */
  hostCertificate: string;
  /** PKCS#8 PEM of the TLS client key */
  tlsKeyPem: string;
  tlsCertificatePem: string;
  /** host CA certificates: verify auth's server certificate */
  hostCaPems: string[];
  /** user CA public keys at join time (refreshed from GetPublicKeys while running) */
  userCaSshPublicKeys: string[];
  /** labels given at join; heartbeats use them when the agent is started without labels */
  labels?: Record<string, string>;
  /** how the agent last reached auth (auth-target.ts), so a restart needs no --proxy / --auth */
  proxyAddress?: string;
  authAddress?: string;
  authServerName?: string;
}

export const IDENTITY_FILE = "agent-identity.json";

const isCode = (err: unknown, code: string): boolean => (err as { code?: unknown } | null)?.code === code;

function checkIdentity(v: unknown): AgentIdentity {
  const o = v as Partial<AgentIdentity> | null;
  const strings = [
    "agentId",
    "hostname",
    "hostKeyOpenSsh",
    "hostCertificate",
    "tlsKeyPem",
    "tlsCertificatePem",
  ] as const;
  if (
    o?.version !== 1 ||
    strings.some((k) => typeof o[k] !== "string" || o[k] === "") ||
    !Array.isArray(o.hostCaPems) ||
    !Array.isArray(o.userCaSshPublicKeys) ||
    (["proxyAddress", "authAddress", "authServerName"] as const).some(
      (k) => o[k] !== undefined && typeof o[k] !== "string",
    )
  ) {
    throw new BadParameterError(`${IDENTITY_FILE} is damaged: remove it and join again with a new token`);
  }
  return o as AgentIdentity;
}

/** The stored identity, or undefined when the agent has not joined yet. */
export async function loadIdentity(dataDir: string): Promise<AgentIdentity | undefined> {
  let text: string;
  try {
    text = await readFile(join(dataDir, IDENTITY_FILE), "utf8");
  } catch (err) {
    if (isCode(err, "ENOENT")) return undefined;
    throw err;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new BadParameterError(`${IDENTITY_FILE} is not JSON: remove it and join again with a new token`);
  }
  return checkIdentity(parsed);
}

export async function saveIdentity(dataDir: string, id: AgentIdentity): Promise<void> {
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  await chmod(dataDir, 0o700);
  const final = join(dataDir, IDENTITY_FILE);
  await writeFileAtomic(
    final,
    `${JSON.stringify(id, null, 2)}
`,
    0o600,
  );
}
