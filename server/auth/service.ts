// AuthService: the handlers of svc.v1.AuthService, in the style of grpc-node's health service
// (`new AuthService(deps).addToServer(server)`). Handlers only translate between wire messages and
// the stores/core decisions; who may call what was already decided by the interceptor
// (authz.ts), and errors are translated in errors.ts.
import type { PeerCertificate } from "node:tls";
import type {
  Server,
  ServerDuplexStream,
  ServerInterceptor,
  ServerReadableStream,
  ServerUnaryCall,
  ServerWritableStream,
  sendUnaryData,
} from "@grpc/grpc-js";
import type { Logger } from "pino";
import type { Backend, AuditEvent as CoreAuditEvent } from "../../core/backend/backend.ts";
import type { SshCertificate, SshCertificateRequest } from "../../core/certs/ssh-cert.ts";
import { parseSshPublicKey } from "../../core/certs/ssh-keys.ts";
import type { Clock } from "../../core/clock.ts";
import {
  AccessDeniedError,
  BadParameterError,
  isNotFound,
  NotAuthenticatedError,
  NotFoundError,
  NotImplementedError,
  UnavailableError,
} from "../../core/errors.ts";
import type { JsonObject } from "../../core/json.ts";
import { type LockSubject, lockRefusal } from "../../core/locks/lock.ts";
import { type AccessChecker, accessForUser } from "../../core/rbac/index.ts";
import type { Role, User } from "../../core/resources/index.ts";
import type { ResourceSource, ResourceWriter } from "../../core/sources/source.ts";
import type { AuditEvent } from "../../proto/generated/svc/v1/AuditEvent.ts";
import type { AuthenticateLocalResponse } from "../../proto/generated/svc/v1/AuthenticateLocalResponse.ts";
import type { AuthServiceHandlers } from "../../proto/generated/svc/v1/AuthService.ts";
import type { CertAuthorityStatus } from "../../proto/generated/svc/v1/CertAuthorityStatus.ts";
import type { ClusterInfo } from "../../proto/generated/svc/v1/ClusterInfo.ts";
import type { GetRecordingRequest__Output } from "../../proto/generated/svc/v1/GetRecordingRequest.ts";
import type { GetRecordingResponse } from "../../proto/generated/svc/v1/GetRecordingResponse.ts";
import type { InventoryEvent } from "../../proto/generated/svc/v1/InventoryEvent.ts";
import type { PublicKeys } from "../../proto/generated/svc/v1/PublicKeys.ts";
import type { RegisterUsingIAMMethodRequest__Output } from "../../proto/generated/svc/v1/RegisterUsingIAMMethodRequest.ts";
import type { RegisterUsingIAMMethodResponse } from "../../proto/generated/svc/v1/RegisterUsingIAMMethodResponse.ts";
import type { SessionEvent } from "../../proto/generated/svc/v1/SessionEvent.ts";
import type { TrustSnapshot } from "../../proto/generated/svc/v1/TrustSnapshot.ts";
import type { UploadRecordingRequest__Output } from "../../proto/generated/svc/v1/UploadRecordingRequest.ts";
import type { UploadRecordingResponse } from "../../proto/generated/svc/v1/UploadRecordingResponse.ts";
import type { WatchInventoryRequest__Output } from "../../proto/generated/svc/v1/WatchInventoryRequest.ts";
import type { WatchSessionsRequest__Output } from "../../proto/generated/svc/v1/WatchSessionsRequest.ts";
import type { WatchTrustRequest__Output } from "../../proto/generated/svc/v1/WatchTrustRequest.ts";
import type { WebAuthnRelyingParty__Output } from "../../proto/generated/svc/v1/WebAuthnRelyingParty.ts";
import { AdminJoinTokens } from "./admin-join-tokens.ts";
import { PasswordResets } from "./admin-password-reset.ts";
import { AdminUsers } from "./admin-users.ts";
import { AppAccess, type AppAccessOptions } from "./apps/access.ts";
import { checkEmittable, EMIT_LIMITS, EmitRateLimiter } from "./audit-emit.ts";
import { ADMIN_CAPABILITIES, RECORDINGS_ADMIN } from "./authz.ts";
import type { CaRotation } from "./ca-rotation.ts";
import { type Caller, callerLabel, callerOf } from "./caller.ts";
import { CertJournal } from "./cert-journal.ts";
import { toGrpcError } from "./errors.ts";
import { authInterceptor, type InterceptorDeps, type PeerIdentity } from "./interceptor.ts";
import { InventoryFeed } from "./inventory-feed.ts";
import type { AgentJoinHandler, AgentRegistration } from "./join-agent.ts";
import { exportKrl, KrlCache } from "./krl.ts";
import { checkNodeTarget, LockService } from "./locks.ts";
import { LocalLogin, type LockoutPolicy, type LoginResult, peerHost } from "./login.ts";
import type { AgentIdentityHandler, IamJoinHandler, SpiffeHandler } from "./machine-identity.ts";
import { managedBySvcctl } from "./managed-by.ts";
import { authorizeNodeLogin } from "./node-login.ts";
import { queryNodes } from "./node-query.ts";
import type { NodeRenewalHandler } from "./node-renewal.ts";
import { NodeStore } from "./nodes.ts";
import { OperatorHooks } from "./operator-hooks.ts";
import { deletePassword } from "./passwords.ts";
import { peerIdentityFromCertificate } from "./peer.ts";
import { authServiceDefinition } from "./proto.ts";
import {
  getRecordingMeta,
  listRecordings,
  type RecordingMeta,
  RecordingWriter,
  readRecording,
} from "./recordings.ts";
import { type Assigner, assertMayAssign } from "./role-assignment.ts";
import { SessionFeed } from "./session-feed.ts";
import { SessionMemo } from "./session-memo.ts";
import { hashSecret, SessionStore, type WebSession } from "./sessions.ts";
import { authorizeSshLogin, type SshLoginDeps } from "./ssh-login.ts";
import { SsoFlow, type SsoOptions } from "./sso/flow.ts";
import { SsoUsers } from "./sso/users.ts";
import { TrustFeed, trustFeedSources } from "./trust-feed.ts";
import {
  certPrincipals,
  principalNodes,
  sshExtensionsOf,
  userCertCreatedEvent,
  userIdentityExtension,
} from "./user-cert-content.ts";
import { checkRelyingParty, type RelyingParty, WebAuthnStore } from "./webauthn.ts";

/** CA material auth uses: the user-certificate signer and everything GetPublicKeys publishes. */
export interface AuthKeyMaterial {
  userCertSigner: { sign(req: SshCertificateRequest): SshCertificate };
  publicKeys(): PublicKeys | Promise<PublicKeys>;
}

