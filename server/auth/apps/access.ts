// The six application-access RPCs (docs/apps.md, docs/grpc.md): the user's side (ListApps,
// CreateAppSession, LogoutApps) decides access from the user's roles (app_labels, deny wins); the
// proxy's side (ExchangeAppSession, GetAppSession, DeleteAppSession) admits only proxy identities
// and carries its own proof, the one-time code or the session ID. GetAppSession decides again on
// every refresh: the web session, the user, locks and roles as they are now.
import type { Logger } from "pino";
import type { Backend } from "../../../core/backend/backend.ts";
import type { JwtKey } from "../../../core/ca/jwt.ts";
import type { Clock } from "../../../core/clock.ts";
import { AccessDeniedError, BadParameterError, isNotFound, NotFoundError } from "../../../core/errors.ts";
import type { JsonObject } from "../../../core/json.ts";
import type { AccessChecker, Traits } from "../../../core/rbac/index.ts";
import { appAtHost, appPublicHost, type ResourceOf } from "../../../core/resources/index.ts";
import type { ResourceSource } from "../../../core/sources/source.ts";
import type { App } from "../../../proto/generated/svc/v1/App.ts";
import type { AppSessionGrant } from "../../../proto/generated/svc/v1/AppSessionGrant.ts";
import type { CreateAppSessionRequest__Output } from "../../../proto/generated/svc/v1/CreateAppSessionRequest.ts";
import type { CreateAppSessionResponse } from "../../../proto/generated/svc/v1/CreateAppSessionResponse.ts";
import type { ExchangeAppSessionRequest__Output } from "../../../proto/generated/svc/v1/ExchangeAppSessionRequest.ts";
import type { GetAppSessionRequest__Output } from "../../../proto/generated/svc/v1/GetAppSessionRequest.ts";
import type { ListAppsResponse } from "../../../proto/generated/svc/v1/ListAppsResponse.ts";
import { type Caller, callerLabel } from "../caller.ts";
import { fillHeaders, signAssertion } from "./assertion.ts";
import {
  type AppSession,
  AppSessionStore,
  type AppSessionSubject,
  checkSecret,
  type EndReason,
  sessionRef,
} from "./store.ts";

type AppResource = ResourceOf<"App">;
type UserCaller = Extract<Caller, { kind: "user" }>;
type Decided = { user: AppUser; app: AppResource };

const SWEEP_INTERVAL_MS = 30_000;
const MAX_NAME = 253;

/** Who a user is now, for the decisions (undefined: may not act: gone, disabled, role-locked). */
export interface AppUser {
  checker: AccessChecker;
  /** The User's traits ({{internal.*}}) and the provider's ({{external.*}}; = internal for local users). */
  internal: Traits;
  external: Traits;
}

export interface AppAccessOptions {
  /** The proxy's public URL (https://host[:port]): the apps' parent host and the assertion's issuer. */
  publicUrl: string;
  /** The App CA's signing key now (cas.appJwtKeys[0]): rotation switches it. */
  signingKey: () => JwtKey | undefined;
}

export interface AppAccessDeps extends AppAccessOptions {
  backend: Backend;
  source: ResourceSource;
  clock: Clock;
  logger: Logger;
  /** The user as the decisions see it now (SSO users loaded); undefined when they may not act. */
  user(name: string): Promise<AppUser | undefined>;
  /** "locked: ..." when a lock covers the user now. */
  lockRefusal(name: string): string | undefined;
  /**
   * Whether this user's web session (by hash) is live, still theirs, and enough for the user's
   * roles now (a role that came to require MFA refuses a session that did not pass it).
   */
  webSessionLive(name: string, hash: string): Promise<boolean>;
  audit(e: { event_type: string; user_name: string; success: boolean; fields: JsonObject }): Promise<unknown>;
}

/** Proxy RPCs: only a proxy identity (an agent caller "proxy:<name>"); nodes and users are refused. */
export function requireProxy(caller: Caller): void {
  if (caller.kind !== "agent" || !caller.agentId.startsWith("proxy:"))
    throw new AccessDeniedError("only the proxy calls this");
}

function requireUser(caller: Caller): UserCaller {
  if (caller.kind !== "user") throw new AccessDeniedError("this call needs a user session");
  return caller;
}

/** A host name as the proxy sends it: lower-case, no port; anything else is a bad parameter. */
function hostParam(v: string, what: string): string {
  if (v.length > MAX_NAME || !/^[a-z0-9.-]*$/.test(v)) throw new BadParameterError(`${what} is malformed`);
  return v;
}

const NOT_FOUND = "app not found";

export class AppAccess {
  readonly #d: AppAccessDeps;
  readonly store: AppSessionStore;
  readonly #publicHost: string;
  readonly #publicPort: string;
  #timer: NodeJS.Timeout | undefined;

