// What the CLI-facing proxy routes ask auth, beyond the web API's AuthApi: IssueUserCerts with the
// caller's session (`svc certs`, `svc ssh --direct`) and the unauthenticated ResetPassword (the
// one-time token is the proof). Auth decides everything; the proxy only forwards.
import { Metadata } from "@grpc/grpc-js";
import { UnavailableError } from "../../core/errors.ts";
import {
  type AuthConnection,
  type AuthServiceClient,
  type AuthSource,
  callUnary,
  connectionOf,
  userMetadata,
  waitForReady,
} from "../auth/client.ts";

export interface IssuedUserCerts {
  certificate: string;
  principals: string[];
  keyId: string;
  validAfter: Date;
  validBefore: Date;
  hostCaKeys: string[];
}

export interface CliAuthApi {
  /** `node` (hostname or id, optional) scopes the certificate to that node's logins. */
  issueUserCerts(
    sessionId: string,
    publicKeyLine: string,
    ttlSeconds: number,
    node?: string,
  ): Promise<IssuedUserCerts>;
  resetPassword(token: string, newPassword: string): Promise<{ username: string }>;
  close(): void;
}

export interface GrpcCliAuthOptions {
  address: string;
  caPems: readonly string[];
  /** the proxy's own client certificate and key, issued by the host CA */
  certPem: string;
  keyPem: string;
  serverName?: string;
  timeoutMs?: number;
}

export class GrpcCliAuthApi implements CliAuthApi {
  readonly #connection: AuthConnection;
  readonly #client: AuthServiceClient;
  readonly #owned: boolean;
  readonly #timeoutMs: number;

  /** Takes the process's shared connection to auth (or options for a private one). */
  constructor(source: AuthSource | GrpcCliAuthOptions) {
    const c = connectionOf(source);
    this.#connection = c.connection;
    this.#client = c.connection.client;
    this.#owned = c.owned;
    this.#timeoutMs = c.timeoutMs;
  }

  async issueUserCerts(
    sessionId: string,
    publicKeyLine: string,
    ttlSeconds: number,
    node = "",
  ): Promise<IssuedUserCerts> {
    const r = await callUnary(
      this.#client,
      "IssueUserCerts",
      { ssh_public_key: publicKeyLine, ttl_seconds: ttlSeconds, node },
      // Wait-for-ready; retried once on UNAVAILABLE before any answer (RETRIED_ONCE, client.ts).
      waitForReady(userMetadata(sessionId)),
      { deadline: Date.now() + this.#timeoutMs },
    );
    if (!r.ssh_certificate) throw new UnavailableError("auth issued no certificate");
    return {
      certificate: r.ssh_certificate,
      principals: r.principals ?? [],
      keyId: r.key_id,
      validAfter: new Date(Number(r.valid_after_unix_ms)),
      validBefore: new Date(Number(r.valid_before_unix_ms)),
      hostCaKeys: r.host_ca_ssh_public_keys ?? [],
    };
  }

  async resetPassword(token: string, newPassword: string): Promise<{ username: string }> {
    const r = await callUnary(
      this.#client,
      "ResetPassword",
      { token, new_password: newPassword },
      waitForReady(new Metadata()),
      { deadline: Date.now() + this.#timeoutMs },
    );
    return { username: r.username };
  }

  close(): void {
    if (this.#owned) this.#connection.close();
  }
}
