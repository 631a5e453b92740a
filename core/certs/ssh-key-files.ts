// Writes an SSH identity the way OpenSSH tools expect to find it: <path> (private, 0600),
// <path>.pub and, when given, <path>-cert.pub. Each file is replaced atomically (temp + rename),
// so a reader (ssh, a running bot) never sees a half-written key or a key without its cert.
import { unlink } from "node:fs/promises";
import { writeFileAtomic as writeAtomic } from "../atomic-file.ts";

export interface SshIdentityFiles {
  privateKeyPath: string;
  publicKeyPath: string;
  certificatePath?: string;
}

/** Writes .pub, then the key, then the certificate (or removes a stale one), each atomically. */
export async function writeSshIdentity(
  path: string,
  id: { privateOpenSsh: string; publicLine: string; certificateLine?: string },
): Promise<SshIdentityFiles> {
  await writeAtomic(`${path}.pub`, `${id.publicLine.trim()}\n`, 0o644);
  await writeAtomic(path, id.privateOpenSsh, 0o600);
  if (id.certificateLine === undefined) {
    // a certificate left from an earlier key would no longer match
    await unlink(`${path}-cert.pub`).catch((err: unknown) => {
      if ((err as { code?: unknown }).code !== "ENOENT") throw err;
    });
    return { privateKeyPath: path, publicKeyPath: `${path}.pub` };
  }
  await writeAtomic(`${path}-cert.pub`, `${id.certificateLine.trim()}\n`, 0o644);
  return { privateKeyPath: path, publicKeyPath: `${path}.pub`, certificatePath: `${path}-cert.pub` };
}
