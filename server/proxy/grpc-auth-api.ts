// AuthApi over svc.v1.AuthService: TLS to auth with the proxy's host-CA client certificate, the
// caller's session forwarded as `authorization: Bearer`, gRPC statuses turned back into core
// errors so the proxy's error handler maps them like any other.

import { type CallOptions, Metadata, type ServiceError, status } from "@grpc/grpc-js";
import type {
  AuthenticationResponseJSON,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationResponseJSON,
} from "@simplewebauthn/server";
import {
  AccessDeniedError,
  AlreadyExistsError,
  BadParameterError,
  CompareFailedError,
  LimitExceededError,
  NotAuthenticatedError,
  NotFoundError,
  NotImplementedError,
  PreconditionFailedError,
  type SvcError,
  UnavailableError,
} from "../../core/errors.ts";
import type { JsonObject } from "../../core/json.ts";
import type { App__Output } from "../../proto/generated/svc/v1/App.ts";
import type { AuthenticateLocalResponse__Output } from "../../proto/generated/svc/v1/AuthenticateLocalResponse.ts";
import type { AuthServiceClient } from "../../proto/generated/svc/v1/AuthService.ts";
import type { ClusterInfo__Output as ClusterInfoMessage } from "../../proto/generated/svc/v1/ClusterInfo.ts";
import type { CreateAppSessionResponse__Output } from "../../proto/generated/svc/v1/CreateAppSessionResponse.ts";
import type { DeleteSessionResponse__Output } from "../../proto/generated/svc/v1/DeleteSessionResponse.ts";
import type { DeleteWebAuthnDeviceResponse__Output } from "../../proto/generated/svc/v1/DeleteWebAuthnDeviceResponse.ts";
import type { ListAppsResponse__Output } from "../../proto/generated/svc/v1/ListAppsResponse.ts";
import type { ListNodesResponse__Output } from "../../proto/generated/svc/v1/ListNodesResponse.ts";
import type { ListRecordingsResponse__Output } from "../../proto/generated/svc/v1/ListRecordingsResponse.ts";
import type { ListRolesResponse__Output } from "../../proto/generated/svc/v1/ListRolesResponse.ts";
import type { ListUsersResponse__Output } from "../../proto/generated/svc/v1/ListUsersResponse.ts";
import type { ListWebAuthnDevicesResponse__Output } from "../../proto/generated/svc/v1/ListWebAuthnDevicesResponse.ts";
import type { LogoutAppsResponse__Output } from "../../proto/generated/svc/v1/LogoutAppsResponse.ts";
import type { PublicKeys__Output } from "../../proto/generated/svc/v1/PublicKeys.ts";
import type { SearchAuditEventsResponse__Output } from "../../proto/generated/svc/v1/SearchAuditEventsResponse.ts";
import type { SessionView__Output } from "../../proto/generated/svc/v1/SessionView.ts";
import type { SSOAuthRequest__Output } from "../../proto/generated/svc/v1/SSOAuthRequest.ts";
import type { ValidateSSOResponseResult__Output } from "../../proto/generated/svc/v1/ValidateSSOResponseResult.ts";
import type { WebAuthnChallenge__Output } from "../../proto/generated/svc/v1/WebAuthnChallenge.ts";
import type { WebAuthnDevice__Output } from "../../proto/generated/svc/v1/WebAuthnDevice.ts";
import type { WebAuthnRelyingParty } from "../../proto/generated/svc/v1/WebAuthnRelyingParty.ts";
import { type AuthConnection, type AuthSource, connectionOf, waitForReady } from "../auth/client.ts";
import type {
  AppInfo,
  AppSessionStart,
  AuditEventInfo,
  AuditQuery,
  AuthApi,
  ClusterInfo,
  IssuedSession,
  LocalLoginResult,
  NodePage,
  NodeQuery,
  Page,
  PublicKeyMaterial,
  RecordingInfo,
  RecordingQuery,
  RelyingParty,
  RoleInfo,
  SessionInfo,
  SessionScope,
  SsoAuthRequest,
  SsoValidated,
  UserInfo,
  WebAuthnDevice,
  WebAuthnLoginChallenge,
  WebAuthnLoginResult,
  WebAuthnRegistrationChallenge,
} from "./auth-client.ts";
import { tunnelLocationOf } from "./auth-client.ts";

