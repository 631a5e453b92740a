// The proxy's identity as the kubelet mounts it: a folder with the Secret's keys as files. Mounted
// Secrets change by an atomic symlink swap, which file watchers miss, so the folder is polled and
// a change is taken only when every file reads and parses (never half of an update).
import { createHash, createPublicKey } from "node:crypto";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { parseCertificatePem, privateKeyFromPem } from "../../core/certs/x509.ts";
import { PreconditionFailedError } from "../../core/errors.ts";
import { PROXY_IDENTITY_FILES, type ProxyIdentity } from "./proxy-identity.ts";

export interface LoadedIdentity {
  identity: ProxyIdentity;
  /** Digest of all files: equal digests mean an unchanged identity. */
  digest: string;
  notAfter: Date;
}

function samePublicKey(certSpki: ArrayBuffer, keyPem: string): boolean {
  const spki = createPublicKey(privateKeyFromPem(keyPem)).export({ type: "spki", format: "der" });
  return Buffer.from(certSpki).equals(spki);
}

/** Reads and checks the identity files; PreconditionFailedError when one is missing or unreadable. */
export async function readIdentityFolder(dir: string): Promise<LoadedIdentity> {
  return await loadIdentity(async (file) => {
    try {
      return await readFile(join(dir, file), "utf8");
    } catch (err) {
      throw new PreconditionFailedError(
        `identity file ${file}: ${(err as NodeJS.ErrnoException).code ?? "unreadable"}`,
      );
    }
  });
}

/**
 * The same identity from the Secret's data as the API returns it (base64 values): what the
 * folder will hold once the kubelet mounts it, so the digests agree and the mount is no reload.
 */
export async function identityFromSecretData(
  data: Readonly<Record<string, string>>,
): Promise<LoadedIdentity> {
  return await loadIdentity(async (file) => {
    const value = data[file];
    if (value === undefined) throw new PreconditionFailedError(`identity Secret has no ${file}`);
    return Buffer.from(value, "base64").toString("utf8");
  });
}

async function loadIdentity(read: (file: string) => Promise<string>): Promise<LoadedIdentity> {
  const entries = Object.entries(PROXY_IDENTITY_FILES) as Array<[keyof ProxyIdentity, string]>;
  const identity = {} as ProxyIdentity;
  const hash = createHash("sha256");
  for (const [field, file] of entries) {
    const text = await read(file);
    identity[field] = text;
    hash.update(file).update("\0").update(text).update("\0");
  }
  let notAfter: Date;
  try {
    const server = parseCertificatePem(identity.certPem);
    const client = parseCertificatePem(identity.clientCertPem);
    parseCertificatePem(identity.caPem);
    // Both pairs must match: a read that straddled an update is refused, the next poll retries.
    if (!samePublicKey(server.publicKey.rawData, identity.keyPem)) throw new Error("server key mismatch");
    if (!samePublicKey(client.publicKey.rawData, identity.clientKeyPem))
      throw new Error("client key mismatch");
    notAfter = new Date(Math.min(server.notAfter.getTime(), client.notAfter.getTime()));
  } catch {
    // No detail: the message of a key parser must not carry key bytes into a log.
    throw new PreconditionFailedError("identity files do not hold certificates and keys");
  }
  return { identity, digest: hash.digest("hex"), notAfter };
}

/** Polls the folder; calls onChange with each new complete identity (not the first one). */
export function watchIdentityFolder(
  dir: string,
  current: string,
  onChange: (loaded: LoadedIdentity) => void,
  o: { intervalMs: number; onError?: (err: unknown) => void },
): () => void {
  let digest = current;
  let busy = false;
  const timer = setInterval(() => {
    if (busy) return;
    busy = true;
    readIdentityFolder(dir)
      .then((loaded) => {
        if (loaded.digest === digest) return;
        digest = loaded.digest;
        onChange(loaded);
      })
      .catch((err: unknown) => o.onError?.(err)) // mid-update or removed: keep the current identity
      .finally(() => {
        busy = false;
      });
  }, o.intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
