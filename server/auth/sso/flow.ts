// The single sign-on flow behind CreateSSOAuthRequest, BindSSOAuthRequest, ValidateSSOResponse and
// ExchangeSSOCode (and the WebAuthn step after an SSO login). Protocol-independent: each rule
// (one-time requests, browser binding, redirects, name rules, mapping, session caps, audit) is
// written once here; oidc.ts, github.ts and saml.ts only produce an ExternalIdentity.
// docs/sso-security.md explains the model.
import { createHash } from "node:crypto";
import type { Backend } from "../../../core/backend/backend.ts";
import type { Clock } from "../../../core/clock.ts";
import {
  AccessDeniedError,
  BadParameterError,
  NotAuthenticatedError,
  NotFoundError,
  PreconditionFailedError,
} from "../../../core/errors.ts";
import type { JsonObject } from "../../../core/json.ts";
import type { AccessChecker } from "../../../core/rbac/index.ts";
import type { Connector } from "../../../core/resources/index.ts";
import { DNS_SUBDOMAIN_PATTERN } from "../../../core/resources/meta.ts";
import type { AuthenticateLocalResponse } from "../../../proto/generated/svc/v1/AuthenticateLocalResponse.ts";
import type { BindSSOAuthRequestRequest__Output } from "../../../proto/generated/svc/v1/BindSSOAuthRequestRequest.ts";
import type { CreateSSOAuthRequestRequest__Output } from "../../../proto/generated/svc/v1/CreateSSOAuthRequestRequest.ts";
import type { ExchangeSSOCodeRequest__Output } from "../../../proto/generated/svc/v1/ExchangeSSOCodeRequest.ts";
import type { SSOAuthRequest } from "../../../proto/generated/svc/v1/SSOAuthRequest.ts";
import type { ValidateSSOResponseRequest__Output } from "../../../proto/generated/svc/v1/ValidateSSOResponseRequest.ts";
import type { ValidateSSOResponseResult } from "../../../proto/generated/svc/v1/ValidateSSOResponseResult.ts";
import type { LocalLogin, LoginResult } from "../login.ts";
import { hashSecret, randomSecret, type SessionScope } from "../sessions.ts";
import type { RelyingParty, WebAuthnStore } from "../webauthn.ts";
import { admitIdentity } from "./admit.ts";
import type { ExternalIdentity, ProtocolDeps, ProviderAnswer, SsoProtocol } from "./protocol.ts";
import { checkBrowserRedirect, checkCliRedirect, withCode } from "./redirect.ts";
import { DEFAULT_PROTOCOLS, type ProtocolRegistry, protocolFactory } from "./registry.ts";
import {
  type ParkedLogin,
  type PendingRequest,
  SECRET_PATTERN,
  SsoRequests,
  sameSecret,
  VERIFIER_PATTERN,
} from "./requests.ts";
import type { ConnectorSecrets } from "./secrets.ts";
import { ConnectorSecretReader } from "./secrets.ts";
import type { SsoUsers } from "./users.ts";

/** How auth is configured for single sign-on (server/assemble-auth.ts builds it from the config). */
export interface SsoOptions {
  /** Reads connectors' client_secret_ref (default: files only, relative to the working folder). */
  secrets?: ConnectorSecrets;
  /** Extra trust anchors for reaching identity providers (auth.sso.ca_file). */
  caPem?: string;
  /** Protocol per connector type (default: OIDC and GitHub, plus SAML once saml.ts provides it). */
  protocols?: ProtocolRegistry;
}

export interface SsoFlowDeps extends SsoOptions {
  backend: Backend;
  source: {
    get(kind: "Connector", name: string): Connector | undefined;
    get(kind: "User", name: string): unknown;
  };
  getRole: (name: string) => unknown;
  clock: Clock;
  login: LocalLogin;
  webauthn: WebAuthnStore;
  users: SsoUsers;
  /** Upper bound of every session (auth.session_ttl). */
  sessionTtlMs: number;
  /** The checker of a user who may hold a session now (reads the SSO record just written). */
  activeChecker: (name: string) => AccessChecker | undefined;
}

const BINDING_PATTERN = /^[0-9a-f]{64}$/;
const MAX_CALLBACK_QUERY = 16 * 1024;
const MAX_SAML_RESPONSE = 512 * 1024;
const MFA_PENDING_MS = 5 * 60_000;

