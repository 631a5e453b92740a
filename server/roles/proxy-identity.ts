// The proxy's TLS identity, issued by auth (the only holder of the host CA key) into one Kubernetes
// Secret the proxy Pods mount: a server certificate for the proxy's public names, a client
// certificate `svc://proxy/<name>` for its gRPC calls to auth, and the host CA certificate.
// Auth re-issues it when less than half of its lifetime remains, when the names change or when the
// host CA changed: during a CA rotation ca.crt holds every trusted host CA (the signing one first)
// and the certificates are re-issued as soon as the signing key switches (docs/ca-rotation.md). Several auth replicas may race: writes carry the resourceVersion (create → 409,
// replace → 409), so one wins and the others read its result.
import { X509Certificate } from "node:crypto";
import { CoreV1Api, type KubeConfig, type V1Secret } from "@kubernetes/client-node";
import type { CertificateAuthorities } from "../../core/ca/authorities.ts";
import {
  generateEcdsaP256,
  issueTlsClientCert,
  issueTlsServerCert,
  parseCertificatePem,
  privateKeyToPem,
  serviceIdentityUri,
} from "../../core/certs/x509.ts";
import type { Clock } from "../../core/clock.ts";
import { PreconditionFailedError } from "../../core/errors.ts";
import { kubeError, kubeStatusCode, PART_OF_LABEL, PART_OF_VALUE } from "../../core/sources/kube-api.ts";
import type { Logger } from "../logger.ts";

/** File names inside the Secret (and so inside the proxy's mounted folder). */
export const PROXY_IDENTITY_FILES = {
  certPem: "tls.crt",
  keyPem: "tls.key",
  clientCertPem: "client.crt",
  clientKeyPem: "client.key",
  caPem: "ca.crt",
} as const;

export interface ProxyIdentity {
  certPem: string;
  keyPem: string;
  clientCertPem: string;
  clientKeyPem: string;
  /** The host CAs to trust (PEM bundle, the signing one first): one issued auth's server certificate. */
  caPem: string;
}

/** Secret type: kubernetes.io/tls (tls.crt + tls.key) with our extra keys beside them. */
export const PROXY_IDENTITY_SECRET_TYPE = "kubernetes.io/tls";
/** Label marking the Secret as the proxy identity auth manages; a same-named Secret without it is refused. */
export const IDENTITY_LABEL = "svc.dev/identity";
/** Annotation with the names the server certificate was issued for (comma-separated, sorted). */
export const NAMES_ANNOTATION = "svc.dev/names";

const IP = /^(\d{1,3}(\.\d{1,3}){3}|[0-9a-f:]*:[0-9a-f:]*)$/i;

/**
 * The names the proxy's server certificate carries for its public host: the host itself and,
 * for a DNS name, `*.<host>` (app hosts are one label under it; docs/apps.md). An IP has no
 * subdomains, so it gets no wildcard.
 */
export function proxyPublicNames(publicHost: string): string[] {
  return IP.test(publicHost) ? [publicHost] : [publicHost, `*.${publicHost}`];
}

export async function issueProxyIdentity(
  cas: CertificateAuthorities,
  o: { names: readonly string[]; clientName: string; ttlSeconds: number; clock: Clock },
): Promise<ProxyIdentity> {
  const names = [...new Set(o.names)];
  const server = generateEcdsaP256();
  const client = generateEcdsaP256();
  const certPem = await issueTlsServerCert(cas.hostCa, {
    publicKey: server.publicKey,
    commonName: names[0] ?? "proxy",
    dnsNames: names.filter((n) => !IP.test(n)),
    ips: names.filter((n) => IP.test(n)),
    clock: o.clock,
    ttlSeconds: o.ttlSeconds,
  });
  const clientCertPem = await issueTlsClientCert(cas.hostCa, {
    publicKey: client.publicKey,
    commonName: "proxy",
    uri: serviceIdentityUri("proxy", o.clientName),
    clock: o.clock,
    ttlSeconds: o.ttlSeconds,
  });
  return {
    certPem,
    keyPem: privateKeyToPem(server.privateKey),
    clientCertPem,
    clientKeyPem: privateKeyToPem(client.privateKey),
    caPem: cas.trustedHostCaPems().join(""),
  };
}

export interface ProxyIdentitySecretOptions {
  kubeConfig: KubeConfig;
  namespace: string;
  secretName: string;
  cas: CertificateAuthorities;
  /** Names (DNS or IP) on the proxy's server certificate. */
  names: readonly string[];
  /** <name> in the client certificate's `svc://proxy/<name>`. */
  clientName: string;
  ttlMs: number;
  clock: Clock;
  logger: Logger;
  /** Longest wait between two checks (default 5 min): a deleted Secret comes back within it. */
  maxCheckIntervalMs?: number;
}

export type IdentityOutcome = "created" | "renewed" | "kept";

const namesKey = (names: readonly string[]): string => [...new Set(names)].sort().join(",");

export class ProxyIdentitySecret {
  readonly #o: ProxyIdentitySecretOptions;
  readonly #api: CoreV1Api;
  #timer: NodeJS.Timeout | undefined;
  #running = false;
  #failures = 0;
  /** When the current certificate should be renewed (ms since epoch). */
  #renewAt = 0;
  #offCas: (() => void) | undefined;

  constructor(o: ProxyIdentitySecretOptions) {
    this.#o = o;
    this.#api = o.kubeConfig.makeApiClient(CoreV1Api);
  }

