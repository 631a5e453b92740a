// The proxy's only way to reach state: the calls its routes make to auth. Routes depend on this
// interface alone; GrpcAuthApi (grpc-auth-api.ts) implements it over svc.v1.AuthService with the
// proxy's host certificate. Errors come back as core/errors types, so the proxy's single error
// handler maps them; access decisions (admin or not, own recordings only) are made by auth.
import type {
  AuthenticationResponseJSON,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationResponseJSON,
} from "@simplewebauthn/server";
import type { JsonObject } from "../../core/json.ts";

/** A session as issued by auth. The id is the bearer credential; never log it. */
/** "full", or "mfa_enrollment": the roles require MFA and the session may only enrol a device. */
export type SessionScope = "full" | "mfa_enrollment";

export interface IssuedSession {
  sessionId: string;
  expires: Date;
  scope: SessionScope;
}

/** The current-session view (spec 4.1): who the session belongs to and until when. */
export interface SessionInfo {
  username: string;
  roles: string[];
  expires: Date;
  /** the login passed a second factor */
  mfaVerified: boolean;
  scope: SessionScope;
  /** The admin capabilities ("resource:verb") the user's roles grant now; a hint for the console. */
  allowed: string[];
}

/** A WebAuthn ceremony auth began; the challenge state stays in auth's backend. */
export interface WebAuthnLoginChallenge {
  /** Opaque id of the pending ceremony (any proxy replica can finish it). */
  challengeId: string;
  options: PublicKeyCredentialRequestOptionsJSON;
}

export interface WebAuthnRegistrationChallenge {
  challengeId: string;
  options: PublicKeyCredentialCreationOptionsJSON;
}

export type LocalLoginResult =
  | { kind: "session"; session: IssuedSession }
  /**
   * Password was right but the user has WebAuthn enrolled: no session yet. `mfaToken` proves the
   * password step (BeginWebAuthnLogin takes it); `challenge` is the first challenge.
   */
  | { kind: "mfa_required"; mfaToken: string; challenge: WebAuthnLoginChallenge };

/** Where the browser talks to us; auth verifies WebAuthn responses against it. */
export interface RelyingParty {
  rpId: string;
  rpName: string;
  origin: string;
}

export interface WebAuthnDevice {
  id: string;
  name: string;
  addedAt: Date;
  lastUsedAt?: Date;
}

export interface NodeInfo {
  id: string;
  hostname: string;
  addresses: string[];
  labels: Record<string, string>;
  /** "online" while heartbeats arrive, "offline" after they stop */
  status: string;
  lastHeartbeat?: Date;
  version: string;
  /** the logins the caller's roles allow on this node (when asked for) */
  logins?: string[];
  /**
   * The proxy replica holding the node's reverse tunnel (the agent's claim). Another replica
   * relays through it (server/proxy/peering/); the host certificate is still checked end to end.
   */
  tunnel?: TunnelLocation;
}

export interface TunnelLocation {
  proxyId: string;
  /** host:port other replicas dial (TLS, ALPN svc-peer) */
  peerAddr: string;
}

/** The wire form (proto TunnelLocation) to NodeInfo's; absent or empty: no tunnel. */
export function tunnelLocationOf(
  t: { proxy_id?: string; peer_addr?: string } | null | undefined,
): { tunnel: TunnelLocation } | Record<string, never> {
  return t?.proxy_id && t.peer_addr ? { tunnel: { proxyId: t.proxy_id, peerAddr: t.peer_addr } } : {};
}

/** ListNodes' filters and page (docs/web-api.md); auth applies them. */
export interface NodeQuery {
  search?: string;
  /** `k=v,k2=v2`; a bare `k`: the key exists */
  labels?: string;
  status?: string;
  /** 1..500; 0 = all */
  limit: number;
  startKey?: string;
  withLogins?: boolean;
}

export interface NodePage {
  items: NodeInfo[];
  /** "" on the last page */
  nextKey: string;
  totalCount: number;
}

export interface UserInfo {
  name: string;
  roles: string[];
  traits: Record<string, string[]>;
  webauthnEnrolled: boolean;
  lockedUntil?: Date;
}

export interface RoleInfo {
  name: string;
  /** the role spec as stored (allow/deny/options); admins only */
  spec: JsonObject;
}

export interface RecordingInfo {
  id: string;
  user: string;
  protocol: string;
  node: string;
  login: string;
  start: Date;
  end?: Date;
  sizeBytes: number;
  format: string;
}

export interface AuditEventInfo {
  id: string;
  time: Date;
  event_type: string;
  user_name: string;
  success?: boolean;
  fields: JsonObject;
}

export interface Page<T> {
  items: T[];
  total_count: number;
}

export interface RecordingQuery {
  limit: number;
  offset: number;
  user?: string;
  protocol?: string;
  node?: string;
  /** the recording's start: at or after `start`, before `end` */
  start?: Date;
  end?: Date;
}

export interface AuditQuery {
  limit: number;
  offset: number;
  type?: string;
  user?: string;
  start?: Date;
  end?: Date;
}

/** A JSON Web Key as published (public members only). */
export type Jwk = JsonObject;

export interface PublicKeyMaterial {
  /** SPIFFE trust bundle: keys with use x509-svid and jwt-svid, sequence, refresh hint. */
  spiffeBundle: { keys: Jwk[]; spiffe_sequence: number; spiffe_refresh_hint: number };
  /** SPIFFE CA JWT-SVID verification keys. */
  jwtJwks: { keys: Jwk[] };
  /** App CA keys for Svc-Jwt-Assertion (a separate set). */
  appJwtJwks: { keys: Jwk[] };
}