function sha256base64url(s: string): string {
  return createHash("sha256").update(s).digest("base64url");
}

/** A refusal the audit log records, with what it may say about the attempt. */
interface Attempt {
  connector: string;
  method: string;
  clientAddress: string;
  username: string;
  claimNames?: string[];
}

export class SsoFlow {
  readonly #d: SsoFlowDeps;
  readonly requests: SsoRequests;
  readonly #protocols = new WeakMap<Connector, { secret: string; protocol: Promise<SsoProtocol> }>();
  readonly #registry: ProtocolRegistry;
  readonly #secrets: ConnectorSecrets;

  constructor(deps: SsoFlowDeps) {
    this.#d = deps;
    this.requests = new SsoRequests({ backend: deps.backend, clock: deps.clock });
    this.#registry = deps.protocols ?? DEFAULT_PROTOCOLS;
    this.#secrets = deps.secrets ?? new ConnectorSecretReader({});
  }

  // ---- connectors and protocols -------------------------------------------------------------

  #connector(name: string): Connector {
    if (typeof name !== "string" || name.length > 253 || !new RegExp(DNS_SUBDOMAIN_PATTERN).test(name))
      throw new BadParameterError("connector must be a Connector name");
    const c = this.#d.source.get("Connector", name);
    if (!c || c.metadata.deletionTimestamp) throw new NotFoundError(`connector ${name} not found`);
    const ready = c.status?.conditions?.find((x) => x.type === "Ready");
    if (ready && ready.status === "False")
      throw new PreconditionFailedError(`connector ${name} is not ready: ${ready.reason}`);
    return c;
  }

  async #protocol(connector: Connector): Promise<SsoProtocol> {
    const factory = protocolFactory(this.#registry, connector.spec.type);
    const secret = await this.#secrets.read(connector);
    const hit = this.#protocols.get(connector);
    // Sources replace a resource object on every change, so the object (and the secret's value)
    // identify what the protocol was built from.
    if (hit && hit.secret === (secret?.value ?? "")) return hit.protocol;
    const deps: ProtocolDeps = {
      clock: this.#d.clock,
      ...(this.#d.caPem ? { caPem: this.#d.caPem } : {}),
      claimOnce: (kind, id, until) => this.#claimOnce(kind, id, until),
    };
    const protocol = factory(connector, secret, deps);
    this.#protocols.set(connector, { secret: secret?.value ?? "", protocol });
    protocol.catch(() => this.#protocols.delete(connector));
    return protocol;
  }

  async #claimOnce(kind: string, id: string, until: Date): Promise<boolean> {
    const key = `sso-once/${kind}/${createHash("sha256").update(id).digest("hex")}`;
    try {
      await this.#d.backend.create(key, { at: this.#d.clock.now().toISOString() }, { expires: until });
      return true;
    } catch {
      return false;
    }
  }

  // ---- CreateSSOAuthRequest / BindSSOAuthRequest --------------------------------------------

  async create(req: CreateSSOAuthRequestRequest__Output, clientAddress: string): Promise<SSOAuthRequest> {
    const connector = this.#connector(req.connector);
    const browser = req.browser_binding_hash !== "";
    const cli = req.code_challenge !== "";
    if (browser === cli)
      throw new BadParameterError("give browser_binding_hash (browser) or code_challenge (CLI), not both");
    if (browser && !BINDING_PATTERN.test(req.browser_binding_hash))
      throw new BadParameterError("browser_binding_hash must be SHA-256 hex");
    if (cli && !SECRET_PATTERN.test(req.code_challenge))
      throw new BadParameterError("code_challenge must be base64url(SHA-256(code_verifier))");
    const redirect = browser
      ? checkBrowserRedirect(req.client_redirect_url)
      : checkCliRedirect(req.client_redirect_url);
    const protocol = await this.#protocol(connector);
    const requestId = randomSecret(32);
    const pending: PendingRequest = {
      connector: connector.metadata.name,
      type: connector.spec.type,
      binding: browser ? req.browser_binding_hash : "",
      redirect,
      cli,
      codeChallenge: req.code_challenge,
      nonce: randomSecret(32),
      codeVerifier: randomSecret(32),
      extra: {},
      created: this.#d.clock.now().toISOString(),
      clientAddress: clientAddress.slice(0, 128),
    };
    let url = "";
    if (browser) {
      const started = await protocol.loginUrl({
        requestId,
        nonce: pending.nonce,
        codeVerifier: pending.codeVerifier,
      });
      url = started.url;
      pending.extra = started.extra ?? {};
    }
    const expires = await this.requests.create(requestId, pending);
    return {
      request_id: requestId,
      redirect_url: url,
      expires_unix_ms: expires.getTime(),
      connector_type: connector.spec.type,
    };
  }

  async bind(req: BindSSOAuthRequestRequest__Output): Promise<SSOAuthRequest> {
    if (!BINDING_PATTERN.test(req.browser_binding_hash))
      throw new BadParameterError("browser_binding_hash must be SHA-256 hex");
    const { pending, revision, expires } = await this.requests.peek(req.request_id);
    if (!pending.cli || pending.binding !== "")
      throw new AccessDeniedError("this single sign-on request was already opened");
    const connector = this.#connector(pending.connector);
    const protocol = await this.#protocol(connector);
    const started = await protocol.loginUrl({
      requestId: req.request_id,
      nonce: pending.nonce,
      codeVerifier: pending.codeVerifier,
    });
    await this.requests.bind(req.request_id, revision, {
      ...pending,
      binding: req.browser_binding_hash,
      extra: started.extra ?? {},
    });
    return {
      request_id: req.request_id,
      redirect_url: started.url,
      expires_unix_ms: expires.getTime(),
      connector_type: pending.type,
    };
  }

  // ---- ValidateSSOResponse -------------------------------------------------------------------

  async validate(
    req: ValidateSSOResponseRequest__Output,
    ctx: { clientAddress: string; rp?: RelyingParty | undefined },
  ): Promise<ValidateSSOResponseResult> {
    let requestId: string;
    let answer: ProviderAnswer;
    let providerErrorCode: string | undefined;
    if (req.saml_response !== "") {
      if (req.saml_response.length > MAX_SAML_RESPONSE)
        throw new BadParameterError("saml_response is too large");
      requestId = req.relay_state;
      answer = { samlResponse: req.saml_response };
    } else {
      if (req.callback_query.length > MAX_CALLBACK_QUERY)
        throw new BadParameterError("callback_query is too large");
      const q = new URLSearchParams(req.callback_query);
      requestId = q.get("state") ?? "";
      const error = q.get("error");
      if (error !== null) providerErrorCode = /^[A-Za-z0-9_.-]{1,64}$/.test(error) ? error : "error";
      answer = { callbackQuery: req.callback_query };
    }
    const { pending, revision } = await this.requests.peek(requestId);
    const attempt: Attempt = {
      connector: pending.connector,
      method: pending.type,
      clientAddress: ctx.clientAddress.slice(0, 128),
      username: "",
    };
    try {
      // The browser that brings the answer must be the one that started (or opened) the request:
      // a login link or callback replayed in another browser (login CSRF) is refused.
      if (pending.binding === "" || !sameSecret(pending.binding, req.browser_binding_hash))
        throw new AccessDeniedError("this browser did not start this single sign-on request");
      await this.requests.consume(requestId, revision);
      if (providerErrorCode !== undefined)
        throw new NotAuthenticatedError(`the identity provider refused the login: ${providerErrorCode}`);
      const connector = this.#connector(pending.connector);
      const protocol = await this.#protocol(connector);
      const identity = await protocol.validate(answer, {
        requestId,
        nonce: pending.nonce,
        codeVerifier: pending.codeVerifier,
        extra: pending.extra,
      });
      return await this.#decide(connector, identity, pending, requestId, attempt, ctx.rp);
    } catch (err) {
      await this.#auditFailure(attempt, err);
      throw err;
    }
  }

  async #decide(
    connector: Connector,
    identity: ExternalIdentity,
    pending: PendingRequest,
    requestId: string,
    attempt: Attempt,
    rp: RelyingParty | undefined,
  ): Promise<ValidateSSOResponseResult> {
    const { name, roles, claims, notAfter } = await admitIdentity(connector, identity, {
      now: this.#d.clock.now(),
      sessionTtlMs: this.#d.sessionTtlMs,
      isLocalUser: (n) => this.#d.source.get("User", n) !== undefined,
      liveConnectorOf: async (n) => (await this.#d.users.load(n))?.connector,
      roleExists: (r) => this.#d.getRole(r) !== undefined,
      seen: attempt,
    });
    const now = this.#d.clock.now().getTime();
    // The record lives while the login is pending (its WebAuthn step or the CLI's exchange); a
    // session extends it.
    const pendingUntil = new Date(Math.min(notAfter.getTime(), now + MFA_PENDING_MS));
    await this.#d.users.upsert({
      name,
      connector: connector.metadata.name,
      roles,
      traits: claims,
      expires: pendingUntil,
      sessionNotAfter: notAfter,
    });
    const checker = this.#d.activeChecker(name);
    if (!checker) throw new AccessDeniedError(`the roles of ${name} allow no sign-in`);
    const parked: ParkedLogin = {
      username: name,
      connector: connector.metadata.name,
      method: pending.type,
      codeChallenge: pending.codeChallenge,
      redirect: pending.redirect,
      mfa: false,
      scope: "full",
      notAfter: notAfter.toISOString(),
      clientAddress: pending.clientAddress,
    };
    const base: ValidateSSOResponseResult = {
      username: name,
      client_redirect_url: pending.redirect,
      cli: pending.cli,
      request_id: requestId,
    };
    const fields = this.#fields(attempt);
    if (await this.#d.webauthn.hasDevices(name)) {
      // As for a password: a user with a device always passes it (FinishWebAuthnLogin next).
      const mfaToken = await this.#d.webauthn.issueMfaToken(name);
      await this.requests.parkMfa(requestId, { ...parked, mfa: true });
      await this.#d.backend.appendAudit({
        event_type: "user.login",
        user_name: name,
        success: true,
        fields: { ...fields, mfa: "required" },
      });
      const challenge = rp ? await this.#d.webauthn.beginLoginFor(name, rp, hashSecret(mfaToken)) : undefined;
      return {
        ...base,
        login: {
          mfa_required: {
            mfa_token: mfaToken,
            ...(challenge
              ? { challenge: { challenge_id: challenge.challengeId, options_json: challenge.optionsJson } }
              : {}),
          },
        },
      };
    }
    // Roles require MFA and there is no device yet: a session that can only enrol one.
    const scope: SessionScope = checker.options().requireMfa ? "mfa_enrollment" : "full";
    if (pending.cli) {
      const code = randomSecret(32);
      await this.requests.parkCli(code, { ...parked, scope });
      return { ...base, cli_code: code };
    }
    const r = await this.#session(
      { ...parked, scope },
      scope === "mfa_enrollment" ? { ...fields, mfa: "enrollment required" } : fields,
    );
    return { ...base, login: this.loginAnswer(r, roles) };
  }

  /** Issues the session of a decided login through the password login's path, and extends the record. */
  async #session(p: ParkedLogin, fields: JsonObject): Promise<LoginResult> {
    // Read again: the connector may have been deleted or disabled while the provider answered
    // (or while a CLI code or a WebAuthn step waited); a session of a gone connector is refused.
    this.#connector(p.connector);
    const record = await this.#d.users.load(p.username);
    if (!record || record.connector !== p.connector || this.#d.source.get("User", p.username) !== undefined)
      throw new NotAuthenticatedError("the single sign-on login is no longer valid");
    if (!this.#d.activeChecker(p.username))
      throw new NotAuthenticatedError("the single sign-on login is no longer valid");
    const r = await this.#d.login.completeLogin(p.username, fields, {
      mfa: p.mfa,
      scope: p.scope,
      notAfter: new Date(Math.min(Date.parse(p.notAfter), record.sessionNotAfter.getTime())),
      connector: p.connector,
    });
    if (r.kind === "session") await this.#d.users.upsert({ ...record, expires: r.session.expires });
    return r;
  }

  // ---- ExchangeSSOCode -----------------------------------------------------------------------

  async exchange(req: ExchangeSSOCodeRequest__Output): Promise<AuthenticateLocalResponse> {
    if (!VERIFIER_PATTERN.test(req.code_verifier))
      throw new BadParameterError("code_verifier must be 43 to 128 characters of [A-Za-z0-9._~-]");
    // Taken (deleted) before the verifier is compared: a wrong verifier burns the code.
    const parked = await this.requests.takeCli(req.code);
    const attempt: Attempt = {
      connector: parked.connector,
      method: parked.method,
      clientAddress: parked.clientAddress,
      username: parked.username,
    };
    try {
      if (!sameSecret(sha256base64url(req.code_verifier), parked.codeChallenge))
        throw new NotAuthenticatedError("invalid or expired code");
      const r = await this.#session(parked, { ...this.#fields(attempt), cli: true });
      return this.loginAnswer(r, (await this.#d.users.load(parked.username))?.roles ?? []);
    } catch (err) {
      await this.#auditFailure(attempt, err);
      throw err;
    }
  }

  // ---- the WebAuthn step after an SSO login --------------------------------------------------

  /**
   * FinishWebAuthnLogin passed for `username`, which has no User resource. With `requestId` (the
   * proxy forwards the SSO request of the login), the login parked by Validate is finished: a CLI
   * one is parked again under a one-time code; otherwise the browser gets the session.
   */
  async finishMfa(
    username: string,
    requestId: string,
    clientAddress: string,
  ): Promise<AuthenticateLocalResponse> {
    const record = await this.#d.users.load(username);
    if (!record) throw new NotAuthenticatedError("invalid or expired session");
    let parked: ParkedLogin;
    if (requestId !== "") {
      parked = await this.requests.takeMfa(requestId);
      if (parked.username !== username)
        throw new NotAuthenticatedError("the single sign-on request is not this user's");
    } else {
      parked = {
        username,
        connector: record.connector,
        method: "sso",
        codeChallenge: "",
        redirect: "",
        mfa: true,
        scope: "full",
        notAfter: record.sessionNotAfter.toISOString(),
        clientAddress,
      };
    }
    const attempt: Attempt = {
      connector: parked.connector,
      method: `${parked.method}+webauthn`,
      clientAddress: clientAddress.slice(0, 128),
      username,
    };
    const login: ParkedLogin = { ...parked, mfa: true, scope: "full", method: attempt.method };
    if (parked.codeChallenge !== "") {
      const code = randomSecret(32);
      await this.requests.parkCli(code, login);
      return { sso_cli_code: code, sso_cli_redirect_url: withCode(parked.redirect, code) };
    }
    const r = await this.#session(login, this.#fields(attempt));
    return this.loginAnswer(r, record.roles);
  }

  // ---- connector and name lifecycle ---------------------------------------------------------

  /** A deleted connector's users lose their sessions and records (every replica runs it; idempotent). */
  async connectorDeleted(
    name: string,
    revokeAll: (user: string) => Promise<number>,
  ): Promise<{ users: number; sessions: number }> {
    let sessions = 0;
    const names = await this.#d.users.namesOf(name);
    for (const user of names) {
      sessions += await revokeAll(user);
      await this.#d.users.remove(user);
    }
    return { users: names.length, sessions };
  }

  // ---- answers and audit -----------------------------------------------------------------------

  loginAnswer(r: LoginResult, roles: readonly string[]): AuthenticateLocalResponse {
    if (r.kind !== "session") return { mfa_required: { mfa_token: r.mfaToken } };
    return {
      session: {
        session_id: r.id,
        username: r.session.username,
        roles: [...roles],
        expires_unix_ms: r.session.expires.getTime(),
        created_unix_ms: r.session.created.getTime(),
        mfa_verified: r.session.mfa,
        scope: r.session.scope,
      },
    };
  }

  #fields(a: Attempt): JsonObject {
    return { method: a.method, connector: a.connector, client_address: a.clientAddress };
  }

  async #auditFailure(a: Attempt, err: unknown): Promise<void> {
    const reason = err instanceof Error ? err.message.slice(0, 300) : "refused";
    await this.#d.backend
      .appendAudit({
        event_type: "user.login",
        user_name: a.username,
        success: false,
        fields: {
          ...this.#fields(a),
          reason,
          // Names of the claims seen (never their values): why a mapping found no role.
          ...(a.claimNames ? { claims: a.claimNames } : {}),
        },
      })
      .catch(() => undefined);
  }
}