  /** Makes the Secret hold a valid identity; resolves with what it did. */
  async reconcile(): Promise<IdentityOutcome> {
    const { namespace, secretName: name } = this.#o;
    const what = `proxy identity Secret "${name}"`;
    for (let attempt = 1; ; attempt++) {
      let existing: V1Secret | undefined;
      try {
        existing = await this.#api.readNamespacedSecret({ name, namespace });
      } catch (err) {
        if (kubeStatusCode(err) !== 404) throw kubeError(err, what);
      }
      if (existing && existing.metadata?.labels?.[IDENTITY_LABEL] !== "proxy") {
        throw new PreconditionFailedError(`${what} exists but is not labelled ${IDENTITY_LABEL}=proxy`);
      }
      if (existing && !this.#needsRenewal(existing)) return "kept";
      const body = await this.#secretBody(existing?.metadata?.resourceVersion);
      try {
        if (existing) await this.#api.replaceNamespacedSecret({ name, namespace, body });
        else await this.#api.createNamespacedSecret({ namespace, body });
        this.#renewAt = this.#renewalTime(body);
        return existing ? "renewed" : "created";
      } catch (err) {
        // Another auth replica wrote first: read its result and judge that instead.
        if (kubeStatusCode(err) === 409 && attempt < 5) continue;
        throw kubeError(err, what);
      }
    }
  }

  /** Reconciles now and then again before half the lifetime is used, until stop(). */
  start(): void {
    if (this.#running) return;
    this.#running = true;
    // A CA phase change (here or on another replica) is looked at now, not at the next check.
    this.#offCas = this.#o.cas.onChange(() => {
      if (this.#timer) clearTimeout(this.#timer);
      this.#schedule(0);
    });
    this.#schedule(0);
  }

  stop(): void {
    this.#running = false;
    this.#offCas?.();
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #schedule(ms: number): void {
    if (!this.#running) return;
    this.#timer = setTimeout(() => void this.#tick(), ms);
    this.#timer.unref();
  }

  async #tick(): Promise<void> {
    const maxWait = this.#o.maxCheckIntervalMs ?? 5 * 60_000;
    try {
      const outcome = await this.reconcile();
      this.#failures = 0;
      if (outcome !== "kept") {
        this.#o.logger.info(
          { secret: this.#o.secretName, outcome, renewAt: new Date(this.#renewAt).toISOString() },
          "proxy identity issued",
        );
      }
      const untilRenewal = this.#renewAt - this.#o.clock.now().getTime();
      this.#schedule(Math.max(1_000, Math.min(maxWait, untilRenewal)));
    } catch (err) {
      this.#failures++;
      const delay = Math.min(60_000, 1_000 * 2 ** Math.min(this.#failures - 1, 10));
      this.#o.logger.warn({ err, secret: this.#o.secretName, retryInMs: delay }, "proxy identity not issued");
      this.#schedule(delay);
    }
  }

  #needsRenewal(secret: V1Secret): boolean {
    const data = secret.data ?? {};
    const decoded = (key: string): string => Buffer.from(data[key] ?? "", "base64").toString("utf8");
    const trusted = this.#o.cas.trustedHostCaPems();
    if (decoded(PROXY_IDENTITY_FILES.caPem).trim() !== trusted.join("").trim()) return true;
    if (secret.metadata?.annotations?.[NAMES_ANNOTATION] !== namesKey(this.#o.names)) return true;
    for (const key of Object.values(PROXY_IDENTITY_FILES)) if (!data[key]) return true;
    let renewAt: number;
    try {
      // Issued by a key that no longer signs (a rotation switched): re-issue by the new one.
      const signer = new X509Certificate(this.#o.cas.hostCa.certPem);
      for (const key of [PROXY_IDENTITY_FILES.certPem, PROXY_IDENTITY_FILES.clientCertPem])
        if (!new X509Certificate(decoded(key)).checkIssued(signer)) return true;
      renewAt = this.#renewalTime(secret);
    } catch {
      return true; // unreadable certificates are replaced
    }
    this.#renewAt = renewAt;
    return this.#o.clock.now().getTime() >= renewAt;
  }

  /** Half-way through the shorter-lived of the two certificates. */
  #renewalTime(secret: V1Secret): number {
    let at = Number.POSITIVE_INFINITY;
    for (const key of [PROXY_IDENTITY_FILES.certPem, PROXY_IDENTITY_FILES.clientCertPem]) {
      const cert = parseCertificatePem(Buffer.from(secret.data?.[key] ?? "", "base64").toString("utf8"));
      const from = cert.notBefore.getTime();
      const to = cert.notAfter.getTime();
      at = Math.min(at, from + (to - from) / 2);
    }
    return at;
  }

  async #secretBody(resourceVersion: string | undefined): Promise<V1Secret> {
    const identity = await issueProxyIdentity(this.#o.cas, {
      names: this.#o.names,
      clientName: this.#o.clientName,
      ttlSeconds: Math.max(60, Math.round(this.#o.ttlMs / 1000)),
      clock: this.#o.clock,
    });
    const data: Record<string, string> = {};
    for (const [field, file] of Object.entries(PROXY_IDENTITY_FILES)) {
      data[file] = Buffer.from(identity[field as keyof ProxyIdentity]).toString("base64");
    }
    return {
      apiVersion: "v1",
      kind: "Secret",
      metadata: {
        name: this.#o.secretName,
        namespace: this.#o.namespace,
        labels: { [PART_OF_LABEL]: PART_OF_VALUE, [IDENTITY_LABEL]: "proxy" },
        annotations: { [NAMES_ANNOTATION]: namesKey(this.#o.names) },
        ...(resourceVersion ? { resourceVersion } : {}),
      },
      type: PROXY_IDENTITY_SECRET_TYPE,
      data,
    };
  }
}