export interface GrpcAuthApiOptions {
  /** host:port of auth */
  address: string;
  /** host CA certificates that issued auth's server certificate */
  caPems: readonly string[];
  /** the proxy's own client certificate and key, issued by the host CA */
  certPem: string;
  keyPem: string;
  /** name to verify in auth's certificate when it differs from the address host */
  serverName?: string;
  /** per-call deadline */
  timeoutMs?: number;
}

type Callback<T> = (err: ServiceError | null, value?: T) => void;

const errorByStatus: Partial<Record<status, (m: string, md?: Metadata) => SvcError>> = {
  [status.INVALID_ARGUMENT]: (m) => new BadParameterError(m),
  [status.OUT_OF_RANGE]: (m) => new BadParameterError(m),
  [status.UNAUTHENTICATED]: (m) => new NotAuthenticatedError(m),
  [status.PERMISSION_DENIED]: (m) => new AccessDeniedError(m),
  [status.NOT_FOUND]: (m) => new NotFoundError(m),
  [status.ALREADY_EXISTS]: (m) => new AlreadyExistsError(m),
  [status.ABORTED]: (m) => new CompareFailedError(m),
  [status.RESOURCE_EXHAUSTED]: (m, md) => {
    const after = Number(md?.get("retry-after")[0]);
    return new LimitExceededError(
      m,
      Number.isInteger(after) && after > 0 ? { retryAfterSeconds: after } : {},
    );
  },
  [status.FAILED_PRECONDITION]: (m) => new PreconditionFailedError(m),
  [status.UNIMPLEMENTED]: (m) => new NotImplementedError(m),
  [status.UNAVAILABLE]: () => new UnavailableError("auth service unavailable"),
  [status.DEADLINE_EXCEEDED]: () => new UnavailableError("auth service did not answer in time"),
};

/** A gRPC failure as a core error; INTERNAL and unknown statuses stay opaque (500 upstream). */
export function fromGrpcError(err: ServiceError): Error {
  const make = errorByStatus[err.code];
  return make
    ? make(err.details, err.metadata)
    : new Error(`auth call failed with status ${err.code}`, { cause: err });
}

const dateOf = (ms: number): Date | undefined => (ms > 0 ? new Date(ms) : undefined);

function parseObject(text: string, what: string): JsonObject {
  const v: unknown = text === "" ? {} : JSON.parse(text);
  if (v === null || typeof v !== "object" || Array.isArray(v))
    throw new Error(`auth sent a malformed ${what}`);
  return v as JsonObject;
}

function scopeOf(scope: string): SessionScope {
  return scope === "mfa_enrollment" ? "mfa_enrollment" : "full";
}

function rpOf(rp: RelyingParty): WebAuthnRelyingParty {
  return { rp_id: rp.rpId, rp_name: rp.rpName, origin: rp.origin };
}

function issued(s: SessionView__Output | null | undefined): IssuedSession {
  if (!s?.session_id) throw new Error("auth answered a login without a session id");
  return { sessionId: s.session_id, expires: new Date(s.expires_unix_ms), scope: scopeOf(s.scope) };
}

function loginChallenge(c: WebAuthnChallenge__Output | null | undefined): WebAuthnLoginChallenge {
  if (!c) throw new Error("auth answered MFA without a challenge");
  return {
    challengeId: c.challenge_id,
    options: parseObject(
      c.options_json,
      "WebAuthn options",
    ) as unknown as PublicKeyCredentialRequestOptionsJSON,
  };
}

function ssoRequest(r: SSOAuthRequest__Output): SsoAuthRequest {
  return {
    requestId: r.request_id,
    redirectUrl: r.redirect_url,
    expires: new Date(r.expires_unix_ms),
    connectorType: r.connector_type,
  };
}

/** The loopback URL with the one-time code (auth may send it with the code already in place). */
function withCode(loopback: string, code: string): string {
  const url = new URL(loopback);
  if (code !== "" && !url.searchParams.has("code")) url.searchParams.set("code", code);
  return url.href;
}

