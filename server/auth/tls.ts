// TLS for the auth listener: TLS 1.3 only, server certificate from the host CA, client
// certificates requested and verified against the host CA but not required (the join RPCs are
// reached before a client has one). grpc-js's createSsl cannot set a minimum protocol version, so
// this subclass hands Node's http2.createSecureServer the options directly; grpc-js merges
// constructor and secure-context options into that call.
import { isIP } from "node:net";
import type { ConnectionOptions } from "node:tls";
import { ChannelCredentials, ServerCredentials } from "@grpc/grpc-js";

export interface AuthServerTlsOptions {
  /** PEM server certificate chain (leaf first), issued by the host CA. */
  certPem: string;
  /** PEM private key of the server certificate. */
  keyPem: string;
  /** PEM host CA certificate(s) client certificates are verified against. */
  clientCaPems: readonly string[];
}

// Context options: also what setSecureContext takes on a live server (it rebuilds the whole
// context from them, so the version bounds are repeated here).
function contextOptions(opts: AuthServerTlsOptions) {
  return {
    minVersion: "TLSv1.3" as const,
    maxVersion: "TLSv1.3" as const,
    cert: opts.certPem,
    key: opts.keyPem,
    ca: [...opts.clientCaPems],
  };
}

const keyOf = (opts: AuthServerTlsOptions) =>
  `${opts.certPem}\n${opts.keyPem}\n${opts.clientCaPems.join("\n")}`;

class Tls13ServerCredentials extends ServerCredentials {
  #key: string;
  constructor(opts: AuthServerTlsOptions) {
    super(
      {
        minVersion: "TLSv1.3",
        maxVersion: "TLSv1.3",
        requestCert: true,
        // Unverified or absent client certificates do not fail the handshake; grpc-js then
        // reports no peer certificate (its auth context needs socket.authorized), so such a
        // caller is simply not an agent.
        rejectUnauthorized: false,
      },
      contextOptions(opts),
    );
    this.#key = keyOf(opts);
  }
  _equals(other: ServerCredentials): boolean {
    return other instanceof Tls13ServerCredentials && other.#key === this.#key;
  }
  /**
   * A new certificate for every server bound with these credentials: grpc-js (>= 1.10) watches
   * its credentials and calls setSecureContext on each listener. New connections get the new
   * certificate; open ones keep theirs.
   */
  update(opts: AuthServerTlsOptions): void {
    this.#key = keyOf(opts);
    this.updateSecureContextOptions(contextOptions(opts));
  }
}

/** Server credentials whose certificate can be replaced while servers use them. */
export type ReloadableServerCredentials = ServerCredentials & { update(opts: AuthServerTlsOptions): void };

export function authServerCredentials(opts: AuthServerTlsOptions): ReloadableServerCredentials {
  return new Tls13ServerCredentials(opts);
}

export interface AuthClientTlsOptions {
  /** PEM host CA certificate(s) that issued auth's server certificate. */
  caPems: readonly string[];
  /** Client certificate (PEM) from the host CA; agents and the proxy present one. */
  certPem?: string;
  /** Private key (PEM) of the client certificate. */
  keyPem?: string;
}

/** Channel credentials for calling auth; with certPem/keyPem the caller presents its identity. */
export function authClientCredentials(opts: AuthClientTlsOptions): ChannelCredentials {
  const ca = Buffer.from(opts.caPems.join("\n"));
  if ((opts.certPem === undefined) !== (opts.keyPem === undefined)) {
    throw new TypeError("certPem and keyPem go together");
  }
  return withoutIpServerName(
    ChannelCredentials.createSsl(
      ca,
      opts.keyPem === undefined ? null : Buffer.from(opts.keyPem),
      opts.certPem === undefined ? null : Buffer.from(opts.certPem),
    ),
  );
}

type ConnectorArgs = Parameters<ChannelCredentials["_createSecureConnector"]>;

// grpc-js hands tls.connect the target host as ServerName (SNI) even when it is an IP address,
// which RFC 6066 forbids and Node answers with a DEP0123 deprecation warning on every agent that
// dials auth by IP. This wrapper drops the ServerName for IPs only. The certificate check is
// unchanged: Node checks `servername || host`, so an IP target is still matched against the
// certificate's IP SANs, and an explicit name override keeps grpc-js's own check of that name.
class NoIpServerNameCredentials extends ChannelCredentials {
  readonly #inner: ChannelCredentials;
  constructor(inner: ChannelCredentials) {
    super();
    this.#inner = inner;
  }
  _isSecure(): boolean {
    return this.#inner._isSecure();
  }
  _equals(other: ChannelCredentials): boolean {
    return other instanceof NoIpServerNameCredentials && this.#inner._equals(other.#inner);
  }
  _createSecureConnector(...args: ConnectorArgs): ReturnType<ChannelCredentials["_createSecureConnector"]> {
    const connector = this.#inner._createSecureConnector(...args);
    // The options grpc-js passes to tls.connect (a field of its TLS connector; test/agent-edges
    // fails if a grpc-js upgrade moves it, because the warning comes back).
    const tlsOptions = (connector as { connectionOptions?: ConnectionOptions }).connectionOptions;
    if (tlsOptions?.servername && isIP(tlsOptions.servername)) delete tlsOptions.servername;
    return connector;
  }
}

/** `creds` without an IP address as TLS ServerName (see NoIpServerNameCredentials). */
export function withoutIpServerName(creds: ChannelCredentials): ChannelCredentials {
  return new NoIpServerNameCredentials(creds);
}