  constructor(deps: AppAccessDeps) {
    this.#d = deps;
    const url = new URL(deps.publicUrl);
    this.#publicHost = url.hostname.toLowerCase();
    this.#publicPort = url.port;
    this.store = new AppSessionStore({
      backend: deps.backend,
      clock: deps.clock,
      onEnded: (s, reason) => this.#ended(s, reason),
    });
  }

  /** Sweeps expired sessions every 30 s (each replica; the delete decides who records the end). */
  start(): void {
    this.#timer ??= setInterval(() => {
      this.store
        .sweep()
        .catch((err: unknown) => this.#d.logger.error({ err }, "sweeping app sessions failed"));
    }, SWEEP_INTERVAL_MS);
    this.#timer.unref();
  }

  close(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /** The cascade of a web-session revocation (logout, revokeAll: user deleted, locked, disabled). */
  async webSessionsEnded(username: string, hashes: readonly string[]): Promise<void> {
    try {
      await this.store.endForWebSessions(hashes);
    } catch (err) {
      // Not fatal: GetAppSession refuses an app session whose web session is gone anyway.
      this.#d.logger.error({ err, user: username }, "ending app sessions of revoked web sessions failed");
    }
  }

  // ---- user RPCs ----------------------------------------------------------------------------

  async listApps(caller: Caller): Promise<ListAppsResponse> {
    const user = await this.#activeUser(requireUser(caller).username);
    const withUri = user.checker.can("apps", "list");
    const all = this.#apps();
    const apps = all
      .filter((a) => this.#hosted(all, a) && this.#reaches(user.checker, a))
      .sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : 1))
      .map((a) => this.#toWire(a, withUri));
    return { apps };
  }

  async createAppSession(
    req: CreateAppSessionRequest__Output,
    caller: Caller,
  ): Promise<CreateAppSessionResponse> {
    const u = requireUser(caller);
    if (u.sessionScope !== "full") throw new AccessDeniedError("this session may only enrol an MFA device");
    if (req.app_name.length > MAX_NAME) throw new BadParameterError("app_name is malformed");
    const addr = hostParam(req.public_addr.toLowerCase(), "public_addr");
    if (req.app_name === "" && addr === "")
      throw new BadParameterError("app_name or public_addr is required");
    const user = await this.#activeUser(u.username);
    const all = this.#apps();
    const app =
      req.app_name !== ""
        ? all.find((a) => a.metadata.name === req.app_name)
        : appAtHost(all, addr, this.#publicHost);
    // An app the user may not reach is as absent as one that does not exist; so is one whose host
    // the proxy cannot serve (not one label under its host, or claimed by two Apps).
    if (
      !app ||
      !this.#hosted(all, app) ||
      (addr !== "" && appPublicHost(app, this.#publicHost) !== addr) ||
      !this.#reaches(user.checker, app)
    )
      throw new NotFoundError(NOT_FOUND);
    const { code, expires } = await this.store.createCode({
      username: u.username,
      roles: [...user.checker.roleNames],
      traits: user.internal,
      app: app.metadata.name,
      publicAddr: appPublicHost(app, this.#publicHost),
      webSessionHash: u.sessionHash,
      expires: u.sessionExpires,
    });
    return {
      code,
      app: this.#toWire(app, user.checker.can("apps", "list")),
      expires_unix_ms: expires.getTime(),
    };
  }

  async logoutApps(appName: string, caller: Caller): Promise<{ ended: number }> {
    const u = requireUser(caller);
    if (appName.length > MAX_NAME) throw new BadParameterError("app_name is malformed");
    let ended = 0;
    for (const s of await this.store.ofUser(u.username)) {
      if (appName !== "" && s.app !== appName) continue;
      if (await this.store.end(s.hash, "logout")) ended++;
    }
    return { ended };
  }

  // ---- proxy RPCs ---------------------------------------------------------------------------

  async exchange(req: ExchangeAppSessionRequest__Output, caller: Caller): Promise<AppSessionGrant> {
    requireProxy(caller);
    checkSecret(req.code, "code");
    const addr = hostParam(req.public_addr, "public_addr");
    if (addr === "") throw new BadParameterError("public_addr is required");
    // Decided again on the code's subject: access may have gone in the code's 60 s.
    const { id, session, admitted } = await this.store.exchange(req.code, addr, (s) => this.#decide(s));
    const grant = await this.#grant(session, admitted);
    await this.#d.audit({
      event_type: "app.session.start",
      user_name: session.username,
      success: true,
      fields: {
        emitted_by: callerLabel(caller),
        app: session.app,
        public_addr: session.publicAddr,
        app_uri: grant.app_uri ?? "",
        session: sessionRef(session.hash),
      },
    });
    return { ...grant, session_id: id };
  }

  async get(req: GetAppSessionRequest__Output, caller: Caller): Promise<AppSessionGrant> {
    requireProxy(caller);
    const addr = hostParam(req.public_addr, "public_addr");
    if (addr === "") throw new BadParameterError("public_addr is required");
    const session = await this.store.get(req.session_id);
    // Bound to its host: a cookie carried to another app's host is no session there.
    if (session.publicAddr !== addr) throw new NotFoundError("unknown or expired app session");
    return this.#grant(session, await this.#decide(session));
  }

  async remove(sessionId: string, caller: Caller): Promise<void> {
    requireProxy(caller);
    checkSecret(sessionId, "session_id");
    // Idempotent: the cookie of a session already ended (expired, logged out elsewhere) logs out too.
    let s: AppSession;
    try {
      s = await this.store.get(sessionId);
    } catch (err) {
      if (isNotFound(err)) return;
      throw err;
    }
    await this.store.end(s.hash, "logout");
  }

  // ---- decisions ----------------------------------------------------------------------------

  /**
   * Does the session (or the code's subject) still hold, as things are now: its web session live,
   * the user active and unlocked, the App there at the same host and reached by the user's roles.
   * NOT_FOUND / PERMISSION_DENIED (a lock, with its message) when not.
   */
  async #decide(s: AppSessionSubject | AppSession): Promise<Decided> {
    const gone = () => new NotFoundError("unknown or expired app session");
    if (!(await this.#d.webSessionLive(s.username, s.webSessionHash))) {
      // A session left behind by a revocation whose cascade failed ends here.
      if ("hash" in s) await this.store.end(s.hash, "web_session_ended");
      throw gone();
    }
    const lock = this.#d.lockRefusal(s.username);
    if (lock) throw new AccessDeniedError(lock);
    const user = await this.#d.user(s.username);
    const app = appAtHost(this.#apps(), s.publicAddr, this.#publicHost);
    if (!user || !app || app.metadata.name !== s.app || !this.#reaches(user.checker, app)) throw gone();
    return { user, app };
  }

  /** The grant of a session the decision admitted, with a fresh assertion. */
  async #grant(s: AppSession, { user, app }: Decided): Promise<AppSessionGrant> {
    const roles = [...user.checker.roleNames];
    const assertion = await signAssertion(
      this.#d.signingKey(),
      {
        issuer: new URL(this.#d.publicUrl).origin,
        audience: app.spec.uri,
        username: s.username,
        roles,
        traits: user.internal,
        sessionExpires: s.expires,
      },
      this.#d.clock,
    );
    const traits: Record<string, { values: string[] }> = {};
    for (const [k, v] of Object.entries(user.internal)) traits[k] = { values: [...v] };
    return {
      session_id: "",
      username: s.username,
      roles,
      traits,
      app_name: app.metadata.name,
      app_uri: app.spec.uri,
      public_addr: s.publicAddr,
      insecure_skip_verify: app.spec.insecure_skip_verify === true,
      headers: fillHeaders(app.spec.rewrite?.headers ?? [], {
        username: s.username,
        internal: user.internal,
        external: user.external,
      }),
      redirect_hosts: app.spec.rewrite?.redirect ?? [],
      expires_unix_ms: s.expires.getTime(),
      assertion: assertion.jwt,
      assertion_expires_unix_ms: assertion.expires.getTime(),
      web_session_hash: s.webSessionHash,
    };
  }

  async #activeUser(name: string): Promise<AppUser> {
    const lock = this.#d.lockRefusal(name);
    if (lock) throw new AccessDeniedError(lock);
    const user = await this.#d.user(name);
    if (!user) throw new AccessDeniedError("invalid or expired session");
    return user;
  }

  #apps(): AppResource[] {
    return this.#d.source.list("App").filter((a) => !a.metadata.deletionTimestamp);
  }

  /** Whether the proxy serves `app` at its host: one label under the public host, no other App there. */
  #hosted(all: readonly AppResource[], app: AppResource): boolean {
    return (
      appAtHost(all, appPublicHost(app, this.#publicHost), this.#publicHost)?.metadata.name ===
      app.metadata.name
    );
  }

  #reaches(checker: AccessChecker, app: AppResource): boolean {
    return checker.canAccessApp({ name: app.metadata.name, labels: app.metadata.labels });
  }

  #toWire(app: AppResource, withUri: boolean): App {
    const host = appPublicHost(app, this.#publicHost);
    return {
      name: app.metadata.name,
      description: app.spec.description ?? "",
      public_addr: host,
      public_url: `https://${host}${this.#publicPort ? `:${this.#publicPort}` : ""}/`,
      labels: { ...(app.metadata.labels ?? {}) },
      uri: withUri ? app.spec.uri : "",
    };
  }

  async #ended(s: AppSession, reason: EndReason): Promise<void> {
    await this.#d.audit({
      event_type: "app.session.end",
      user_name: s.username,
      success: true,
      fields: { app: s.app, public_addr: s.publicAddr, reason, session: sessionRef(s.hash) },
    });
  }
}