function ssoValidated(r: ValidateSSOResponseResult__Output): SsoValidated {
  const login = r.login;
  if (login?.result === "mfa_required" && login.mfa_required) {
    return {
      kind: "mfa_required",
      mfaToken: login.mfa_required.mfa_token,
      requestId: r.request_id,
      username: r.username,
      cli: r.cli,
      redirectUrl: r.client_redirect_url,
    };
  }
  if (r.cli) {
    if (!r.cli_code) throw new Error("auth answered a CLI login without a code");
    return {
      kind: "cli_code",
      code: r.cli_code,
      redirectUrl: withCode(r.client_redirect_url, r.cli_code),
      username: r.username,
    };
  }
  return {
    kind: "session",
    session: issued(login?.session),
    redirectUrl: r.client_redirect_url,
    username: r.username,
  };
}

function appInfo(a: App__Output): AppInfo {
  return {
    name: a.name,
    description: a.description,
    publicAddr: a.public_addr,
    publicUrl: a.public_url,
    labels: a.labels,
    ...(a.uri ? { uri: a.uri } : {}),
  };
}

function device(d: WebAuthnDevice__Output): WebAuthnDevice {
  return {
    id: d.id,
    name: d.name,
    addedAt: new Date(d.created_unix_ms),
    lastUsedAt: dateOf(d.last_used_unix_ms),
  };
}

export class GrpcAuthApi implements AuthApi {
  readonly #connection: AuthConnection;
  readonly #client: AuthServiceClient;
  readonly #owned: boolean;
  readonly #timeoutMs: number;

  /** Takes the process's shared connection to auth (or options for a private one). */
  constructor(source: AuthSource | GrpcAuthApiOptions) {
    const c = connectionOf(source);
    this.#connection = c.connection;
    this.#client = c.connection.client;
    this.#owned = c.owned;
    this.#timeoutMs = c.timeoutMs;
  }

