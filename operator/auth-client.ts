// The operator's auth hooks over gRPC: SessionRevoker and TokenUsage as calls to auth's
// RevokeUserSessions and GetJoinTokenUsage. The operator proves who it is with a host-CA client
// certificate naming svc://operator/<name>; it issues that certificate itself, since it holds the
// CA Secrets (it created them). The CAs are read on first use (they may not exist at start), and
// the certificate is re-issued when half its lifetime has passed, or at once after a CA rotation
// changed the phases (docs/ca-rotation.md): then the client trusts every trusted host CA and its
// certificate comes from the key that signs now.

import { CertificateAuthorities } from "../core/ca/authorities.ts";
import type { CaKeyStore } from "../core/ca/key-store.ts";
import type { RotationStateStore } from "../core/ca/rotation-store.ts";
import { TLS_CLIENT_TTL_SECONDS } from "../core/certs/x509.ts";
import type { Clock } from "../core/clock.ts";
import { BadParameterError, isNotFound } from "../core/errors.ts";
import { type AuthServiceClient, agentMetadata, callUnary, createAuthClient } from "../server/auth/client.ts";
import { issueServiceClientIdentity } from "../server/wiring.ts";
import type { SessionRevoker, TokenRedemption, TokenUsage } from "./auth-hooks.ts";

export interface OperatorAuthClientOptions {
  /** host:port of auth's gRPC listener (the auth Service in a cluster). */
  address: string;
  /** Name to verify in auth's server certificate when it differs from the address host. */
  serverName?: string;
  /** Where the CAs are (the CA Secrets); the host CA signs the operator's client certificate. */
  caStore: CaKeyStore;
  /** The CA rotation state beside the CA Secrets; without it the CAs' first keys are used. */
  rotationStore?: RotationStateStore;
  clusterName: string;
  trustDomain: string;
  /** The operator's name in its certificate (svc://operator/<name>). */
  name: string;
  clock: Clock;
  /** Deadline of one call (default 15 s). */
  callTimeoutMs?: number;
}

interface Connection {
  client: AuthServiceClient;
  renewAt: number;
  /** the rotation state's revision the certificate and trust were made from */
  revision: string | undefined;
}

export class OperatorAuthClient implements SessionRevoker, TokenUsage {
  readonly #o: OperatorAuthClientOptions;
  #conn: Promise<Connection> | undefined;
  #closed = false;

  constructor(opts: OperatorAuthClientOptions) {
    if (!opts.address) throw new BadParameterError("the auth address is empty");
    this.#o = opts;
  }

  async #connect(): Promise<Connection> {
    const o = this.#o;
    // Only the leader calls auth, after it made sure the CAs exist: this loads, it never creates.
    const cas = await CertificateAuthorities.loadOrCreate(o.caStore, {
      clusterName: o.clusterName,
      trustDomain: o.trustDomain,
      clock: o.clock,
      ...(o.rotationStore ? { rotationStore: o.rotationStore } : {}),
    });
    const identity = await issueServiceClientIdentity(cas, {
      role: "operator",
      name: o.name,
      clock: o.clock,
    });
    const client = createAuthClient({
      address: o.address,
      caPems: cas.trustedHostCaPems(),
      ...identity,
      ...(o.serverName ? { serverName: o.serverName } : {}),
    });
    return {
      client,
      renewAt: o.clock.now().getTime() + (TLS_CLIENT_TTL_SECONDS * 1000) / 2,
      revision: cas.keySet.revision,
    };
  }

  async #client(): Promise<AuthServiceClient> {
    if (this.#closed) throw new BadParameterError("the auth client is closed");
    const current = this.#conn;
    if (current) {
      let conn: Connection | undefined;
      try {
        conn = await current;
      } catch {
        // A failed connect (CAs unreadable for a moment) is tried again on the next call.
      }
      // One read of the rotation state per call: the operator calls auth rarely.
      const revision = this.#o.rotationStore
        ? await this.#o.rotationStore.read().then(
            (r) => r?.revision,
            () => conn?.revision, // unreadable for a moment: keep what works
          )
        : undefined;
      if (conn && conn.renewAt > this.#o.clock.now().getTime() && conn.revision === revision)
        return conn.client;
      if (this.#conn === current) {
        conn?.client.close();
        this.#conn = undefined;
      }
    }
    this.#conn ??= this.#connect();
    return (await this.#conn).client;
  }

  #call<T>(run: (client: AuthServiceClient, deadline: Date) => Promise<T>): Promise<T> {
    return this.#client().then((client) =>
      run(client, new Date(this.#o.clock.now().getTime() + (this.#o.callTimeoutMs ?? 15_000))),
    );
  }

  #metadata() {
    return agentMetadata(`operator:${this.#o.name}`);
  }

  async revokeUserSessions(user: string): Promise<void> {
    await this.#call((client, deadline) =>
      callUnary(client, "RevokeUserSessions", { username: user }, this.#metadata(), { deadline }),
    );
  }

  async redemption(name: string): Promise<TokenRedemption | undefined> {
    try {
      const u = await this.#call((client, deadline) =>
        callUnary(client, "GetJoinTokenUsage", { name }, this.#metadata(), { deadline }),
      );
      if (!u.used) return undefined;
      return {
        usedBy: u.used_by || u.used_by_id,
        usedAt: new Date(Number(u.used_at_unix_ms ?? 0)).toISOString(),
      };
    } catch (err) {
      // Auth has not seen the token yet (its informer lags the operator's): not used as far as
      // anyone can tell; the reconciler looks again.
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  close(): void {
    this.#closed = true;
    const current = this.#conn;
    this.#conn = undefined;
    void current?.then(
      (c) => c.client.close(),
      () => undefined,
    );
  }
}
