// The browser-trusted certificate for the proxy's public names (`proxy.public_tls`): a cert-manager
// or admin-provided Secret mounted as two files. The proxy serves it to clients whose SNI is one of
// its names and keeps the auth-issued identity for everything else (in-cluster names, no SNI).
// Mounted Secrets change by a symlink swap that file watchers miss, so the files are polled; a
// change is taken only when the certificate parses and matches the key (never half an update).
import { createHash, createPrivateKey, X509Certificate } from "node:crypto";
import { readFile } from "node:fs/promises";
import { createSecureContext, type SecureContext } from "node:tls";
import { PreconditionFailedError } from "../../core/errors.ts";

export interface PublicTlsFiles {
  cert_file: string;
  key_file: string;
}

export interface LoadedPublicTls {
  context: SecureContext;
  /** The leaf certificate (first in the chain): its names decide which clients get it. */
  leaf: X509Certificate;
  /** Digest of both files: equal digests mean unchanged files. */
  digest: string;
}

/** How often `svcd proxy` looks at the files: a renewal is no emergency, the old one stays valid. */
export const PUBLIC_TLS_POLL_MS = 5_000;

/** Same bounds as the proxy's own HTTPS context. */
const CONTEXT_OPTIONS = { minVersion: "TLSv1.2" } as const;

/**
 * Reads and checks the two files; PreconditionFailedError (never with key bytes) when unusable.
 * Undefined when their digest is `known` (unchanged: nothing parsed).
 */
export async function readPublicTls(
  files: PublicTlsFiles,
  known?: string,
): Promise<LoadedPublicTls | undefined> {
  const read = async (path: string, what: string) => {
    try {
      return await readFile(path, "utf8");
    } catch (err) {
      throw new PreconditionFailedError(
        `public TLS ${what} ${path}: ${(err as NodeJS.ErrnoException).code ?? "unreadable"}`,
      );
    }
  };
  const certPem = await read(files.cert_file, "certificate");
  const keyPem = await read(files.key_file, "key");
  const digest = createHash("sha256").update(certPem).update("\0").update(keyPem).digest("hex");
  if (digest === known) return undefined;
  let leaf: X509Certificate;
  let context: SecureContext;
  try {
    leaf = new X509Certificate(certPem);
    if (!leaf.checkPrivateKey(createPrivateKey(keyPem))) throw new Error("mismatch");
    context = createSecureContext({ ...CONTEXT_OPTIONS, cert: certPem, key: keyPem });
  } catch {
    // No detail: a key parser's message must not carry key bytes into a log.
    throw new PreconditionFailedError(
      `public TLS files ${files.cert_file}, ${files.key_file} do not hold a certificate and its key`,
    );
  }
  return { context, leaf, digest };
}

export type SniCallback = (servername: string, cb: (err: Error | null, ctx?: SecureContext) => void) => void;

export interface PublicTlsOptions {
  /** Poll interval (mounted Secrets change by a symlink swap). */
  intervalMs: number;
  /** A new certificate is in service. */
  onLoad?: (loaded: LoadedPublicTls) => void;
  /**
   * The files are missing or unusable; the last good certificate (or the identity) stays. Called
   * when the problem starts or changes, not on every poll.
   */
  onError?: (err: unknown) => void;
}

/**
 * Keeps the public certificate current. `sniCallback` hands it to a client whose SNI matches one
 * of its names (wildcards included), and the default context (the auth-issued identity) to all
 * others. Missing files at start are not fatal: cert-manager may issue the Secret after the Pod
 * starts, and until then the identity serves every name.
 */
export class PublicTls {
  #current: LoadedPublicTls | undefined;
  #timer: NodeJS.Timeout | undefined;
  #busy = false;
  #problem: string | undefined;
  readonly #files: PublicTlsFiles;
  readonly #o: PublicTlsOptions;

  private constructor(files: PublicTlsFiles, o: PublicTlsOptions) {
    this.#files = files;
    this.#o = o;
  }

  /** Loads the files once (errors reported, not thrown) and starts polling. */
  static async start(files: PublicTlsFiles, o: PublicTlsOptions): Promise<PublicTls> {
    const p = new PublicTls(files, o);
    await p.#poll();
    p.#timer = setInterval(() => void p.#poll(), o.intervalMs);
    p.#timer.unref();
    return p;
  }

  readonly sniCallback: SniCallback = (servername, cb) => {
    const cur = this.#current;
    // checkHost: RFC 6125 (SAN dNSNames; a wildcard stands for one whole label, as in browsers).
    // No SNI (clients dialing an IP address) never matches.
    const match = cur && servername && cur.leaf.checkHost(servername, { partialWildcards: false });
    cb(null, match ? cur.context : undefined);
  };

  close(): void {
    clearInterval(this.#timer);
  }

  async #poll(): Promise<void> {
    if (this.#busy) return;
    this.#busy = true;
    try {
      const loaded = await readPublicTls(this.#files, this.#current?.digest);
      this.#problem = undefined;
      if (!loaded) return;
      this.#current = loaded;
      this.#o.onLoad?.(loaded);
    } catch (err) {
      const problem = err instanceof Error ? err.message : String(err);
      if (problem !== this.#problem) this.#o.onError?.(err);
      this.#problem = problem;
    } finally {
      this.#busy = false;
    }
  }
}