  #call<T>(
    sessionId: string | undefined,
    start: (md: Metadata, o: CallOptions, cb: Callback<T>) => void,
  ): Promise<T> {
    // Wait-for-ready: while auth restarts (or a replica drains) the call waits for a ready
    // connection within its deadline instead of failing at once; reads are also retried on
    // UNAVAILABLE by the channel's service config (server/auth/client.ts).
    const md = waitForReady(new Metadata());
    if (sessionId !== undefined) md.set("authorization", `Bearer ${sessionId}`);
    return new Promise<T>((resolve, reject) => {
      start(md, { deadline: Date.now() + this.#timeoutMs }, (err, value) => {
        if (err) reject(fromGrpcError(err));
        else if (value === undefined) reject(new Error("auth sent an empty answer"));
        else resolve(value);
      });
    });
  }

  async authenticateLocal(req: {
    username: string;
    password: string;
    clientAddress: string;
    relyingParty: RelyingParty;
  }): Promise<LocalLoginResult> {
    const res = await this.#call<AuthenticateLocalResponse__Output>(undefined, (md, o, cb) =>
      this.#client.AuthenticateLocal(
        {
          username: req.username,
          password: req.password,
          client_address: req.clientAddress,
          webauthn: rpOf(req.relyingParty),
        },
        md,
        o,
        cb,
      ),
    );
    if (res.result === "mfa_required" && res.mfa_required) {
      return {
        kind: "mfa_required",
        mfaToken: res.mfa_required.mfa_token,
        challenge: loginChallenge(res.mfa_required.challenge),
      };
    }
    return { kind: "session", session: issued(res.session) };
  }

  async getSession(sessionId: string): Promise<SessionInfo> {
    const s = await this.#call<SessionView__Output>(sessionId, (md, o, cb) =>
      this.#client.GetSession({}, md, o, cb),
    );
    return {
      username: s.username,
      roles: s.roles,
      expires: new Date(s.expires_unix_ms),
      mfaVerified: s.mfa_verified,
      scope: scopeOf(s.scope),
      allowed: s.allowed,
    };
  }

  async deleteSession(sessionId: string): Promise<void> {
    await this.#call<DeleteSessionResponse__Output>(sessionId, (md, o, cb) =>
      this.#client.DeleteSession({}, md, o, cb),
    );
  }

  async beginWebAuthnLogin(req: {
    mfaToken: string;
    relyingParty: RelyingParty;
  }): Promise<WebAuthnLoginChallenge> {
    const c = await this.#call<WebAuthnChallenge__Output>(undefined, (md, o, cb) =>
      this.#client.BeginWebAuthnLogin(
        { mfa_token: req.mfaToken, relying_party: rpOf(req.relyingParty) },
        md,
        o,
        cb,
      ),
    );
    return loginChallenge(c);
  }

  async finishWebAuthnLogin(req: {
    challengeId: string;
    response: AuthenticationResponseJSON;
    clientAddress: string;
    relyingParty: RelyingParty;
    ssoRequestId?: string;
  }): Promise<WebAuthnLoginResult> {
    const res = await this.#call<AuthenticateLocalResponse__Output>(undefined, (md, o, cb) =>
      this.#client.FinishWebAuthnLogin(
        {
          challenge_id: req.challengeId,
          credential_json: JSON.stringify(req.response),
          relying_party: rpOf(req.relyingParty),
          client_address: req.clientAddress,
          sso_request_id: req.ssoRequestId ?? "",
        },
        md,
        o,
        cb,
      ),
    );
    if (res.sso_cli_redirect_url) {
      return { kind: "cli_redirect", redirectUrl: withCode(res.sso_cli_redirect_url, res.sso_cli_code) };
    }
    return { kind: "session", session: issued(res.session) };
  }

  async createSsoAuthRequest(req: {
    connector: string;
    browserBindingHash: string;
    clientRedirectUrl: string;
    codeChallenge: string;
    clientAddress: string;
  }): Promise<SsoAuthRequest> {
    const r = await this.#call<SSOAuthRequest__Output>(undefined, (md, o, cb) =>
      this.#client.CreateSSOAuthRequest(
        {
          connector: req.connector,
          browser_binding_hash: req.browserBindingHash,
          client_redirect_url: req.clientRedirectUrl,
          code_challenge: req.codeChallenge,
          client_address: req.clientAddress,
        },
        md,
        o,
        cb,
      ),
    );
    return ssoRequest(r);
  }

  async bindSsoAuthRequest(req: { requestId: string; browserBindingHash: string }): Promise<SsoAuthRequest> {
    const r = await this.#call<SSOAuthRequest__Output>(undefined, (md, o, cb) =>
      this.#client.BindSSOAuthRequest(
        { request_id: req.requestId, browser_binding_hash: req.browserBindingHash },
        md,
        o,
        cb,
      ),
    );
    return ssoRequest(r);
  }

  async validateSsoResponse(req: {
    callbackQuery?: string;
    samlResponse?: string;
    relayState?: string;
    browserBindingHash: string;
    clientAddress: string;
    relyingParty: RelyingParty;
  }): Promise<SsoValidated> {
    const r = await this.#call<ValidateSSOResponseResult__Output>(undefined, (md, o, cb) =>
      this.#client.ValidateSSOResponse(
        {
          callback_query: req.callbackQuery ?? "",
          saml_response: req.samlResponse ?? "",
          relay_state: req.relayState ?? "",
          browser_binding_hash: req.browserBindingHash,
          client_address: req.clientAddress,
          relying_party: rpOf(req.relyingParty),
        },
        md,
        o,
        cb,
      ),
    );
    return ssoValidated(r);
  }

  async exchangeSsoCode(req: { code: string; codeVerifier: string }): Promise<IssuedSession> {
    const res = await this.#call<AuthenticateLocalResponse__Output>(undefined, (md, o, cb) =>
      this.#client.ExchangeSSOCode({ code: req.code, code_verifier: req.codeVerifier }, md, o, cb),
    );
    return issued(res.session);
  }

  async beginWebAuthnRegistration(
    sessionId: string,
    req: { relyingParty: RelyingParty },
  ): Promise<WebAuthnRegistrationChallenge> {
    const c = await this.#call<WebAuthnChallenge__Output>(sessionId, (md, o, cb) =>
      this.#client.BeginWebAuthnRegistration({ relying_party: rpOf(req.relyingParty) }, md, o, cb),
    );
    return {
      challengeId: c.challenge_id,
      options: parseObject(
        c.options_json,
        "WebAuthn options",
      ) as unknown as PublicKeyCredentialCreationOptionsJSON,
    };
  }

  async finishWebAuthnRegistration(
    sessionId: string,
    req: {
      challengeId: string;
      deviceName: string;
      response: RegistrationResponseJSON;
      relyingParty: RelyingParty;
    },
  ): Promise<WebAuthnDevice> {
    const d = await this.#call<WebAuthnDevice__Output>(sessionId, (md, o, cb) =>
      this.#client.FinishWebAuthnRegistration(
        {
          challenge_id: req.challengeId,
          credential_json: JSON.stringify(req.response),
          relying_party: rpOf(req.relyingParty),
          device_name: req.deviceName,
        },
        md,
        o,
        cb,
      ),
    );
    return device(d);
  }

  async listWebAuthnDevices(sessionId: string): Promise<WebAuthnDevice[]> {
    const res = await this.#call<ListWebAuthnDevicesResponse__Output>(sessionId, (md, o, cb) =>
      this.#client.ListWebAuthnDevices({}, md, o, cb),
    );
    return res.devices.map(device);
  }

  async deleteWebAuthnDevice(sessionId: string, deviceId: string): Promise<void> {
    await this.#call<DeleteWebAuthnDeviceResponse__Output>(sessionId, (md, o, cb) =>
      this.#client.DeleteWebAuthnDevice({ id: deviceId }, md, o, cb),
    );
  }

  async renameWebAuthnDevice(sessionId: string, deviceId: string, name: string): Promise<WebAuthnDevice> {
    const d = await this.#call<WebAuthnDevice__Output>(sessionId, (md, o, cb) =>
      this.#client.RenameWebAuthnDevice({ id: deviceId, name }, md, o, cb),
    );
    return device(d);
  }

  async listNodes(sessionId: string, q: NodeQuery): Promise<NodePage> {
    const res = await this.#call<ListNodesResponse__Output>(sessionId, (md, o, cb) =>
      this.#client.ListNodes(
        {
          search: q.search ?? "",
          labels: q.labels ?? "",
          status: q.status ?? "",
          limit: q.limit,
          start_key: q.startKey ?? "",
          with_logins: q.withLogins ?? false,
        },
        md,
        o,
        cb,
      ),
    );
    return {
      items: res.nodes.map((n) => ({
        id: n.id,
        hostname: n.hostname,
        addresses: n.addresses,
        labels: n.labels,
        status: n.status,
        lastHeartbeat: dateOf(n.last_heartbeat_unix_ms),
        version: n.version,
        logins: n.logins,
        ...tunnelLocationOf(n.tunnel),
      })),
      nextKey: res.next_key,
      totalCount: res.total_count,
    };
  }

  async listUsers(sessionId: string): Promise<UserInfo[]> {
    const res = await this.#call<ListUsersResponse__Output>(sessionId, (md, o, cb) =>
      this.#client.ListUsers({}, md, o, cb),
    );
    return res.users.map((u) => ({
      name: u.name,
      roles: u.roles,
      traits: Object.fromEntries(Object.entries(u.traits).map(([k, v]) => [k, v.values])),
      webauthnEnrolled: u.webauthn_enrolled,
      lockedUntil: dateOf(u.locked_until_unix_ms),
    }));
  }

  async listRoles(sessionId: string): Promise<RoleInfo[]> {
    const res = await this.#call<ListRolesResponse__Output>(sessionId, (md, o, cb) =>
      this.#client.ListRoles({}, md, o, cb),
    );
    return res.roles.map((r) => ({ name: r.name, spec: parseObject(r.spec_json, "role spec") }));
  }

  async listRecordings(sessionId: string, q: RecordingQuery): Promise<Page<RecordingInfo>> {
    const res = await this.#call<ListRecordingsResponse__Output>(sessionId, (md, o, cb) =>
      this.#client.ListRecordings(
        {
          limit: q.limit,
          offset: q.offset,
          user: q.user ?? "",
          protocol: q.protocol ?? "",
          node: q.node ?? "",
          // unset = no bound: 0 and earlier are real times
          ...(q.start ? { start_unix_ms: q.start.getTime() } : {}),
          ...(q.end ? { end_unix_ms: q.end.getTime() } : {}),
        },
        md,
        o,
        cb,
      ),
    );
    return {
      total_count: res.total_count,
      items: res.items.map((r) => ({
        id: r.id,
        user: r.user_name,
        protocol: r.protocol,
        node: r.node,
        login: r.login,
        start: new Date(r.start_unix_ms),
        end: dateOf(r.end_unix_ms),
        sizeBytes: r.size_bytes,
        format: r.format,
      })),
    };
  }

  async searchAudit(sessionId: string, q: AuditQuery): Promise<Page<AuditEventInfo>> {
    const res = await this.#call<SearchAuditEventsResponse__Output>(sessionId, (md, o, cb) =>
      this.#client.SearchAuditEvents(
        {
          type: q.type ?? "",
          user: q.user ?? "",
          // unset = no bound: 0 and earlier are real times
          ...(q.start ? { start_unix_ms: q.start.getTime() } : {}),
          ...(q.end ? { end_unix_ms: q.end.getTime() } : {}),
          limit: q.limit,
          offset: q.offset,
        },
        md,
        o,
        cb,
      ),
    );
    return {
      total_count: res.total_count,
      items: res.items.map((e) => ({
        id: e.id,
        time: new Date(e.time_unix_ms),
        event_type: e.event_type,
        user_name: e.user_name,
        success: e.success,
        fields: parseObject(e.fields_json, "audit event"),
      })),
    };
  }

  async listApps(sessionId: string): Promise<AppInfo[]> {
    const res = await this.#call<ListAppsResponse__Output>(sessionId, (md, o, cb) =>
      this.#client.ListApps({}, md, o, cb),
    );
    return res.apps.map(appInfo);
  }

  async createAppSession(
    sessionId: string,
    target: { appName?: string; publicAddr?: string },
  ): Promise<AppSessionStart> {
    const res = await this.#call<CreateAppSessionResponse__Output>(sessionId, (md, o, cb) =>
      this.#client.CreateAppSession(
        { app_name: target.appName ?? "", public_addr: target.publicAddr ?? "" },
        md,
        o,
        cb,
      ),
    );
    if (!res.code || !res.app) throw new Error("auth answered an app session without a code");
    return { code: res.code, app: appInfo(res.app), expires: new Date(res.expires_unix_ms) };
  }

  async logoutApps(sessionId: string, appName?: string): Promise<number> {
    const res = await this.#call<LogoutAppsResponse__Output>(sessionId, (md, o, cb) =>
      this.#client.LogoutApps({ app_name: appName ?? "" }, md, o, cb),
    );
    return res.ended;
  }

  async getPublicKeys(): Promise<PublicKeyMaterial> {
    const k = await this.#call<PublicKeys__Output>(undefined, (md, o, cb) =>
      this.#client.GetPublicKeys({}, md, o, cb),
    );
    const bundle = parseObject(k.spiffe_bundle_json, "SPIFFE bundle");
    const jwks = parseObject(k.spiffe_jwks_json, "JWKS");
    const appJwks = parseObject(k.app_jwt_jwks_json, "JWKS");
    return {
      spiffeBundle: {
        keys: keysOf(bundle),
        spiffe_sequence: Number(bundle["spiffe_sequence"] ?? 0),
        spiffe_refresh_hint: Number(bundle["spiffe_refresh_hint"] ?? 0),
      },
      jwtJwks: { keys: keysOf(jwks) },
      appJwtJwks: { keys: keysOf(appJwks) },
    };
  }

  async getClusterInfo(): Promise<ClusterInfo> {
    const c = await this.#call<ClusterInfoMessage>(undefined, (md, o, cb) =>
      this.#client.GetClusterInfo({}, md, o, cb),
    );
    // Fields CORE adds to ClusterInfo (auth.local_login, auth.default_connector); an auth that
    // does not send them allows password login, as before.
    const sso = c as ClusterInfoMessage & { local_login?: boolean; default_connector?: string };
    return {
      clusterName: c.cluster_name,
      serverVersion: c.server_version,
      localLogin: sso.local_login ?? true,
      defaultConnector: sso.default_connector ?? "",
    };
  }

  health(): Promise<boolean> {
    return this.#connection.health(this.#timeoutMs);
  }

  close(): void {
    if (this.#owned) this.#connection.close();
  }
}

function keysOf(set: JsonObject): JsonObject[] {
  const keys = set["keys"];
  if (!Array.isArray(keys)) return [];
  return keys.filter((k): k is JsonObject => typeof k === "object" && k !== null && !Array.isArray(k));
}
