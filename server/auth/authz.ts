// THE authorization table of svc.v1.AuthService: for every RPC, which kinds of caller may call it,
// and for admin RPCs the RBAC decision (resource + verb, decided by core/rbac from the caller's
// roles, never by a role name). docs/grpc.md mirrors this table; test/auth-authz.test.ts walks it.
// RPCs that filter by caller (ListNodes, ListRecordings) are open to users and filter inside.
import type { RuleResource, RuleVerb } from "../../core/resources/index.ts";
import type { CallerKind } from "./caller.ts";

export interface RpcAccess {
  /** Caller kinds admitted. "anonymous" admits everyone (the RPC is unauthenticated). */
  callers: readonly CallerKind[];
  /** When set, a user caller also needs `can(resource, verb)`. */
  admin?: { resource: RuleResource; verb: RuleVerb };
}

const PUBLIC: RpcAccess = { callers: ["anonymous", "user", "agent", "bot", "operator"] };
const USER: RpcAccess = { callers: ["user"] };
const AGENT: RpcAccess = { callers: ["agent"] };
const admin = (resource: RuleResource, verb: RuleVerb): RpcAccess => ({
  callers: ["user"],
  admin: { resource, verb },
});

export const AUTHZ_TABLE: Readonly<Record<string, RpcAccess>> = {
  // Named by the spec. Join and identity RPCs carry their own proof (token, STS proof, renewal
  // credential, SVID) in the request, so they are reachable before the caller has a certificate.
  AuthenticateLocal: PUBLIC,
  IssueUserCerts: USER,
  RegisterAgent: PUBLIC,
  RegisterUsingIAMMethod: PUBLIC,
  BootstrapAgentIdentity: PUBLIC,
  RenewAgentIdentity: PUBLIC,
  AuthenticateSPIFFE: PUBLIC,
  // Sessions.
  GetSession: USER,
  DeleteSession: USER,
  // Lists and queries.
  ListNodes: USER,
  DeleteNode: admin("nodes", "delete"),
  ListUsers: admin("users", "list"),
  ListRoles: admin("roles", "list"),
  ListRecordings: USER,
  SearchAuditEvents: admin("audit", "list"),
  EmitAuditEvent: { callers: ["agent", "user"] },
  // Agents.
  Heartbeat: AGENT,
  UploadRecording: AGENT,
  GetRecording: USER,
  // WebAuthn: login steps are proven by the mfa token / challenge; enrolment is the user's own.
  BeginWebAuthnLogin: PUBLIC,
  FinishWebAuthnLogin: PUBLIC,
  BeginWebAuthnRegistration: USER,
  FinishWebAuthnRegistration: USER,
  ListWebAuthnDevices: USER,
  DeleteWebAuthnDevice: USER,
  RenameWebAuthnDevice: USER,
  // Single sign-on: the proxy starts and finishes logins through Connectors; the request id,
  // browser binding, provider answer and code verifier are the proof (docs/sso-security.md).
  CreateSSOAuthRequest: PUBLIC,
  BindSSOAuthRequest: PUBLIC,
  ValidateSSOResponse: PUBLIC,
  ExchangeSSOCode: PUBLIC,
  // Public material.
  GetPublicKeys: PUBLIC,
  GetClusterInfo: PUBLIC,
  // Agent identities (bots) and workload SVIDs (docs/machine-identity.md).
  CreateAgentIdentity: admin("agent_identities", "create"),
  ListAgentIdentities: admin("agent_identities", "list"),
  DeleteAgentIdentity: admin("agent_identities", "delete"),
  IssueWorkloadSVID: { callers: ["bot"] },
  // Admin CLI (docs/cli.md). ResetPassword carries its proof (the one-time token) in the request.
  CreateUser: admin("users", "create"),
  DeleteUser: admin("users", "delete"),
  CreatePasswordReset: admin("users", "update"),
  ResetPassword: PUBLIC,
  CreateJoinToken: admin("tokens", "create"),
  ListJoinTokens: admin("tokens", "list"),
  DeleteJoinToken: admin("tokens", "delete"),
  // Browser terminal: the caller's own per-node login decision (docs/terminal.md).
  AuthorizeNodeLogin: USER,
  // Node-side login decision (docs/rbac.md): the agent asks about a certificate presented to it.
  AuthorizeSshLogin: AGENT,
  // Operator hooks (docs/operator.md): the operator's service identity, or an admin by RBAC.
  RevokeUserSessions: { callers: ["user", "operator"], admin: { resource: "users", verb: "delete" } },
  GetJoinTokenUsage: { callers: ["user", "operator"], admin: { resource: "tokens", verb: "list" } },
  // Reverse tunnels: services acting as agents; the handler admits only proxies (docs/tunnels.md).
  CheckNodeRegistered: AGENT,
  // Trust lifecycle (docs/locks.md, docs/ca-rotation.md). WatchTrust and ExportKrl serve nodes and
  // proxies (agent callers) and admins; the handler checks which.
  CreateLock: admin("locks", "create"),
  ListLocks: admin("locks", "list"),
  DeleteLock: admin("locks", "delete"),
  WatchTrust: { callers: ["agent", "user"], admin: { resource: "locks", verb: "list" } },
  ExportKrl: { callers: ["agent", "user"], admin: { resource: "locks", verb: "list" } },
  RenewNodeCredentials: AGENT,
  RotateCertAuthority: admin("cert_authorities", "update"),
  ListCertAuthorities: admin("cert_authorities", "list"),
  // Proxy caches (docs/proxy-cache.md): agent callers; the handlers admit only proxies.
  WatchSessions: AGENT,
  WatchInventory: AGENT,
  // Application access (docs/apps.md). ListApps filters by the caller's roles inside; the proxy
  // RPCs carry their proof (one-time code, app session id) and the handlers admit only proxies.
  ListApps: USER,
  CreateAppSession: USER,
  ExchangeAppSession: AGENT,
  GetAppSession: AGENT,
  DeleteAppSession: AGENT,
  LogoutApps: USER,
};