export interface AuthServiceDeps {
  backend: Backend;
  source: ResourceSource;
  clock: Clock;
  logger: Logger;
  keys: AuthKeyMaterial;
  cluster: {
    clusterName: string;
    serverVersion: string;
    minClientVersion?: string;
    recommendedClientVersion?: string;
    /** auth.local_login (default true): false refuses AuthenticateLocal... */
    localLogin?: boolean;
    /**
     * ...except for this user (auth.first_admin.user): the first admin's reset link leads to a
     * password login, and a cluster whose identity provider fails is not locked out.
     */
    localLoginExempt?: string;
    /** auth.default_connector: the connector `svc login` uses without --auth. */
    defaultConnector?: string;
  };
  lockout?: LockoutPolicy;
  /** Web session lifetime (config auth.session_ttl); default 12 h. */
  sessionTtlMs?: number;
  /** How long a session just read answers from memory at most (session-memo.ts); 0: never. */
  sessionMemoMaxAgeMs?: number;
  /**
   * The WebAuthn relying party (RP ID, name, origin: the proxy's public address). When set, a
   * request naming another one is refused; only tests and old proxies leave it unset.
   */
  relyingParty?: RelyingParty;
  heartbeatIntervalSeconds?: number;
  /** RegisterAgent (node join, join-agent.ts); without it the RPC answers UNIMPLEMENTED. */
  agentJoin?: AgentJoinHandler;
  /** RenewNodeCredentials (node-renewal.ts); without it the RPC answers UNIMPLEMENTED. */
  nodeRenewal?: NodeRenewalHandler;
  /** RotateCertAuthority and ListCertAuthorities (ca-rotation.ts); without it UNIMPLEMENTED. */
  caRotation?: CaRotation;
  /** RegisterUsingIAMMethod (join-iam.ts); without it the RPC answers UNIMPLEMENTED. */
  iamJoin?: IamJoinHandler;
  /** Bots: Create/List/DeleteAgentIdentity, Bootstrap/RenewAgentIdentity (bot-identity.ts). */
  agentIdentities?: AgentIdentityHandler;
  /** AuthenticateSPIFFE and IssueWorkloadSVID (spiffe.ts). */
  spiffe?: SpiffeHandler;
  /** Resource writes of the admin RPCs (users, join tokens): the folder or Kubernetes source. */
  writer?: ResourceWriter;
  /** Overrides how a client certificate names its holder (default: URI SAN, see peer.ts). */
  peerIdentity?: (cert: PeerCertificate) => PeerIdentity | undefined;
  /**
   * Single sign-on through Connectors (sso/flow.ts): how connector secrets are read, extra CAs for
   * the providers, protocols. Always served; the defaults read file references only.
   */
  sso?: SsoOptions;
  /** WatchTrust keepalive (config auth.lock_keepalive; default 15 s). */
  lockKeepaliveSeconds?: number;
  /** CA rotation state for WatchTrust snapshots (cas.status()) and its change hook (cas.onChange). */
  authorities?: () => CertAuthorityStatus[];
  onAuthoritiesChange?: (fn: () => void) => () => void;
  /** Application access (apps/access.ts): the proxy's public URL and the App CA; else UNIMPLEMENTED. */
  apps?: AppAccessOptions;
}

export const AUDIT_DEFAULT_LIMIT = 50;
export const AUDIT_MAX_LIMIT = 500;
const CERT_BACKDATE_MS = 60_000;
const MAX_FIELDS_JSON = 16 * 1024;
const FIRST_DEVICE_ONLY =
  "a session without MFA enrols only the first WebAuthn device: log in with your device to add another";

type Unary<Req, Res> = (req: Req, caller: Caller, call: ServerUnaryCall<Req, Res>) => Promise<Res>;

function unary<Req, Res>(fn: Unary<Req, Res>) {
  return (call: ServerUnaryCall<Req, Res>, callback: sendUnaryData<Res>): void => {
    fn(call.request, callerOf(call.metadata), call).then(
      (res) => callback(null, res),
      (err: unknown) => callback(toGrpcError(err)),
    );
  };
}

/**
 * The paging policy of every list, the web API's too (docs/grpc.md "Paging"): 0 is proto3's
 * "unset" and means the default; above the maximum is refused, never clamped, so a caller never
 * silently gets less than it asked for.
 */
function pageOf(limit: number, offset: number): { limit: number; offset: number } {
  if (!Number.isInteger(offset) || offset < 0) throw new BadParameterError("offset must be >= 0");
  if (!Number.isInteger(limit) || limit < 0 || limit > AUDIT_MAX_LIMIT) {
    throw new BadParameterError(`limit must be from 1 to ${AUDIT_MAX_LIMIT} (0: ${AUDIT_DEFAULT_LIMIT})`);
  }
  return { limit: limit === 0 ? AUDIT_DEFAULT_LIMIT : limit, offset };
}

/** An optional proto3 time: unset is no bound; 0 and negative values are real times. */
const timeBound = (ms: number | undefined): Date | undefined => (ms === undefined ? undefined : new Date(ms));

/** A machine-identity flow the server was started without answers UNIMPLEMENTED. */
function wired<T>(handler: T | undefined, rpc: string): T {
  if (!handler) throw new NotImplementedError(`${rpc} is not enabled on this auth server`);
  return handler;
}

function requireUser(caller: Caller): Extract<Caller, { kind: "user" }> {
  if (caller.kind !== "user") throw new NotAuthenticatedError("this call needs a user session");
  return caller;
}

/**
 * The relying party of a WebAuthn step: auth's configured one. A request may name it (old
 * proxies always do) but never another: unauthenticated callers must not pick the origin or RP ID
 * an assertion is checked against. Without a configured one (tests), the request's is used.
 */
function rpFrom(
  configured: RelyingParty | undefined,
  rp: WebAuthnRelyingParty__Output | null | undefined,
): RelyingParty {
  if (!configured) return checkRelyingParty({ rpId: rp?.rp_id, rpName: rp?.rp_name, origin: rp?.origin });
  if (rp && (rp.rp_id || rp.origin) && (rp.rp_id !== configured.rpId || rp.origin !== configured.origin)) {
    throw new BadParameterError("relying_party is not this cluster's (auth uses its configured one)");
  }
  return configured;
}

function parseFields(json: string): JsonObject {
  if (json === "") return {};
  if (json.length > MAX_FIELDS_JSON) throw new BadParameterError("fields_json is too large");
  let v: unknown;
  try {
    v = JSON.parse(json);
  } catch {
    throw new BadParameterError("fields_json must be a JSON object");
  }
  if (v === null || typeof v !== "object" || Array.isArray(v))
    throw new BadParameterError("fields_json must be a JSON object");
  return v as JsonObject;
}

function auditToWire(e: CoreAuditEvent): AuditEvent {
  const out: AuditEvent = {
    id: e.id,
    time_unix_ms: e.time.getTime(),
    event_type: e.event_type,
    user_name: e.user_name,
    fields_json: JSON.stringify(e.fields),
  };
  if (e.success !== undefined) out.success = e.success;
  return out;
}

export class AuthService {
  readonly #d: AuthServiceDeps;
  readonly sessions: SessionStore;
  readonly webauthn: WebAuthnStore;
  readonly login: LocalLogin;
  readonly nodes: NodeStore;
  readonly resets: PasswordResets;
  /** Single sign-on users (runtime records) and the flow that makes them. */
  readonly ssoUsers: SsoUsers;
  readonly sso: SsoFlow;
  readonly #adminUsers: AdminUsers;
  readonly #adminTokens: AdminJoinTokens;
  readonly #operatorHooks: OperatorHooks;
  readonly #unsubscribe: () => void;
  readonly #emitLimiter = new EmitRateLimiter();
  /** Lock resources in force (locks.ts) and what WatchTrust streams (trust-feed.ts). */
  readonly locks: LockService;
  readonly trustFeed: TrustFeed;
  /** WatchSessions: what the proxies' session caches must drop or check again (session-feed.ts). */
  readonly sessionFeed: SessionFeed;
  /** WatchInventory: roles, users and nodes for the proxies' caches (inventory-feed.ts). */
  readonly inventoryFeed: InventoryFeed;
  /** Application access: the app sessions and their RPCs (apps/access.ts). */
  readonly apps: AppAccess | undefined;
  /** Every SSH user certificate issued, for ExportKrl (cert-journal.ts). */
  readonly #journal: CertJournal;
  readonly #krlCache = new KrlCache();
  /** AccessChecker per User object, valid while the same Role objects resolve (see checkerFor). */
  /**
   * The registration the interceptor read for this call's agent, keyed by the call's Caller (one
   * object per call): Heartbeat uses it instead of reading it again. Never shared across calls, so
   * a node removed since is refused on its next call.
   */
  readonly #callRegistration = new WeakMap<Caller, { registration: AgentRegistration | undefined }>();
  readonly #checkers = new WeakMap<User, { roles: (Role | undefined)[]; checker: AccessChecker }>();

