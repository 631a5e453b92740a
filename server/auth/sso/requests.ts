// The state of logins in flight, in the shared backend (so any auth replica can finish a login
// another started), keyed by the SHA-256 of their secrets only:
// - `sso-requests/<sha256(request_id)>`: a pending request (10 min), used once: taken with
//   compare-and-delete, so of two callbacks with the same state only one gets it;
// - `sso-cli-codes/<sha256(code)>`: a CLI login decided and waiting for ExchangeSSOCode (5 min),
//   also taken once, whatever the verifier;
// - `sso-mfa/<sha256(request_id)>`: a CLI login waiting for its WebAuthn step (5 min).
// A parked login holds the decision (user, connector, caps), never a session secret: the session
// is created when the code is exchanged.
import { timingSafeEqual } from "node:crypto";
import type { Backend, Item } from "../../../core/backend/backend.ts";
import type { Clock } from "../../../core/clock.ts";
import { BadParameterError, isNotFound, NotAuthenticatedError } from "../../../core/errors.ts";
import type { JsonObject } from "../../../core/json.ts";
import { hashSecret } from "../sessions.ts";

export const REQUEST_TTL_MS = 10 * 60_000;
export const CLI_CODE_TTL_MS = 5 * 60_000;

const REQUESTS = "sso-requests/";
const CLI_CODES = "sso-cli-codes/";
const MFA = "sso-mfa/";

/** 32 random bytes, base64url: request ids, CLI codes, binding cookies, PKCE verifiers. */
export const SECRET_PATTERN = /^[A-Za-z0-9_-]{43}$/;
/** RFC 7636 code_verifier: 43..128 unreserved characters. */
export const VERIFIER_PATTERN = /^[A-Za-z0-9._~-]{43,128}$/;

export interface PendingRequest {
  connector: string;
  type: "oidc" | "saml" | "github";
  /** sha256 hex of the binding cookie; "" for a CLI request not bound yet. */
  binding: string;
  redirect: string;
  cli: boolean;
  /** CLI: base64url(sha256(verifier)). */
  codeChallenge: string;
  nonce: string;
  codeVerifier: string;
  extra: Record<string, string>;
  created: string;
  clientAddress: string;
}

/** A login decided by Validate (or its WebAuthn step) that a CLI has yet to collect. */
export interface ParkedLogin {
  username: string;
  connector: string;
  method: string;
  codeChallenge: string;
  redirect: string;
  mfa: boolean;
  scope: "full" | "mfa_enrollment";
  /** Latest expiry the session may have. */
  notAfter: string;
  clientAddress: string;
}

const UNKNOWN = "unknown or expired single sign-on request";

/** Constant-time equality of two strings (lengths may differ). */
export function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

export class SsoRequests {
  readonly #backend: Backend;
  readonly #clock: Clock;

  constructor(deps: { backend: Backend; clock: Clock }) {
    this.#backend = deps.backend;
    this.#clock = deps.clock;
  }

  async create(requestId: string, pending: PendingRequest): Promise<Date> {
    const expires = new Date(Date.parse(pending.created) + REQUEST_TTL_MS);
    await this.#backend.create(REQUESTS + hashSecret(requestId), toJson(pending), { expires });
    return expires;
  }

  /** The pending request (not consumed), with its revision; UNAUTHENTICATED when unknown or lapsed. */
  async peek(requestId: string): Promise<{ pending: PendingRequest; revision: number; expires: Date }> {
    if (!SECRET_PATTERN.test(requestId))
      throw new BadParameterError("the request id (state) is missing or malformed");
    const item = await this.#get(REQUESTS + hashSecret(requestId));
    const pending = item.value as unknown as PendingRequest;
    const expires = new Date(Date.parse(pending.created) + REQUEST_TTL_MS);
    // The backend hides expired items too; this guards a clock skew between replicas.
    if (expires.getTime() <= this.#clock.now().getTime()) throw new NotAuthenticatedError(UNKNOWN);
    return { pending, revision: item.revision, expires };
  }

  /** Binds a CLI request to a browser: only the first caller wins (compare-and-swap). */
  async bind(requestId: string, revision: number, pending: PendingRequest): Promise<void> {
    const expires = new Date(Date.parse(pending.created) + REQUEST_TTL_MS);
    try {
      await this.#backend.compareAndSwap(REQUESTS + hashSecret(requestId), revision, toJson(pending), {
        expires,
      });
    } catch (err) {
      throw new NotAuthenticatedError("this single sign-on request was already opened", { cause: err });
    }
  }

  /** Uses the request up: of concurrent callers exactly one gets past this. */
  async consume(requestId: string, revision: number): Promise<void> {
    try {
      await this.#backend.compareAndDelete(REQUESTS + hashSecret(requestId), revision);
    } catch (err) {
      throw new NotAuthenticatedError(UNKNOWN, { cause: err });
    }
  }

  async parkCli(code: string, login: ParkedLogin): Promise<Date> {
    const expires = new Date(this.#clock.now().getTime() + CLI_CODE_TTL_MS);
    await this.#backend.create(CLI_CODES + hashSecret(code), toJson(login), { expires });
    return expires;
  }

  /** Takes a parked CLI login: one attempt per code, whatever happens next. */
  async takeCli(code: string): Promise<ParkedLogin> {
    const bad = "invalid or expired code";
    if (!SECRET_PATTERN.test(code)) throw new BadParameterError("code is missing or malformed");
    const key = CLI_CODES + hashSecret(code);
    let item: Item;
    try {
      item = await this.#get(key);
      await this.#backend.compareAndDelete(key, item.revision);
    } catch (err) {
      throw new NotAuthenticatedError(bad, { cause: err });
    }
    const login = item.value as unknown as ParkedLogin;
    if (Date.parse(login.notAfter) <= this.#clock.now().getTime()) throw new NotAuthenticatedError(bad);
    return login;
  }

  /** A CLI login waiting for its WebAuthn step. */
  async parkMfa(requestId: string, login: ParkedLogin): Promise<void> {
    await this.#backend.put(MFA + hashSecret(requestId), toJson(login), { ttlMs: CLI_CODE_TTL_MS });
  }

  async takeMfa(requestId: string): Promise<ParkedLogin> {
    if (!SECRET_PATTERN.test(requestId)) throw new BadParameterError("sso_request_id is malformed");
    const key = MFA + hashSecret(requestId);
    try {
      const item = await this.#get(key);
      await this.#backend.compareAndDelete(key, item.revision);
      return item.value as unknown as ParkedLogin;
    } catch (err) {
      throw new NotAuthenticatedError(UNKNOWN, { cause: err });
    }
  }

  async #get(key: string): Promise<Item> {
    try {
      return await this.#backend.get(key);
    } catch (err) {
      if (isNotFound(err)) throw new NotAuthenticatedError(UNKNOWN);
      throw err;
    }
  }
}

function toJson(v: PendingRequest | ParkedLogin): JsonObject {
  return JSON.parse(JSON.stringify(v)) as JsonObject;
}