/**
 * What a session in scope "mfa_enrollment" may call besides the unauthenticated RPCs: read and end
 * itself, and enrol a WebAuthn device. Everything else waits for a login with the device.
 */
export const MFA_ENROLLMENT_RPCS: ReadonlySet<string> = new Set([
  "GetSession",
  "DeleteSession",
  "BeginWebAuthnRegistration",
  "FinishWebAuthnRegistration",
  "ListWebAuthnDevices",
]);

/**
 * Every admin capability the table asks for, as "resource:verb" (sorted, distinct). GetSession
 * answers which of them the caller's roles grant, so the console shows only what may be used.
 */
export const ADMIN_CAPABILITIES: readonly { resource: RuleResource; verb: RuleVerb; name: string }[] = [
  ...new Map(
    Object.values(AUTHZ_TABLE)
      .flatMap((a) => (a.admin ? [a.admin] : []))
      .map((a) => [`${a.resource}:${a.verb}`, { ...a, name: `${a.resource}:${a.verb}` }] as const),
  ).values(),
].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));

/** Inside ListRecordings/GetRecording: who sees every user's recordings ("list" alone: only your own). */
export const RECORDINGS_ADMIN = { resource: "sessions", verb: "read" } as const;

/** A short human label of an entry ("unauthenticated", "user", "admin(users/list)", "agent", ...). */
export function describeAccess(a: RpcAccess): string {
  if (a.callers.includes("anonymous")) return "unauthenticated";
  if (a.admin) {
    const others = a.callers.filter((c) => c !== "user");
    return [`admin (${a.admin.resource}/${a.admin.verb})`, ...others].join(" or ");
  }
  return a.callers.join(" or ");
}
