// Per-host certificates for app hosts where the proxy holds the host CA (`svcd start`,
// docs/apps.md): TLS clients (browsers, Node, OpenSSL, curl) refuse a wildcard over a single label,
// so `*.localhost` never verifies for `grafana.localhost`. The app server's SNI callback asks here
// for a certificate naming exactly the host, issued on first use for a host an App is reached at,
// cached, re-issued at half its life and after the host CA changes (`reset`). Other names get the
// server's default certificate. Kubernetes (no CA key at the proxy) keeps the wildcard.
import { createSecureContext, type SecureContext } from "node:tls";
import type { Clock } from "../../../core/clock.ts";
import type { Logger } from "../../logger.ts";
import { renewalTime } from "../../roles/server-cert-renewal.ts";
import type { TlsIdentity } from "../../wiring.ts";
import type { ProxyTls } from "../config.ts";

export interface AppHostCertsOptions {
  /** Whether an App is reached at this host (lower-case, no port): only those get a certificate. */
  known: (host: string) => boolean;
  /** Issues a server certificate naming exactly `host`, by the host CA that signs now. */
  issue: (host: string) => Promise<TlsIdentity>;
  clock: Clock;
  logger: Logger;
  /** Most certificates held (oldest dropped first); default 4096. App hosts bound it anyway. */
  maxEntries?: number;
}

type SniCallback = NonNullable<ProxyTls["sniCallback"]>;

interface Entry {
  context: SecureContext;
  certPem: string;
  renewAt: number;
}

export class AppHostCerts {
  readonly #o: AppHostCertsOptions;
  readonly #entries = new Map<string, Entry>();
  /** One issue per host at a time: concurrent handshakes wait for the same certificate. */
  readonly #pending = new Map<string, Promise<Entry>>();
  #generation = 0;

  constructor(o: AppHostCertsOptions) {
    this.#o = o;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** For the app server: a context for a known app host, none (the default) for anything else. */
  readonly sniCallback: SniCallback = (servername, cb) => {
    const host = (servername || "").toLowerCase();
    if (host === "" || !this.#o.known(host)) {
      cb(null);
      return;
    }
    this.#entry(host).then(
      (e) => cb(null, e.context),
      (err: unknown) => {
        // The default certificate still serves (a wildcard some clients accept) rather than none.
        this.#o.logger.warn(
          { host, err: err instanceof Error ? err.message : String(err) },
          "app host certificate not issued",
        );
        cb(null);
      },
    );
  };

  /** The certificate served for `host` now (tests, diagnostics); undefined until first use. */
  certificate(host: string): string | undefined {
    return this.#entries.get(host.toLowerCase())?.certPem;
  }

  /** The host CA changed (rotation) or the proxy's own certificate was renewed: issue afresh. */
  reset(): void {
    this.#generation++;
    this.#entries.clear();
    this.#pending.clear();
  }

  async #entry(host: string): Promise<Entry> {
    const cached = this.#entries.get(host);
    if (cached && this.#o.clock.now().getTime() < cached.renewAt) return cached;
    const pending = this.#pending.get(host);
    if (pending) return pending;
    const generation = this.#generation;
    const p = this.#issue(host, generation).finally(() => {
      if (this.#pending.get(host) === p) this.#pending.delete(host);
    });
    this.#pending.set(host, p);
    return p;
  }

  async #issue(host: string, generation: number): Promise<Entry> {
    const t = await this.#o.issue(host);
    const entry: Entry = {
      context: createSecureContext({ cert: t.certPem, key: t.keyPem, minVersion: "TLSv1.2" }),
      certPem: t.certPem,
      renewAt: renewalTime(t.certPem),
    };
    // An issue that raced a reset (CA rotation) serves its handshake but is not kept.
    if (generation === this.#generation) {
      this.#entries.delete(host);
      this.#entries.set(host, entry);
      const max = this.#o.maxEntries ?? 4096;
      for (const oldest of this.#entries.keys()) {
        if (this.#entries.size <= max) break;
        this.#entries.delete(oldest);
      }
    }
    return entry;
  }
}
