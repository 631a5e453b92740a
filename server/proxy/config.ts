// What the proxy needs to know about itself. Everything here is public or local (no CA keys):
// the proxy signs nothing and keeps no state, so any number of replicas can share one config.
import type { SecureContext } from "node:tls";

export interface ClientVersionPolicy {
  /** CLIs older than this are refused by the cluster (semver, e.g. "0.1.0"). */
  minimum: string;
  /** CLIs older than this are told to upgrade. */
  recommended: string;
}

export interface ProxyRateLimit {
  /** login / MFA attempts per client address per window */
  perAddress: number;
  /** login / MFA attempts per username per window */
  perUsername: number;
  windowMs: number;
}

/** Limits that protect the platform (`proxy.limits.*`); per proxy replica, in memory. */
export interface ProxyLimits {
  /** browser terminals one user may have open at once */
  terminalsPerUser: number;
  /** browser terminals this proxy holds open at once */
  terminalsPerProxy: number;
  /** largest WebSocket message a browser may send; the terminal closes with 1009 above it */
  wsMessageBytes: number;
  /** requests per session: token bucket refill rate */
  sessionRequestsPerSecond: number;
  /** requests per session: bucket size (burst) */
  sessionRequestBurst: number;
}

export interface ProxyConfig {
  /** Address to bind, e.g. 0.0.0.0 (127.0.0.1 in tests). */
  listenHost: string;
  /** Port to bind; 3080 by default, 0 in tests. */
  listenPort: number;
  /**
   * The public origin browsers use, e.g. "https://proxy.example.com:3080". It is the CSRF Origin
   * check, the WebAuthn origin and (its host) the WebAuthn relying-party id.
   */
  publicUrl: string;
  clusterName: string;
  serverVersion: string;
  clientVersionPolicy: ClientVersionPolicy;
  /** `proxy.oidc_issuer_url`: issuer of workload-identity JWT SVIDs. */
  oidcIssuerUrl: string;
  /** Request body limit in bytes (413 above it). */
  bodyLimit: number;
  rateLimit: ProxyRateLimit;
  /**
   * Addresses/CIDRs of load balancers whose X-Forwarded-For is believed (the client address
   * for rate limits and audit). Empty: the TCP peer is the client.
   */
  trustedProxies: string[];
  limits: ProxyLimits;
  /**
   * A connection on the public port must send its whole TLS ClientHello within this (ms) or is
   * closed; routing/client-hello.ts CLIENT_HELLO_TIMEOUT_MS when unset (tests shorten it).
   */
  clientHelloTimeoutMs?: number;
}

export interface ProxyTls {
  /** PEM server certificate chain issued by the host CA for the public address. */
  certPem: string;
  keyPem: string;
  /**
   * Picks another certificate by SNI (`proxy.public_tls`); a callback answering no context keeps
   * the one above.
   */
  sniCallback?: (servername: string, cb: (err: Error | null, ctx?: SecureContext) => void) => void;
}

export const proxyDefaults = {
  listenHost: "0.0.0.0",
  listenPort: 3080,
  bodyLimit: 64 * 1024,
  rateLimit: { perAddress: 20, perUsername: 10, windowMs: 60_000 },
  trustedProxies: [] as string[],
  limits: {
    terminalsPerUser: 32,
    terminalsPerProxy: 1000,
    wsMessageBytes: 1024 * 1024,
    sessionRequestsPerSecond: 20,
    sessionRequestBurst: 100,
  } as ProxyLimits,
} satisfies Partial<ProxyConfig>;

/** The WebAuthn relying-party id and origin follow from the public address. */
export function relyingParty(config: Pick<ProxyConfig, "publicUrl" | "clusterName">): {
  rpId: string;
  rpName: string;
  origin: string;
} {
  const url = new URL(config.publicUrl);
  return { rpId: url.hostname, rpName: config.clusterName, origin: url.origin };
}

/** The proxy's view of the daemon configuration file (server/config.ts). */
export function proxyConfigFrom(
  file: {
    cluster_name: string;
    proxy: {
      listen_addr: string;
      public_addr: string;
      oidc_issuer_url: string;
      trusted_proxies?: string[];
      limits?: {
        terminals_per_user: number;
        terminals_per_proxy: number;
        ws_message_bytes: number;
        session_requests_per_second: number;
        session_request_burst: number;
      };
    };
    client_tools: { min_version: string; recommended_version: string };
  },
  serverVersion: string,
): ProxyConfig {
  const i = file.proxy.listen_addr.lastIndexOf(":");
  const publicPort = file.proxy.public_addr.slice(file.proxy.public_addr.lastIndexOf(":") + 1);
  const publicHost = file.proxy.public_addr.slice(0, file.proxy.public_addr.lastIndexOf(":"));
  return {
    ...proxyDefaults,
    listenHost: file.proxy.listen_addr.slice(0, i).replace(/^\[|\]$/g, ""),
    listenPort: Number(file.proxy.listen_addr.slice(i + 1)),
    // the default HTTPS port is left out of the origin, as browsers do
    publicUrl: publicPort === "443" ? `https://${publicHost}` : `https://${file.proxy.public_addr}`,
    clusterName: file.cluster_name,
    serverVersion,
    clientVersionPolicy: {
      minimum: file.client_tools.min_version,
      recommended: file.client_tools.recommended_version,
    },
    oidcIssuerUrl: file.proxy.oidc_issuer_url,
    trustedProxies: [...(file.proxy.trusted_proxies ?? [])],
    limits: limitsFrom(file.proxy.limits),
  };
}

/** `proxy.limits` of the config file (checked, defaults filled) -> ProxyLimits. */
function limitsFrom(
  l:
    | {
        terminals_per_user: number;
        terminals_per_proxy: number;
        ws_message_bytes: number;
        session_requests_per_second: number;
        session_request_burst: number;
      }
    | undefined,
): ProxyLimits {
  if (l === undefined) return { ...proxyDefaults.limits };
  return {
    terminalsPerUser: l.terminals_per_user,
    terminalsPerProxy: l.terminals_per_proxy,
    wsMessageBytes: l.ws_message_bytes,
    sessionRequestsPerSecond: l.session_requests_per_second,
    sessionRequestBurst: l.session_request_burst,
  };
}
