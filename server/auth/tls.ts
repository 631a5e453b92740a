// TLS for the auth listener: TLS 1.3 only, server certificate from the host CA, client
// certificates requested and verified against the host CA but not required (the join RPCs are
// reached before a client has one). grpc-js's createSsl cannot set a minimum protocol version, so
// this subclass hands Node's http2.createSecureServer the options directly; grpc-js merges
// constructor and secure-context options into that call.
import { ChannelCredentials, ServerCredentials } from "@grpc/grpc-js";

export interface AuthServerTlsOptions {
  /** PEM server certificate chain (leaf first), issued by the host CA. */
  certPem: string;
  /** PEM private key of the server certificate. */
  keyPem: string;
  /** PEM host CA certificate(s) client certificates are verified against. */
  clientCaPems: readonly string[];
}

class Tls13ServerCredentials extends ServerCredentials {
  readonly #key: string;
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
      {
        minVersion: "TLSv1.3",
        cert: opts.certPem,
        key: opts.keyPem,
        ca: [...opts.clientCaPems],
      },
    );
    this.#key = `${opts.certPem}\n${opts.keyPem}\n${opts.clientCaPems.join("\n")}`;
  }
  _equals(other: ServerCredentials): boolean {
    return other instanceof Tls13ServerCredentials && other.#key === this.#key;
  }
}

export function authServerCredentials(opts: AuthServerTlsOptions): ServerCredentials {
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
  return ChannelCredentials.createSsl(
    ca,
    opts.keyPem === undefined ? null : Buffer.from(opts.keyPem),
    opts.certPem === undefined ? null : Buffer.from(opts.certPem),
  );
}
