// The app forwarder's calls to auth (docs/apps.md): trade a one-time code for an app session,
// re-check a session for a fresh assertion, end one. All three are proxy-only RPCs: they go as
// the proxy ("proxy:<name>", its client certificate) over the proxy's shared connection to auth.
import type { CallOptions, Metadata, ServiceError } from "@grpc/grpc-js";
import type { AppSessionGrant__Output } from "../../../proto/generated/svc/v1/AppSessionGrant.ts";
import type { DeleteAppSessionResponse__Output } from "../../../proto/generated/svc/v1/DeleteAppSessionResponse.ts";
import { AUTH_CALL_TIMEOUT_MS, type AuthConnection, fromGrpcError, waitForReady } from "../../auth/client.ts";

/** What the proxy needs to forward requests of one app session (AppSessionGrant, typed). */
export interface AppGrant {
  /** Only in the answer of exchange (the cookie value); "" otherwise. */
  sessionId: string;
  username: string;
  roles: string[];
  traits: Record<string, string[]>;
  appName: string;
  /** Where requests go (the App's spec.uri). */
  appUri: string;
  /** The host the session is bound to (lower-case, no port). */
  publicAddr: string;
  insecureSkipVerify: boolean;
  /** rewrite.headers, templates already filled in for this user. */
  headers: Array<{ name: string; value: string }>;
  redirectHosts: string[];
  expiresMs: number;
  /** The Svc-Jwt-Assertion value and when it expires. */
  assertion: string;
  assertionExpiresMs: number;
  /** SHA-256 hex of the web session this app session was started from. */
  webSessionHash: string;
}

export interface AppAuthApi {
  exchangeAppSession(code: string, publicAddr: string): Promise<AppGrant>;
  /** `fast`: fail at once when auth is not connected (a cached grant can answer meanwhile). */
  getAppSession(sessionId: string, publicAddr: string, o?: { fast?: boolean }): Promise<AppGrant>;
  deleteAppSession(sessionId: string): Promise<void>;
}

export function grantOf(g: AppSessionGrant__Output): AppGrant {
  return {
    sessionId: g.session_id,
    username: g.username,
    roles: [...g.roles],
    traits: Object.fromEntries(Object.entries(g.traits).map(([k, v]) => [k, [...v.values]])),
    appName: g.app_name,
    appUri: g.app_uri,
    publicAddr: g.public_addr.toLowerCase(),
    insecureSkipVerify: g.insecure_skip_verify,
    headers: g.headers.map((h) => ({ name: h.name, value: h.value })),
    redirectHosts: g.redirect_hosts.map((h) => h.toLowerCase()),
    expiresMs: Number(g.expires_unix_ms),
    assertion: g.assertion,
    assertionExpiresMs: Number(g.assertion_expires_unix_ms),
    webSessionHash: g.web_session_hash,
  };
}

type Callback<T> = (err: ServiceError | null, value?: T) => void;

/** A re-check while a cached grant can answer: short, and not waiting for a reconnect. */
const FAST_CALL_TIMEOUT_MS = 3_000;

export class GrpcAppAuthApi implements AppAuthApi {
  readonly #connection: () => AuthConnection;
  readonly #timeoutMs: number;

  /** `connection()` is read at every call, so an identity reload (a new channel) is followed. */
  constructor(connection: () => AuthConnection, o: { timeoutMs?: number } = {}) {
    this.#connection = connection;
    this.#timeoutMs = o.timeoutMs ?? AUTH_CALL_TIMEOUT_MS;
  }

  #call<T>(
    start: (c: AuthConnection, md: Metadata, o: CallOptions, cb: Callback<T>) => void,
    fast = false,
  ): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const c = this.#connection();
      let md: Metadata;
      try {
        md = c.metadata();
      } catch (err) {
        reject(err);
        return;
      }
      // Wait-for-ready (auth restarting) unless a cached answer is waiting to be used instead.
      if (!fast) waitForReady(md);
      const deadline = Date.now() + (fast ? FAST_CALL_TIMEOUT_MS : this.#timeoutMs);
      start(c, md, { deadline }, (err, value) => {
        if (err) reject(fromGrpcError(err));
        else if (value === undefined) reject(new Error("auth sent an empty answer"));
        else resolve(value);
      });
    });
  }

  async exchangeAppSession(code: string, publicAddr: string): Promise<AppGrant> {
    const g = await this.#call<AppSessionGrant__Output>((c, md, o, cb) =>
      c.client.ExchangeAppSession({ code, public_addr: publicAddr }, md, o, cb),
    );
    return grantOf(g);
  }

  async getAppSession(sessionId: string, publicAddr: string, o: { fast?: boolean } = {}): Promise<AppGrant> {
    const g = await this.#call<AppSessionGrant__Output>(
      (c, md, opts, cb) =>
        c.client.GetAppSession({ session_id: sessionId, public_addr: publicAddr }, md, opts, cb),
      o.fast,
    );
    return grantOf(g);
  }

  async deleteAppSession(sessionId: string): Promise<void> {
    await this.#call<DeleteAppSessionResponse__Output>((c, md, o, cb) =>
      c.client.DeleteAppSession({ session_id: sessionId }, md, o, cb),
    );
  }
}