  constructor(deps: AuthServiceDeps) {
    this.#d = deps;
    this.#journal = new CertJournal({ backend: deps.backend, clock: deps.clock });
    // Made first: the feed may report that it listens while it is being made (SQLite).
    const memo = new SessionMemo({
      now: () => deps.clock.now().getTime(),
      ...(deps.sessionMemoMaxAgeMs !== undefined ? { maxAgeMs: deps.sessionMemoMaxAgeMs } : {}),
    });
    this.sessionFeed = new SessionFeed({
      backend: deps.backend,
      logger: deps.logger,
      observer: { revoked: (hashes) => memo.forget(hashes), listening: (on) => memo.setTrusted(on) },
    });
    this.sessions = new SessionStore({
      backend: deps.backend,
      clock: deps.clock,
      memo,
      onRevoked: (user, hashes) => this.sessionFeed.revoked(user, hashes),
      // A web session's app sessions end with it (logout, revokeAll on deletion or lock).
      afterRevoked: async (user, hashes) => this.apps?.webSessionsEnded(user, hashes),
      ...(deps.sessionTtlMs ? { ttlMs: deps.sessionTtlMs } : {}),
    });
    this.webauthn = new WebAuthnStore({ backend: deps.backend, clock: deps.clock });
    this.apps = deps.apps ? this.#appAccess(deps.apps) : undefined;
    this.nodes = new NodeStore({
      backend: deps.backend,
      clock: deps.clock,
      ...(deps.heartbeatIntervalSeconds ? { intervalSeconds: deps.heartbeatIntervalSeconds } : {}),
    });
    this.inventoryFeed = new InventoryFeed({
      source: deps.source,
      nodes: this.nodes,
      changes: deps.backend,
      clock: deps.clock,
      logger: deps.logger,
    });
    this.login = new LocalLogin({
      backend: deps.backend,
      clock: deps.clock,
      sessions: this.sessions,
      webauthn: this.webauthn,
      lockedOut: (name) => this.#userLockRefusal(name),
      loginAllowed: (name) =>
        this.#activeChecker(name) !== undefined && this.#user(name)?.spec.local_login !== false,
      requireMfa: (name) => this.#activeChecker(name)?.options().requireMfa === true,
      ...(deps.lockout ? { lockout: deps.lockout } : {}),
    });
    this.resets = new PasswordResets({ backend: deps.backend, clock: deps.clock });
    this.ssoUsers = new SsoUsers({ backend: deps.backend, clock: deps.clock });
    this.sso = new SsoFlow({
      ...deps.sso,
      backend: deps.backend,
      source: deps.source,
      getRole: (name) => this.#getRole(name),
      clock: deps.clock,
      login: this.login,
      webauthn: this.webauthn,
      users: this.ssoUsers,
      sessionTtlMs: this.sessions.ttlMs,
      // A locked user's single sign-on stops here, saying so.
      activeChecker: (name) => {
        const refusal = this.#userLockRefusal(name);
        if (refusal) throw new AccessDeniedError(refusal);
        return this.#activeChecker(name);
      },
    });
    const adminAudit = (e: { event_type: string; user_name: string; success: boolean; fields: JsonObject }) =>
      this.#audit(e);
    const writer = deps.writer ? { writer: managedBySvcctl(deps.writer) } : {};
    this.locks = new LockService({
      source: deps.source,
      ...writer,
      clock: deps.clock,
      logger: deps.logger,
      audit: adminAudit,
    });
    this.trustFeed = new TrustFeed({
      sources: trustFeedSources({
        locks: this.locks,
        publicKeys: () => deps.keys.publicKeys(),
        ...(deps.authorities ? { authorities: deps.authorities } : {}),
        ...(deps.onAuthoritiesChange ? { onAuthoritiesChange: deps.onAuthoritiesChange } : {}),
      }),
      clock: deps.clock,
      logger: deps.logger,
      ...(deps.lockKeepaliveSeconds ? { keepaliveSeconds: deps.lockKeepaliveSeconds } : {}),
      stillAllowed: (caller) => this.#mayStillWatch(caller),
    });
    this.sessionFeed.follow(deps.source, this.locks);
    // Bots: renewals, bootstraps and SVIDs of a locked bot are refused; theft locks the bot.
    deps.agentIdentities?.useLocks?.(this.locks);
    this.#adminUsers = new AdminUsers({
      source: deps.source,
      ...writer,
      clock: deps.clock,
      resets: this.resets,
      revokeSessions: (name) => this.sessions.revokeAll(name),
      audit: adminAudit,
    });
    this.#adminTokens = new AdminJoinTokens({
      source: deps.source,
      ...writer,
      clock: deps.clock,
      audit: adminAudit,
    });
    this.#operatorHooks = new OperatorHooks({
      backend: deps.backend,
      source: deps.source,
      sessions: this.sessions,
      audit: adminAudit,
    });
    this.#unsubscribe = deps.source.subscribe((event) => {
      if (event.resource.kind === "Connector" && event.type === "delete") {
        void this.#forgetConnector(event.resource.metadata.name);
        return;
      }
      if (event.resource.kind !== "User") return;
      const name = event.resource.metadata.name;
      if (event.type === "delete") {
        void this.#forgetUser(name);
      } else {
        // A User resource taking the name of an SSO user ends that SSO user (its sessions name
        // their connector, so they would not pass as the local user's anyway).
        void this.#forgetSsoUser(name);
        if (this.#activeChecker(name) === undefined) void this.#revokeAll(name, "user disabled or locked");
      }
    });
  }

  // ---- identity helpers ------------------------------------------------------------------

  /**
   * The User resource of the name, else the live SSO user's record as a User (loaded for this call
   * by #loadSsoUser: see sso/users.ts).
   */
  #user(name: string): User | undefined {
    return this.#d.source.get("User", name) ?? this.ssoUsers.cached(name)?.user;
  }

  /** Loads the SSO record of a name that has no User resource (before the synchronous checks). */
  async #loadSsoUser(name: string): Promise<void> {
    if (this.#d.source.get("User", name) === undefined) await this.ssoUsers.load(name);
  }

  checkerFor(name: string): AccessChecker | undefined {
    const user = this.#user(name);
    if (!user) return undefined;
    // An SSO user's traits are the provider's claims: {{external.x}} and {{internal.x}} read them.
    const external = this.#d.source.get("User", name) === undefined ? (user.spec.traits ?? {}) : undefined;
    // Sources replace a resource object on every change (core/sources/cache.ts), so the User
    // object and its Role objects' identities are their revision: a hit is exactly what a fresh
    // build would give, and any edit, lock or deletion misses.
    const roles = user.spec.roles.map((r) => this.#d.source.get("Role", r));
    const hit = this.#checkers.get(user);
    if (hit && hit.roles.length === roles.length && hit.roles.every((r, i) => r === roles[i])) {
      return hit.checker;
    }
    const byName = new Map(user.spec.roles.map((r, i) => [r, roles[i]]));
    const checker = accessForUser(user, (r) => byName.get(r), external).checker;
    this.#checkers.set(user, { roles, checker });
    return checker;
  }

  /** The checker of a user who may hold a session now (exists, not disabled, not role-locked). */
  #activeChecker(name: string): AccessChecker | undefined {
    const user = this.#user(name);
    if (!user || user.spec.disabled) return undefined;
    const checker = this.checkerFor(name);
    return checker && !checker.options().locked ? checker : undefined;
  }

  /** The caller as role-assignment.ts judges it: its checker (if it may act) and its own traits. */
  #assigner(caller: Caller): Assigner | undefined {
    const name = requireUser(caller).username;
    const checker = this.#activeChecker(name);
    return checker ? { checker, traits: this.#user(name)?.spec.traits ?? {} } : undefined;
  }

  readonly #getRole = (name: string): Role | undefined => this.#d.source.get("Role", name);

  /** The admin capabilities the session may use now: the interceptor's own decision, per entry. */
  #allowed(user: Extract<Caller, { kind: "user" }>): string[] {
    // An enrolment-only session is refused every admin RPC (interceptor.ts), whatever its roles.
    if (user.sessionScope === "mfa_enrollment") return [];
    const checker = this.#activeChecker(user.username);
    if (!checker) return [];
    return ADMIN_CAPABILITIES.filter((c) => checker.can(c.resource, c.verb)).map((c) => c.name);
  }

  #checkerOrDeny(name: string): AccessChecker {
    const c = this.#activeChecker(name);
    if (!c) throw new NotAuthenticatedError("invalid or expired session");
    return c;
  }

  /**
   * A session confined to enrolment (password only, roles require MFA) enrols the user's FIRST
   * device and no more: once a device exists, adding one takes a login that passed a device, so
   * a password alone (or an enrolment session left over from before) cannot add an attacker's key.
   */
  async #firstDeviceOnly(user: Extract<Caller, { kind: "user" }>): Promise<void> {
    if (user.sessionScope === "mfa_enrollment" && (await this.webauthn.hasDevices(user.username)))
      throw new AccessDeniedError(FIRST_DEVICE_ONLY);
  }

  async #revokeAll(name: string, reason: string): Promise<void> {
    try {
      const n = await this.sessions.revokeAll(name);
      if (n > 0) this.#d.logger.info({ user: name, sessions: n, reason }, "sessions revoked");
    } catch (err) {
      this.#d.logger.error({ err, user: name }, "revoking sessions failed");
    }
  }

  async #forgetConnector(name: string): Promise<void> {
    try {
      const r = await this.sso.connectorDeleted(name, (user) => this.sessions.revokeAll(user));
      if (r.users > 0)
        this.#d.logger.info(
          { connector: name, users: r.users, sessions: r.sessions },
          "connector deleted: its SSO users signed out",
        );
    } catch (err) {
      this.#d.logger.error({ err, connector: name }, "signing out a deleted connector's users failed");
    }
  }

  async #forgetSsoUser(name: string): Promise<void> {
    try {
      if (!(await this.ssoUsers.load(name))) return;
      await this.ssoUsers.remove(name);
      await this.#revokeAll(name, "a User resource took the name of an SSO user");
    } catch (err) {
      this.#d.logger.error({ err, user: name }, "ending an SSO user failed");
    }
  }

  /**
   * May this session's holder act now: a local session needs its User resource; an SSO session the
   * live SSO user of its own connector (and no User resource of that name). Then the usual checks.
   */
  #sessionActive(name: string, session: WebSession): boolean | Promise<boolean> {
    const resource = this.#d.source.get("User", name);
    // A local session is decided from memory without a promise (the interceptor's common case).
    if (session.connector === undefined)
      return resource !== undefined && this.#activeChecker(name) !== undefined;
    return this.#ssoSessionActive(name, session.connector, resource !== undefined);
  }

  async #ssoSessionActive(name: string, connectorName: string, hasResource: boolean): Promise<boolean> {
    if (hasResource) return false;
    // A session made by a connector lives no longer than the connector (deleted or being deleted).
    const connector = this.#d.source.get("Connector", connectorName);
    if (!connector || connector.metadata.deletionTimestamp) return false;
    const record = await this.ssoUsers.load(name);
    if (!record || record.connector !== connectorName) return false;
    return this.#activeChecker(name) !== undefined;
  }

  async #forgetUser(name: string): Promise<void> {
    await this.#revokeAll(name, "user deleted");
    try {
      // A later user with the same name must not inherit the credentials.
      await deletePassword(this.#d.backend, name);
      await this.webauthn.deleteAll(name);
    } catch (err) {
      this.#d.logger.error({ err, user: name }, "removing credentials of a deleted user failed");
    }
  }

  #sshLoginDeps(): SshLoginDeps {
    return {
      clock: this.#d.clock,
      userCaKeys: async () => (await this.#d.keys.publicKeys()).user_ca_ssh_public_keys ?? [],
      getRole: (name) => this.#d.source.get("Role", name),
      current: async (identity) => {
        switch (identity.kind) {
          case "user": {
            await this.#loadSsoUser(identity.name);
            if (!this.#activeChecker(identity.name)) return undefined;
            const u = this.#user(identity.name);
            return u ? { roles: u.spec.roles, traits: u.spec.traits ?? {} } : undefined;
          }
          case "bot":
            return (await this.#d.agentIdentities?.activeRoles(identity.name)) ?? undefined;
          case "workload":
            // The workload's role is fixed by its SPIFFE ID mapping at issue; it holds it while
            // the Role exists (getRole decides that).
            return { roles: identity.roles };
        }
      },
      nodeLabels: async (agentId) => (await this.nodes.get(agentId))?.labels,
      lockRefusal: (subject) => {
        const lock = this.locks.covering(subject);
        return lock ? lockRefusal(lock) : undefined;
      },
    };
  }

  interceptorDeps(): InterceptorDeps {
    return {
      sessions: this.sessions,
      peerIdentity: this.#d.peerIdentity ?? peerIdentityFromCertificate,
      userActive: (name, session) => this.#sessionActive(name, session),
      requireMfa: (name) => this.#activeChecker(name)?.options().requireMfa === true,
      can: (name, resource, verb) => this.#activeChecker(name)?.can(resource, verb) ?? false,
      lockedOut: (rpc, caller) => this.#lockedOut(rpc, caller),
      // Nodes join through agentJoin; services acting as agents ("proxy:<name>") never do.
      ...(this.#d.agentJoin
        ? {
            agentActive: async (id: string, caller: Caller) => {
              if (id.includes(":")) return true;
              const registration = await this.#d.agentJoin?.registration(id);
              this.#callRegistration.set(caller, { registration });
              return registration !== undefined;
            },
          }
        : {}),
    };
  }

  interceptor(): ServerInterceptor {
    return authInterceptor(this.interceptorDeps());
  }

  addToServer(server: Pick<Server, "addService">): void {
    server.addService(authServiceDefinition, this.handlers);
  }

  close(): void {
    this.#unsubscribe();
    this.apps?.close();
    this.trustFeed.close();
    void this.sessionFeed.close();
    this.inventoryFeed.close();
    this.locks.close();
  }

  /** Application access, deciding with this service's view of users, sessions and locks. */
  #appAccess(o: AppAccessOptions): AppAccess {
    const apps = new AppAccess({
      ...o,
      backend: this.#d.backend,
      source: this.#d.source,
      clock: this.#d.clock,
      logger: this.#d.logger,
      user: async (name) => {
        await this.#loadSsoUser(name);
        const checker = this.#activeChecker(name);
        const traits = this.#user(name)?.spec.traits ?? {};
        // As checkerFor: an SSO user's traits are the provider's claims, read by both namespaces.
        return checker ? { checker, internal: traits, external: traits } : undefined;
      },
      lockRefusal: (name) => this.#userLockRefusal(name),
      webSessionLive: async (name, hash) => {
        const s = await this.sessions.byHash(hash);
        if (s === undefined || s.username !== name || !(await this.#sessionActive(name, s))) return false;
        return s.mfa || this.#activeChecker(name)?.options().requireMfa !== true;
      },
      audit: (e) => this.#audit(e),
    });
    apps.start();
    return apps;
  }

  // ---- locks (docs/locks.md): every refusal goes through lockRefusal of the covering lock --------

  /** WatchTrust's recheck at every keepalive: what the interceptor asked when the stream opened. */
  async #mayStillWatch(caller: Caller): Promise<boolean> {
    if (caller.kind === "user") {
      // An SSO user's record may have left the cache since the stream opened.
      await this.#loadSsoUser(caller.username);
      return (
        (await this.sessions.liveByHash(caller.sessionHash)) &&
        this.#lockedOut("WatchTrust", caller) === undefined &&
        (this.#activeChecker(caller.username)?.can("locks", "list") ?? false)
      );
    }
    if (caller.kind === "agent" && !caller.agentId.includes(":") && this.#d.agentJoin)
      return (await this.#d.agentJoin.registration(caller.agentId)) !== undefined;
    return true;
  }

  /** The user's subject: the name and the roles it holds now. */
  #userSubject(name: string): LockSubject {
    return { user: name, roles: this.#user(name)?.spec.roles ?? [] };
  }

  /** "locked: <message>" when a lock covers the user (or one of its roles), else undefined. */
  #userLockRefusal(name: string): string | undefined {
    const lock = this.locks.covering(this.#userSubject(name));
    return lock ? lockRefusal(lock) : undefined;
  }

  /**
   * The interceptor's lock check, after authentication: a locked user's session is refused on
   * every RPC but its own logout; a locked node on every RPC but WatchTrust (which keeps telling
   * it about its own lock); a locked bot everywhere.
   */
  #lockedOut(rpc: string, caller: Caller): string | undefined {
    let subject: LockSubject | undefined;
    if (caller.kind === "user" && rpc !== "DeleteSession") subject = this.#userSubject(caller.username);
    else if (caller.kind === "agent" && !caller.agentId.includes(":") && rpc !== "WatchTrust")
      subject = { node: caller.agentId };
    else if (caller.kind === "bot")
      subject = {
        bot: caller.botName,
        roles: this.#d.source.get("AgentIdentity", caller.botName)?.spec.roles ?? [],
      };
    const lock = subject ? this.locks.covering(subject) : undefined;
    return lock ? lockRefusal(lock) : undefined;
  }

  async #audit(event: {
    event_type: string;
    user_name: string;
    success?: boolean;
    fields?: JsonObject;
  }): Promise<CoreAuditEvent> {
    return this.#d.backend.appendAudit(event);
  }

  #loginAnswer(
    r: LoginResult,
    challenge?: { challengeId: string; optionsJson: string },
  ): AuthenticateLocalResponse {
    if (r.kind === "session") {
      return {
        session: {
          session_id: r.id,
          username: r.session.username,
          roles: this.#user(r.session.username)?.spec.roles ?? [],
          expires_unix_ms: r.session.expires.getTime(),
          created_unix_ms: r.session.created.getTime(),
          mfa_verified: r.session.mfa,
          scope: r.session.scope,
        },
      };
    }
    return {
      mfa_required: {
        mfa_token: r.mfaToken,
        ...(challenge
          ? { challenge: { challenge_id: challenge.challengeId, options_json: challenge.optionsJson } }
          : {}),
      },
    };
  }

  /**
   * The login's client address: the one a proxy (host-CA certificate svc://proxy/...) reports, or
   * else this connection's own peer, so a direct caller cannot pose as an address the user is
   * known from (login throttling, docs/auth.md).
   */
  #clientAddress(
    claimed: string,
    call: Pick<ServerUnaryCall<unknown, unknown>, "getAuthContext" | "getPeer">,
  ): string {
    const cert = call.getAuthContext().sslPeerCertificate;
    const peer = cert ? (this.#d.peerIdentity ?? peerIdentityFromCertificate)(cert) : undefined;
    if (peer?.kind === "agent" && peer.id.startsWith("proxy:")) return claimed;
    return peerHost(call.getPeer());
  }

  // ---- handlers -----------------------------------------------------------------------------

  readonly handlers: AuthServiceHandlers = {
    AuthenticateLocal: unary(async (req, _caller, call) => {
      const c = this.#d.cluster;
      if (c.localLogin === false && (c.localLoginExempt === undefined || req.username !== c.localLoginExempt))
        throw new AccessDeniedError("password login is disabled");
      const r = await this.login.login(
        req.username,
        req.password,
        this.#clientAddress(req.client_address, call),
      );
      if (r.kind === "mfa" && req.webauthn?.rp_id) {
        const rp = rpFrom(this.#d.relyingParty, req.webauthn);
        return this.#loginAnswer(
          r,
          await this.webauthn.beginLoginFor(r.username, rp, hashSecret(r.mfaToken)),
        );
      }
      return this.#loginAnswer(r);
    }),

    IssueUserCerts: unary(async (req, caller) => {
      const user = requireUser(caller);
      const checker = this.#checkerOrDeny(user.username);
      const opts = checker.options();
      // The interceptor already confines such sessions to enrolment; this is the certificate's own
      // guard, so no path to a certificate skips the second factor a role asks for.
      if (opts.requireMfa && !user.sessionMfa)
        throw new AccessDeniedError("your roles require multi-factor authentication for certificates");
      let key: ReturnType<typeof parseSshPublicKey>;
      try {
        key = parseSshPublicKey(req.ssh_public_key);
      } catch (err) {
        throw err instanceof BadParameterError ? err : new BadParameterError("ssh_public_key is malformed");
      }
      if (req.node.length > 253) throw new BadParameterError("node is too long");
      const principals = certPrincipals(
        checker,
        await principalNodes(this.#d.backend, this.#d.clock, { scoped: req.node !== "" }),
        req.node || undefined,
      );
      if (principals.length === 0) throw new AccessDeniedError("the user's roles grant no logins");
      if (!Number.isInteger(req.ttl_seconds) || req.ttl_seconds < 0)
        throw new BadParameterError("ttl_seconds must be >= 0");
      const ttlMs =
        req.ttl_seconds === 0 ? opts.maxSessionTtlMs : Math.min(req.ttl_seconds * 1000, opts.maxSessionTtlMs);
      const now = this.#d.clock.now().getTime();
      const extensions = sshExtensionsOf(checker);
      // Names the user and the session by the first 16 hex of its hash (never the secret).
      const keyId = `user=${user.username} session=${user.sessionHash.slice(0, 16)}`;
      const validAfter = new Date(now - CERT_BACKDATE_MS);
      // Never past the session that asked: logging out or expiring ends what it could issue.
      const validBefore = new Date(Math.min(now + ttlMs, user.sessionExpires.getTime()));
      if (validBefore.getTime() <= now) throw new NotAuthenticatedError("invalid or expired session");
      const cert = this.#d.keys.userCertSigner.sign({
        type: "user",
        // The parsed key itself: the encoder reuses its blob, so no KeyObject import (~100 us) per cert.
        publicKey: key,
        keyId,
        principals,
        validAfter,
        validBefore,
        extensions,
        // The same (sealed) object per user and roles: the signer reuses its encoding.
        valueExtensions: userIdentityExtension(
          checker,
          user.username,
          this.#user(user.username)?.spec.traits,
        ),
      });
      // Journaled before it is handed out: a lock on the user reaches agentless nodes' KRLs.
      await this.#journal.record({
        keyId,
        kind: "user",
        name: user.username,
        // Copied by the journal when it stores them.
        roles: checker.roleNames,
        validBefore,
        certBlob: cert.blob,
        caKeyBlob: cert.caKeyBlob,
        // Every certificate of this key id (this session's) ends by the session's expiry.
        keepUntil: user.sessionExpires,
      });
      await this.#audit(
        userCertCreatedEvent({
          emittedBy: callerLabel(caller),
          username: user.username,
          keyId,
          serial: cert.serial,
          principals,
          validBefore,
          publicKeyBlob: key.blob,
        }),
      );
      const keys = this.#d.keys.publicKeys();
      // Usually at hand: no await (and its turn) for a value that is not a promise.
      const pub = keys instanceof Promise ? await keys : keys;
      return {
        ssh_certificate: cert.line,
        principals,
        key_id: keyId,
        valid_after_unix_ms: validAfter.getTime(),
        valid_before_unix_ms: validBefore.getTime(),
        host_ca_ssh_public_keys: pub.host_ca_ssh_public_keys ?? [],
      };
    }),

    RegisterAgent: unary(async (req, _caller, call) => {
      if (!this.#d.agentJoin)
        throw new NotImplementedError("RegisterAgent is not enabled on this auth server");
      const res = await this.#d.agentJoin.register(req, { peer: call.getPeer() });
      // The new node is in the proxies' inventory copies before it hears it joined.
      await this.inventoryFeed.refreshNodes(res.agent_id ? [res.agent_id] : []);
      return res;
    }),
    RegisterUsingIAMMethod: (
      call: ServerDuplexStream<RegisterUsingIAMMethodRequest__Output, RegisterUsingIAMMethodResponse>,
    ) => {
      if (!this.#d.iamJoin) {
        call.emit("error", toGrpcError(new NotImplementedError("RegisterUsingIAMMethod is not enabled")));
        return;
      }
      this.#d.iamJoin.serve(call);
    },
    BootstrapAgentIdentity: unary(async (req, _caller, call) =>
      wired(this.#d.agentIdentities, "BootstrapAgentIdentity").bootstrap(req, { peer: call.getPeer() }),
    ),
    RenewAgentIdentity: unary(async (req, caller, call) =>
      wired(this.#d.agentIdentities, "RenewAgentIdentity").renew(req, {
        caller,
        peerCertificate: call.getAuthContext().sslPeerCertificate,
      }),
    ),
    AuthenticateSPIFFE: unary(async (req, _caller, call) =>
      wired(this.#d.spiffe, "AuthenticateSPIFFE").authenticate(req, { peer: call.getPeer() }),
    ),
    CreateAgentIdentity: unary(async (req, caller) => {
      const handler = wired(this.#d.agentIdentities, "CreateAgentIdentity");
      assertMayAssign(this.#assigner(caller), { roles: req.roles ?? [] }, this.#getRole);
      return handler.create(req, caller);
    }),
    ListAgentIdentities: unary(async () => wired(this.#d.agentIdentities, "ListAgentIdentities").list()),
    DeleteAgentIdentity: unary(async (req, caller) =>
      wired(this.#d.agentIdentities, "DeleteAgentIdentity").remove(req, caller),
    ),
    IssueWorkloadSVID: unary(async (req, caller) =>
      wired(this.#d.spiffe, "IssueWorkloadSVID").issueWorkloadSvid(req, caller),
    ),

    CreateUser: unary(async (req, caller) => {
      const grant = { roles: req.roles ?? [], traits: { logins: req.logins ?? [] } };
      assertMayAssign(this.#assigner(caller), grant, this.#getRole);
      return this.#adminUsers.create(req, caller);
    }),
    DeleteUser: unary(async (req, caller) => this.#adminUsers.remove(req, caller)),
    CreatePasswordReset: unary(async (req, caller) => {
      // A reset token opens the account: taking it over is holding its roles and traits.
      const target = this.#user(req.name);
      if (target) {
        const roles = target.spec.roles.filter((r) => this.#getRole(r) !== undefined);
        assertMayAssign(this.#assigner(caller), { roles, traits: target.spec.traits ?? {} }, this.#getRole);
      }
      return this.#adminUsers.reset(req, caller);
    }),
    ResetPassword: unary(async (req) => this.#adminUsers.resetPassword(req)),
    CreateJoinToken: unary(async (req, caller) => this.#adminTokens.create(req, caller)),
    ListJoinTokens: unary(async () => this.#adminTokens.list()),
    DeleteJoinToken: unary(async (req, caller) => this.#adminTokens.remove(req, caller)),

    AuthorizeSshLogin: unary(async (req, caller) => {
      if (caller.kind !== "agent") throw new NotAuthenticatedError("agents only");
      return authorizeSshLogin(req, caller.agentId, this.#sshLoginDeps());
    }),

    // A proxy (an agent caller named "proxy:<name>") asks before admitting a node's tunnel; a node
    // may ask only about itself.
    CheckNodeRegistered: unary(async (req, caller) => {
      if (caller.kind !== "agent") throw new NotAuthenticatedError("agents only");
      if (!req.agent_id || req.agent_id.includes(":")) return { registered: false };
      if (!caller.agentId.startsWith("proxy:") && req.agent_id !== caller.agentId)
        throw new AccessDeniedError("a node may check only its own registration");
      const reg = await this.#d.agentJoin?.registration(req.agent_id);
      return { registered: reg !== undefined && !reg.agentless };
    }),

    // ---- trust lifecycle (placeholders until each part lands; docs/locks.md, docs/ca-rotation.md)
    CreateLock: unary(async (req, caller) => {
      checkNodeTarget(req.target?.node, await this.nodes.list());
      return this.locks.create(req, caller);
    }),
    ListLocks: unary(async () => this.locks.list()),
    DeleteLock: unary(async (req, caller) => this.locks.remove(req, caller)),
    WatchTrust: (call: ServerWritableStream<WatchTrustRequest__Output, TrustSnapshot>) =>
      this.trustFeed.serve(call, callerOf(call.metadata)),
    ExportKrl: unary(async (_req, caller) =>
      exportKrl(caller, {
        journal: this.#journal,
        cache: this.#krlCache,
        locks: () => this.locks.inForce(),
        publicKeys: () => this.#d.keys.publicKeys(),
        clock: this.#d.clock,
        isNode: async (id) => {
          const reg = await this.#d.agentJoin?.registration(id);
          return reg !== undefined && !reg.agentless;
        },
      }),
    ),
    RenewNodeCredentials: unary(async (req, caller) =>
      wired(this.#d.nodeRenewal, "RenewNodeCredentials").renew(req, caller),
    ),
    RotateCertAuthority: unary(async (req, caller) =>
      wired(this.#d.caRotation, "RotateCertAuthority").rotate(req, caller),
    ),
    ListCertAuthorities: unary(async () => wired(this.#d.caRotation, "ListCertAuthorities").list()),

    // ---- proxy caches (placeholders until each part lands; docs/proxy-cache.md)
    WatchSessions: (call: ServerWritableStream<WatchSessionsRequest__Output, SessionEvent>) =>
      this.sessionFeed.serve(call, callerOf(call.metadata)),
    WatchInventory: (call: ServerWritableStream<WatchInventoryRequest__Output, InventoryEvent>) =>
      this.inventoryFeed.serve(call, callerOf(call.metadata)),

    AuthorizeNodeLogin: unary(async (req, caller) => {
      const node = authorizeNodeLogin(
        req,
        this.#checkerOrDeny(requireUser(caller).username),
        await this.nodes.list(),
      );
      // The user's own locks were refused by the interceptor; a locked node takes no logins.
      const lock = this.locks.covering({ node: node.id });
      if (lock) throw new AccessDeniedError(lockRefusal(lock));
      return node;
    }),

    RevokeUserSessions: unary(async (req, caller) => this.#operatorHooks.revokeUserSessions(req, caller)),
    GetJoinTokenUsage: unary(async (req) => this.#operatorHooks.joinTokenUsage(req)),

    GetSession: unary(async (_req, caller) => {
      const user = requireUser(caller);
      return {
        session_id: "",
        username: user.username,
        roles: this.#user(user.username)?.spec.roles ?? [],
        expires_unix_ms: user.sessionExpires.getTime(),
        created_unix_ms: user.sessionCreated.getTime(),
        mfa_verified: user.sessionMfa,
        scope: user.sessionScope,
        allowed: this.#allowed(user),
      };
    }),

    DeleteSession: unary(async (_req, caller) => {
      const user = requireUser(caller);
      await this.sessions.revoke(user.username, user.sessionHash);
      await this.#audit({
        event_type: "user.logout",
        user_name: user.username,
        success: true,
        fields: { emitted_by: callerLabel(caller) },
      });
      return {};
    }),

    // ---- application access (apps/access.ts, docs/apps.md)
    ListApps: unary(async (_req, caller) => wired(this.apps, "ListApps").listApps(caller)),
    CreateAppSession: unary(async (req, caller) =>
      wired(this.apps, "CreateAppSession").createAppSession(req, caller),
    ),
    ExchangeAppSession: unary(async (req, caller) =>
      wired(this.apps, "ExchangeAppSession").exchange(req, caller),
    ),
    GetAppSession: unary(async (req, caller) => wired(this.apps, "GetAppSession").get(req, caller)),
    DeleteAppSession: unary(async (req, caller) => {
      await wired(this.apps, "DeleteAppSession").remove(req.session_id, caller);
      return {};
    }),
    LogoutApps: unary(async (req, caller) => wired(this.apps, "LogoutApps").logoutApps(req.app_name, caller)),

    ListNodes: unary(async (req, caller) =>
      queryNodes(await this.nodes.list(), this.#checkerOrDeny(requireUser(caller).username), req),
    ),

    DeleteNode: unary(async (req, caller) => {
      const reg = await wired(this.#d.agentJoin, "DeleteNode").remove(req.node);
      // The proxies' inventory copies drop it before this answers (docs/proxy-cache.md).
      await this.inventoryFeed.refreshNodes([reg.id]);
      await this.#audit({
        event_type: "node.delete",
        user_name: requireUser(caller).username,
        success: true,
        fields: { emitted_by: callerLabel(caller), node_id: reg.id, hostname: reg.hostname },
      });
      return { id: reg.id, hostname: reg.hostname };
    }),

    ListUsers: unary(async () => {
      const users = this.#d.source.list("User").sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : 1));
      const out = [];
      for (const u of users) {
        const traits: Record<string, { values: string[] }> = {};
        for (const [k, v] of Object.entries(u.spec.traits ?? {})) traits[k] = { values: [...v] };
        const locked = await this.login.lockedUntil(u.metadata.name);
        out.push({
          name: u.metadata.name,
          roles: u.spec.roles,
          traits,
          webauthn_enrolled: await this.webauthn.hasDevices(u.metadata.name),
          locked_until_unix_ms: locked ? locked.getTime() : 0,
        });
      }
      return { users: out };
    }),

    ListRoles: unary(async () => ({
      roles: this.#d.source
        .list("Role")
        .sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : 1))
        .map((r) => ({ name: r.metadata.name, spec_json: JSON.stringify(r.spec) })),
    })),

    ListRecordings: unary(async (req, caller) => {
      const user = requireUser(caller);
      const page = pageOf(req.limit, req.offset);
      const isAdmin = this.#checkerOrDeny(user.username).can(
        RECORDINGS_ADMIN.resource,
        RECORDINGS_ADMIN.verb,
      );
      // Non-admins: restricted server-side to their own, whatever the filter says.
      const userFilter = isAdmin ? req.user : user.username;
      if (!isAdmin && req.user !== "" && req.user !== user.username) return { items: [], total_count: 0 };
      const startTime = timeBound(req.start_unix_ms);
      const endTime = timeBound(req.end_unix_ms);
      const r = await listRecordings(this.#d.backend, {
        ...page,
        ...(userFilter ? { user: userFilter } : {}),
        ...(req.protocol ? { protocol: req.protocol } : {}),
        ...(req.node ? { node: req.node } : {}),
        ...(startTime ? { startTime } : {}),
        ...(endTime ? { endTime } : {}),
      });
      return { items: r.items, total_count: r.total };
    }),

    SearchAuditEvents: unary(async (req) => {
      const page = pageOf(req.limit, req.offset);
      // start inclusive, end exclusive: the backend's half-open window, as the proto says
      const startTime = timeBound(req.start_unix_ms);
      const endTime = timeBound(req.end_unix_ms);
      const r = await this.#d.backend.searchAudit({
        ...page,
        ...(req.type ? { type: req.type } : {}),
        ...(req.user ? { user: req.user } : {}),
        ...(startTime ? { startTime } : {}),
        ...(endTime ? { endTime } : {}),
      });
      return { items: r.items.map(auditToWire), total_count: r.totalCount };
    }),

    EmitAuditEvent: unary(async (req, caller) => {
      const userName = checkEmittable(caller, req.event_type, req.user_name);
      if (caller.kind === "agent" || caller.kind === "user")
        this.#emitLimiter.take(callerLabel(caller), EMIT_LIMITS[caller.kind]);
      const fields = { ...parseFields(req.fields_json), emitted_by: callerLabel(caller) };
      const event = await this.#audit({
        event_type: req.event_type,
        user_name: userName,
        fields,
        ...(req.success !== undefined ? { success: req.success } : {}),
      });
      return auditToWire(event);
    }),

    Heartbeat: unary(async (req, caller, call) => {
      if (caller.kind !== "agent") throw new NotAuthenticatedError("agents only");
      const labels =
        (await this.#d.agentJoin?.checkHeartbeat(
          caller.agentId,
          req.hostname,
          req.labels,
          this.#callRegistration.get(caller),
        )) ?? req.labels;
      const beat = {
        hostname: req.hostname,
        addresses: req.addresses,
        labels,
        version: req.version,
        ...(req.tunnel?.proxy_id || req.tunnel?.peer_addr
          ? { tunnel: { proxyId: req.tunnel.proxy_id, peerAddr: req.tunnel.peer_addr } }
          : {}),
      };
      // The connection is part of what must stay the same for a beat to be skipped: a restarted
      // agent (a new connection) is written at its first beat.
      const wrote = await this.nodes.beat(caller.agentId, beat, call.getPeer());
      // DeleteNode may have run since the checks above: a removed node must not be listed again
      // (only a write can bring it back; an unchanged beat within the window writes nothing).
      if (wrote && (await this.#d.agentJoin?.forgetIfRemoved(caller.agentId))) {
        void this.inventoryFeed.refreshNodes([caller.agentId]); // a read may have caught the record in between
        throw new NotAuthenticatedError("this node has been removed");
      }
      this.inventoryFeed.noteHeartbeat(caller.agentId, beat);
      return { interval_seconds: this.nodes.intervalSeconds };
    }),

    UploadRecording: (
      call: ServerReadableStream<UploadRecordingRequest__Output, UploadRecordingResponse>,
      callback: sendUnaryData<UploadRecordingResponse>,
    ) => {
      this.#upload(call).then(
        (res) => callback(null, res),
        (err: unknown) => callback(toGrpcError(err)),
      );
    },

    GetRecording: (call: ServerWritableStream<GetRecordingRequest__Output, GetRecordingResponse>) => {
      this.#download(call).then(
        () => call.end(),
        (err: unknown) => call.emit("error", toGrpcError(err)),
      );
    },

    BeginWebAuthnLogin: unary(async (req) => {
      const c = await this.webauthn.beginLogin(
        req.mfa_token,
        rpFrom(this.#d.relyingParty, req.relying_party),
      );
      return { challenge_id: c.challengeId, options_json: c.optionsJson };
    }),

    FinishWebAuthnLogin: unary(async (req, _caller, call) => {
      const rp = rpFrom(this.#d.relyingParty, req.relying_party);
      const username = await this.webauthn.finishLogin(req.challenge_id, req.credential_json, rp);
      await this.#loadSsoUser(username);
      // Locked since the password step: said so (the device proved who asks).
      const lockRefused = this.#userLockRefusal(username);
      if (lockRefused) throw new AccessDeniedError(lockRefused);
      // The user may have been deleted, disabled or role-locked since the password step. (Login
      // throttling is not checked here: the password step passed it, and others' failures for the
      // name must not stop the user.)
      if (this.#activeChecker(username) === undefined) {
        throw new NotAuthenticatedError("invalid username or password");
      }
      // The second factor of a single sign-on login (no User resource: an SSO user).
      if (this.#d.source.get("User", username) === undefined || req.sso_request_id !== "")
        return this.sso.finishMfa(
          username,
          req.sso_request_id,
          this.#clientAddress(req.client_address, call).slice(0, 128),
        );
      const r = await this.login.completeLogin(
        username,
        {
          client_address: this.#clientAddress(req.client_address, call).slice(0, 128),
          method: "local+webauthn",
        },
        { mfa: true },
      );
      return this.#loginAnswer(r);
    }),

    BeginWebAuthnRegistration: unary(async (req, caller) => {
      const user = requireUser(caller);
      await this.#firstDeviceOnly(user);
      const c = await this.webauthn.beginRegistration(
        user.username,
        rpFrom(this.#d.relyingParty, req.relying_party),
      );
      return { challenge_id: c.challengeId, options_json: c.optionsJson };
    }),

    FinishWebAuthnRegistration: unary(async (req, caller) => {
      const user = requireUser(caller);
      await this.#firstDeviceOnly(user);
      const d = await this.webauthn.finishRegistration(
        user.username,
        req.challenge_id,
        req.credential_json,
        rpFrom(this.#d.relyingParty, req.relying_party),
        req.device_name,
      );
      if (user.sessionScope === "mfa_enrollment") {
        // Checked again once written: of two enrolment sessions racing, neither keeps a second device.
        const all = await this.webauthn.devices(user.username);
        if (all.length > 1) {
          await this.webauthn.deleteDevice(user.username, d.id).catch(() => undefined);
          throw new AccessDeniedError(FIRST_DEVICE_ONLY);
        }
      }
      await this.#audit({
        event_type: "mfa.device.add",
        user_name: user.username,
        success: true,
        fields: { emitted_by: callerLabel(caller), device_name: d.name },
      });
      return { id: d.id, name: d.name, created_unix_ms: Date.parse(d.created), last_used_unix_ms: 0 };
    }),

    ListWebAuthnDevices: unary(async (_req, caller) => {
      const user = requireUser(caller);
      const devices = await this.webauthn.devices(user.username);
      return {
        devices: devices.map((d) => ({
          id: d.id,
          name: d.name,
          created_unix_ms: Date.parse(d.created),
          last_used_unix_ms: d.lastUsed ? Date.parse(d.lastUsed) : 0,
        })),
      };
    }),

    DeleteWebAuthnDevice: unary(async (req, caller) => {
      const user = requireUser(caller);
      if (!/^[A-Za-z0-9_-]{1,1024}$/.test(req.id)) throw new BadParameterError("id is malformed");
      await this.webauthn.deleteDevice(user.username, req.id);
      await this.#audit({
        event_type: "mfa.device.delete",
        user_name: user.username,
        success: true,
        fields: { emitted_by: callerLabel(caller) },
      });
      return {};
    }),

    RenameWebAuthnDevice: unary(async (req, caller) => {
      const user = requireUser(caller);
      if (!/^[A-Za-z0-9_-]{1,1024}$/.test(req.id)) throw new BadParameterError("id is malformed");
      const d = await this.webauthn.renameDevice(user.username, req.id, req.name);
      await this.#audit({
        event_type: "mfa.device.rename",
        user_name: user.username,
        success: true,
        fields: { emitted_by: callerLabel(caller), device_name: d.name },
      });
      return {
        id: d.id,
        name: d.name,
        created_unix_ms: Date.parse(d.created),
        last_used_unix_ms: d.lastUsed ? Date.parse(d.lastUsed) : 0,
      };
    }),

    CreateSSOAuthRequest: unary(async (req, _caller, call) =>
      this.sso.create(req, this.#clientAddress(req.client_address, call)),
    ),
    BindSSOAuthRequest: unary(async (req) => this.sso.bind(req)),
    ValidateSSOResponse: unary(async (req, _caller, call) =>
      this.sso.validate(req, {
        clientAddress: this.#clientAddress(req.client_address, call),
        rp: req.relying_party?.rp_id ? rpFrom(this.#d.relyingParty, req.relying_party) : undefined,
      }),
    ),
    ExchangeSSOCode: unary(async (req) => this.sso.exchange(req)),

    GetPublicKeys: unary(async () => this.#d.keys.publicKeys()),

    GetClusterInfo: unary(async (): Promise<ClusterInfo> => {
      const c = this.#d.cluster;
      return {
        cluster_name: c.clusterName,
        server_version: c.serverVersion,
        min_client_version: c.minClientVersion ?? "",
        recommended_client_version: c.recommendedClientVersion ?? c.serverVersion,
        local_login: c.localLogin !== false,
        default_connector: c.defaultConnector ?? "",
      };
    }),
  };

  async #upload(
    call: ServerReadableStream<UploadRecordingRequest__Output, UploadRecordingResponse>,
  ): Promise<UploadRecordingResponse> {
    const caller = callerOf(call.metadata);
    if (caller.kind !== "agent") throw new NotAuthenticatedError("agents only");
    let writer: RecordingWriter | undefined;
    let expectedSize = 0;
    try {
      for await (const msg of call as AsyncIterable<UploadRecordingRequest__Output>) {
        if (!writer) {
          const m = msg.metadata;
          if (msg.part !== "metadata" || !m)
            throw new BadParameterError("the first message must be metadata");
          const node =
            (await this.nodes.list()).find((n) => n.id === caller.agentId)?.hostname ?? caller.agentId;
          const w = new RecordingWriter(this.#d.backend, {
            id: m.id,
            user_name: m.user_name,
            protocol: m.protocol,
            node,
            login: m.login,
            start_unix_ms: m.start_unix_ms,
            end_unix_ms: m.end_unix_ms,
            format: m.format,
          });
          await w.begin();
          writer = w;
          expectedSize = Number(m.size_bytes);
          continue;
        }
        if (msg.part !== "chunk" || !msg.chunk)
          throw new BadParameterError("messages after metadata must be chunks");
        await writer.write(msg.chunk);
      }
      if (!writer) throw new BadParameterError("no metadata received");
      // A client that dies mid-stream can look like one that ended it: only the announced size
      // (or, from older agents, a call not cancelled meanwhile) makes the recording complete.
      if (expectedSize > 0 && writer.size !== expectedSize)
        throw new BadParameterError(`recording ended after ${writer.size} of ${expectedSize} bytes`);
      await new Promise((r) => setImmediate(r));
      if (call.cancelled) throw new UnavailableError("the upload was cancelled");
      const meta = await writer.finish();
      return { id: meta.id, size_bytes: meta.size_bytes };
    } catch (err) {
      await writer?.abort();
      throw err;
    }
  }

  async #download(
    call: ServerWritableStream<GetRecordingRequest__Output, GetRecordingResponse>,
  ): Promise<void> {
    const user = requireUser(callerOf(call.metadata));
    let meta: RecordingMeta;
    try {
      meta = await getRecordingMeta(this.#d.backend, call.request.id);
    } catch (err) {
      if (isNotFound(err)) throw new NotFoundError("recording not found");
      throw err;
    }
    const isAdmin = this.#checkerOrDeny(user.username).can(RECORDINGS_ADMIN.resource, RECORDINGS_ADMIN.verb);
    // Someone else's recording is "not found" to a non-admin (no existence oracle).
    if (!isAdmin && meta.user_name !== user.username) throw new NotFoundError("recording not found");
    await writeMessage(call, { metadata: meta });
    for await (const chunk of readRecording(this.#d.backend, meta)) {
      await writeMessage(call, { chunk });
    }
  }
}

/** Writes with back-pressure: waits for drain when the stream's buffer is full. */
function writeMessage<T>(call: ServerWritableStream<unknown, T>, msg: T): Promise<void> {
  return new Promise((resolve) => {
    if (call.write(msg)) resolve();
    else call.once("drain", () => resolve());
  });
}
