// `svc certs`: a fresh key and a short-lived certificate for plain OpenSSH, plus a known_hosts
// file trusting every host CA key auth trusts now (two during a host CA rotation; rewritten on
// every run and at `svc login`, docs/ca-rotation.md), so `ssh -i <key> -o UserKnownHostsFile=<file>` works with
// no other setup. The certificate comes from POST /v1/webapi/ssh/certs (IssueUserCerts behind
// the proxy with the caller's session).
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { writeFileAtomic } from "../core/atomic-file.ts";
import { writeSshIdentity } from "../core/certs/ssh-key-files.ts";
import { generateSshKeyPair, type SshKeyPair } from "../core/certs/ssh-keys.ts";
import { parseDuration } from "../core/duration.ts";
import { CliError, EXIT } from "./exit-codes.ts";
import { printJson } from "./output.ts";
import { defaultKeysDir, knownHostsText, type Profile, requireSession } from "./profile.ts";
import { proxyCall } from "./proxy-client.ts";
import { targetOf } from "./svc-session.ts";

export interface IssuedCerts {
  certificate: string;
  principals: string[];
  key_id: string;
  valid_after: string;
  valid_before: string;
  host_ca_keys: string[];
}

export function ttlSecondsOf(ttl: string | undefined): number {
  if (ttl === undefined) return 0;
  try {
    return Math.ceil(parseDuration(ttl) / 1000);
  } catch {
    throw new CliError(`--ttl ${JSON.stringify(ttl)} is not a duration like 30m or 8h`, EXIT.usage);
  }
}

/** An in-memory key plus its certificate (`svc ssh` never writes them to disk). */
export async function issueCerts(
  p: Profile & { session_id: string },
  ttlSeconds: number,
  node?: string,
): Promise<{ key: SshKeyPair; certs: IssuedCerts }> {
  const key = generateSshKeyPair("ed25519", { comment: `svc:${p.user ?? ""}` });
  const certs = await proxyCall<IssuedCerts>(targetOf(p), "POST", "/v1/webapi/ssh/certs", {
    sessionId: p.session_id,
    body: { public_key: key.publicLine, ttl_seconds: ttlSeconds, ...(node ? { node } : {}) },
  });
  return { key, certs };
}

export async function certs(opts: {
  out?: string;
  ttl?: string;
  json?: boolean;
  node?: string;
}): Promise<void> {
  const p = await requireSession();
  const { key, certs: c } = await issueCerts(p, ttlSecondsOf(opts.ttl), opts.node);
  const dir = opts.out ?? defaultKeysDir();
  const base = join(dir, `${p.user}`);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const files = await writeSshIdentity(base, {
    privateOpenSsh: key.privateOpenSsh,
    publicLine: key.publicLine,
    certificateLine: c.certificate,
  });
  const knownHosts = join(dir, "known_hosts");
  // Atomic: an ssh started meanwhile reads the old list or the new one, never half a file.
  await writeFileAtomic(knownHosts, knownHostsText(c.host_ca_keys), 0o644);
  const login = c.principals[0] ?? "<login>";
  // Host certificates name a node by its hostname and ID, not by address: HostKeyAlias lets the
  // known_hosts @cert-authority line check the name while ssh dials the address.
  const sshCommand = `ssh -i ${files.privateKeyPath} -o CertificateFile=${files.certificatePath} -o UserKnownHostsFile=${knownHosts} -o HostKeyAlias=<node> ${login}@<address>`;
  if (opts.json) {
    printJson({
      private_key: files.privateKeyPath,
      public_key: files.publicKeyPath,
      certificate: files.certificatePath,
      known_hosts: knownHosts,
      principals: c.principals,
      valid_before: c.valid_before,
      ssh_command: sshCommand,
    });
    return;
  }
  process.stdout.write(
    [
      `Key:         ${files.privateKeyPath}`,
      `Certificate: ${files.certificatePath} (logins ${c.principals.join(", ")}; valid until ${c.valid_before})`,
      `Known hosts: ${knownHosts} (trusts the cluster's host CA${c.host_ca_keys.length > 1 ? `s: ${c.host_ca_keys.length} keys, a rotation is under way` : ""})`,
      "Use:",
      `  ${sshCommand}`,
      "",
    ].join("\n"),
  );
}