export interface ClusterInfo {
  clusterName: string;
  serverVersion: string;
  /** `auth.local_login`: password login allowed (true when auth does not say) */
  localLogin: boolean;
  /** `auth.default_connector`: what `svc login` uses when password login is off ("" = none) */
  defaultConnector: string;
}

/** A pending SSO login auth created (or bound); its id is the OAuth state / SAML RelayState. */
export interface SsoAuthRequest {
  requestId: string;
  /** the identity provider's login URL; "" for a CLI request not yet bound to a browser */
  redirectUrl: string;
  expires: Date;
  connectorType: string;
}

/** What the identity provider's answer came to (ValidateSSOResponse). */
export type SsoValidated =
  /** browser flow: a session exactly like a password login */
  | { kind: "session"; session: IssuedSession; redirectUrl: string; username: string }
  /** the roles require the WebAuthn step; `requestId` finishes a CLI flow after it */
  | {
      kind: "mfa_required";
      mfaToken: string;
      requestId: string;
      username: string;
      cli: boolean;
      redirectUrl: string;
    }
  /** CLI flow: the session is parked under `code` for ExchangeSSOCode */
  | { kind: "cli_code"; code: string; redirectUrl: string; username: string };

/** FinishWebAuthnLogin: a session, or for a CLI SSO request the loopback URL carrying the code. */
export type WebAuthnLoginResult =
  | { kind: "session"; session: IssuedSession }
  | { kind: "cli_redirect"; redirectUrl: string };

/** An App as the web API shows it (ListApps / CreateAppSession). */
export interface AppInfo {
  name: string;
  description: string;
  /** host name users reach it at (no scheme, no port) */
  publicAddr: string;
  /** https://<publicAddr>[:port]/ */
  publicUrl: string;
  labels: Record<string, string>;
  /** the internal URI; only for callers that may list apps (rbac apps/list) */
  uri?: string;
}

/** CreateAppSession's answer: the one-time code the app host's login path trades for a cookie. */
export interface AppSessionStart {
  /** one-time, short-lived; a credential: never log it */
  code: string;
  app: AppInfo;
  expires: Date;
}

export interface AuthApi {
  authenticateLocal(req: {
    username: string;
    password: string;
    clientAddress: string;
    relyingParty: RelyingParty;
  }): Promise<LocalLoginResult>;
  getSession(sessionId: string): Promise<SessionInfo>;
  deleteSession(sessionId: string): Promise<void>;

  /** A fresh challenge for a login that passed the password step (no passwordless start). */
  beginWebAuthnLogin(req: { mfaToken: string; relyingParty: RelyingParty }): Promise<WebAuthnLoginChallenge>;
  finishWebAuthnLogin(req: {
    challengeId: string;
    response: AuthenticationResponseJSON;
    clientAddress: string;
    relyingParty: RelyingParty;
    /** set when the step follows an SSO login (a CLI one then answers cli_redirect) */
    ssoRequestId?: string;
  }): Promise<WebAuthnLoginResult>;
  beginWebAuthnRegistration(
    sessionId: string,
    req: { relyingParty: RelyingParty },
  ): Promise<WebAuthnRegistrationChallenge>;
  finishWebAuthnRegistration(
    sessionId: string,
    req: {
      challengeId: string;
      deviceName: string;
      response: RegistrationResponseJSON;
      relyingParty: RelyingParty;
    },
  ): Promise<WebAuthnDevice>;
  listWebAuthnDevices(sessionId: string): Promise<WebAuthnDevice[]>;
  deleteWebAuthnDevice(sessionId: string, deviceId: string): Promise<void>;
  renameWebAuthnDevice(sessionId: string, deviceId: string, name: string): Promise<WebAuthnDevice>;

  listNodes(sessionId: string, query: NodeQuery): Promise<NodePage>;
  /** Admin only; auth answers AccessDeniedError for anyone else. */
  listUsers(sessionId: string): Promise<UserInfo[]>;
  listRoles(sessionId: string): Promise<RoleInfo[]>;
  /** Auth restricts non-admins to their own recordings. */
  listRecordings(sessionId: string, query: RecordingQuery): Promise<Page<RecordingInfo>>;
  searchAudit(sessionId: string, query: AuditQuery): Promise<Page<AuditEventInfo>>;

  /** Single sign-on (docs/sso.md). Unauthenticated: each call carries its own proof. */
  createSsoAuthRequest(req: {
    connector: string;
    /** sha256 hex of the binding cookie (browser); "" for a CLI request */
    browserBindingHash: string;
    clientRedirectUrl: string;
    /** CLI: base64url(sha256(verifier)) */
    codeChallenge: string;
    clientAddress: string;
  }): Promise<SsoAuthRequest>;
  bindSsoAuthRequest(req: { requestId: string; browserBindingHash: string }): Promise<SsoAuthRequest>;
  validateSsoResponse(req: {
    callbackQuery?: string;
    samlResponse?: string;
    relayState?: string;
    browserBindingHash: string;
    clientAddress: string;
    relyingParty: RelyingParty;
  }): Promise<SsoValidated>;
  exchangeSsoCode(req: { code: string; codeVerifier: string }): Promise<IssuedSession>;

  /** Application access (docs/apps.md): the Apps the caller's roles reach. */
  listApps(sessionId: string): Promise<AppInfo[]>;
  /** NotFoundError for an App that does not exist and for one the caller may not reach alike. */
  createAppSession(
    sessionId: string,
    target: { appName?: string; publicAddr?: string },
  ): Promise<AppSessionStart>;
  /** Ends the caller's own app sessions (of one App, or all): how many ended. */
  logoutApps(sessionId: string, appName?: string): Promise<number>;

  getPublicKeys(): Promise<PublicKeyMaterial>;
  getClusterInfo(): Promise<ClusterInfo>;
  /** True when auth answers (readiness); never throws. */
  health(): Promise<boolean>;
  close(): void;
}
