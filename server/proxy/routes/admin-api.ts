// What the console's admin pages ask auth (docs/web-api.md "Admin"): the RPCs behind `svcctl
// users|tokens|agent-identities`, called with the caller's session. Auth decides who may call
// each (server/auth/authz.ts); the proxy only forwards and shapes the answers.
import { UnavailableError } from "../../../core/errors.ts";
import type { JsonObject } from "../../../core/json.ts";
import {
  type AuthConnection,
  type AuthServiceClient,
  type AuthSource,
  callUnary,
  connectionOf,
  userMetadata as sessionMetadata,
  waitForReady,
} from "../../auth/client.ts";

/** The caller's session, wait-for-ready (reads are also retried by the channel; see client.ts). */
const userMetadata = (sessionId: string) => waitForReady(sessionMetadata(sessionId));

export interface AdminUserInfo {
  name: string;
  roles: string[];
  traits: Record<string, string[]>;
  webauthnEnrolled: boolean;
  lockedUntil?: Date;
}

export interface IssuedReset {
  username: string;
  /** the one-time secret; shown once, never logged */
  token: string;
  expires: Date;
  revokedSessions: number;
}

export interface JoinTokenView {
  name: string;
  roles: string[];
  joinMethod: string;
  expires: Date;
  nodeLabels: Record<string, string>;
  botName: string;
}

export interface JoinTokenUsageView {
  used: boolean;
  /** hostname of the node that redeemed it ("" when unused) */
  usedBy: string;
  usedAt?: Date;
}

export interface AgentIdentityView {
  name: string;
  roles: string[];
  certTtl: string;
  allowWorkloadSvids: boolean;
  generation: number;
  locked: boolean;
  lockedReason: string;
  lockedAt?: Date;
  lastRenewedAt?: Date;
  certExpiresAt?: Date;
}

export interface AdminAuthApi {
  listUsers(sessionId: string): Promise<AdminUserInfo[]>;
  createUser(
    sessionId: string,
    req: { name: string; roles: string[]; logins: string[] },
  ): Promise<{ user: AdminUserInfo; reset: IssuedReset }>;
  deleteUser(sessionId: string, name: string): Promise<void>;
  createPasswordReset(sessionId: string, name: string): Promise<IssuedReset>;
  listRoles(sessionId: string): Promise<Array<{ name: string; spec: JsonObject }>>;
  listJoinTokens(sessionId: string): Promise<JoinTokenView[]>;
  createJoinToken(
    sessionId: string,
    req: { name: string; ttlSeconds: number; nodeLabels: Record<string, string> },
  ): Promise<{ info: JoinTokenView; token: string }>;
  deleteJoinToken(sessionId: string, name: string): Promise<void>;
  getJoinTokenUsage(sessionId: string, name: string): Promise<JoinTokenUsageView>;
  listAgentIdentities(sessionId: string): Promise<AgentIdentityView[]>;
  close(): void;
}

export interface GrpcAdminAuthOptions {
  address: string;
  caPems: readonly string[];
  /** the proxy's own client certificate and key, issued by the host CA */
  certPem: string;
  keyPem: string;
  serverName?: string;
  timeoutMs?: number;
}

const dateOf = (ms: unknown): Date | undefined => {
  const n = Number(ms ?? 0);
  return n > 0 ? new Date(n) : undefined;
};

interface UserMessage {
  name?: string;
  roles?: string[];
  traits?: Record<string, { values?: string[] }>;
  webauthn_enrolled?: boolean;
  locked_until_unix_ms?: unknown;
}

function userOf(u: UserMessage): AdminUserInfo {
  const lockedUntil = dateOf(u.locked_until_unix_ms);
  return {
    name: u.name ?? "",
    roles: u.roles ?? [],
    traits: Object.fromEntries(Object.entries(u.traits ?? {}).map(([k, v]) => [k, v.values ?? []])),
    webauthnEnrolled: u.webauthn_enrolled ?? false,
    ...(lockedUntil ? { lockedUntil } : {}),
  };
}

function resetOf(r: {
  username?: string;
  token?: string;
  expires_unix_ms?: unknown;
  revoked_sessions?: number;
}): IssuedReset {
  if (!r.token) throw new UnavailableError("auth issued no reset token");
  return {
    username: r.username ?? "",
    token: r.token,
    expires: new Date(Number(r.expires_unix_ms ?? 0)),
    revokedSessions: r.revoked_sessions ?? 0,
  };
}

function tokenOf(t: {
  name?: string;
  roles?: string[];
  join_method?: string;
  expires_unix_ms?: unknown;
  node_labels?: Record<string, string>;
  bot_name?: string;
}): JoinTokenView {
  return {
    name: t.name ?? "",
    roles: t.roles ?? [],
    joinMethod: t.join_method ?? "",
    expires: new Date(Number(t.expires_unix_ms ?? 0)),
    nodeLabels: { ...(t.node_labels ?? {}) },
    botName: t.bot_name ?? "",
  };
}

function specOf(text: string | undefined): JsonObject {
  const v: unknown = text ? JSON.parse(text) : {};
  if (v === null || typeof v !== "object" || Array.isArray(v))
    throw new Error("auth sent a malformed role spec");
  return v as JsonObject;
}

export class GrpcAdminAuthApi implements AdminAuthApi {
  readonly #connection: AuthConnection;
  readonly #client: AuthServiceClient;
  readonly #owned: boolean;
  readonly #timeoutMs: number;

  /** Takes the process's shared connection to auth (or options for a private one). */
  constructor(source: AuthSource | GrpcAdminAuthOptions) {
    const c = connectionOf(source);
    this.#connection = c.connection;
    this.#client = c.connection.client;
    this.#owned = c.owned;
    this.#timeoutMs = c.timeoutMs;
  }

  #deadline(): { deadline: number } {
    return { deadline: Date.now() + this.#timeoutMs };
  }

  async listUsers(sessionId: string): Promise<AdminUserInfo[]> {
    const r = await callUnary(this.#client, "ListUsers", {}, userMetadata(sessionId), this.#deadline());
    return (r.users ?? []).map(userOf);
  }

  async createUser(
    sessionId: string,
    req: { name: string; roles: string[]; logins: string[] },
  ): Promise<{ user: AdminUserInfo; reset: IssuedReset }> {
    const r = await callUnary(
      this.#client,
      "CreateUser",
      { name: req.name, roles: req.roles, logins: req.logins },
      userMetadata(sessionId),
      this.#deadline(),
    );
    return { user: userOf(r.user ?? { name: req.name }), reset: resetOf(r.reset ?? {}) };
  }

  async deleteUser(sessionId: string, name: string): Promise<void> {
    await callUnary(this.#client, "DeleteUser", { name }, userMetadata(sessionId), this.#deadline());
  }

  async createPasswordReset(sessionId: string, name: string): Promise<IssuedReset> {
    const r = await callUnary(
      this.#client,
      "CreatePasswordReset",
      { name },
      userMetadata(sessionId),
      this.#deadline(),
    );
    return resetOf(r);
  }

  async listRoles(sessionId: string): Promise<Array<{ name: string; spec: JsonObject }>> {
    const r = await callUnary(this.#client, "ListRoles", {}, userMetadata(sessionId), this.#deadline());
    return (r.roles ?? []).map((role) => ({ name: role.name ?? "", spec: specOf(role.spec_json) }));
  }

  async listJoinTokens(sessionId: string): Promise<JoinTokenView[]> {
    const r = await callUnary(this.#client, "ListJoinTokens", {}, userMetadata(sessionId), this.#deadline());
    return (r.tokens ?? []).map(tokenOf);
  }

  async createJoinToken(
    sessionId: string,
    req: { name: string; ttlSeconds: number; nodeLabels: Record<string, string> },
  ): Promise<{ info: JoinTokenView; token: string }> {
    const r = await callUnary(
      this.#client,
      "CreateJoinToken",
      { name: req.name, ttl_seconds: req.ttlSeconds, node_labels: req.nodeLabels },
      userMetadata(sessionId),
      this.#deadline(),
    );
    if (!r.token) throw new UnavailableError("auth issued no join token");
    return { info: tokenOf(r.info ?? {}), token: r.token };
  }

  async deleteJoinToken(sessionId: string, name: string): Promise<void> {
    await callUnary(this.#client, "DeleteJoinToken", { name }, userMetadata(sessionId), this.#deadline());
  }

  async getJoinTokenUsage(sessionId: string, name: string): Promise<JoinTokenUsageView> {
    const r = await callUnary(
      this.#client,
      "GetJoinTokenUsage",
      { name },
      userMetadata(sessionId),
      this.#deadline(),
    );
    const usedAt = dateOf(r.used_at_unix_ms);
    return { used: r.used ?? false, usedBy: r.used_by ?? "", ...(usedAt ? { usedAt } : {}) };
  }

  async listAgentIdentities(sessionId: string): Promise<AgentIdentityView[]> {
    const r = await callUnary(
      this.#client,
      "ListAgentIdentities",
      {},
      userMetadata(sessionId),
      this.#deadline(),
    );
    return (r.identities ?? []).map((b) => {
      const lockedAt = dateOf(b.locked_unix_ms);
      const lastRenewedAt = dateOf(b.last_renewed_unix_ms);
      const certExpiresAt = dateOf(b.cert_expires_unix_ms);
      return {
        name: b.name ?? "",
        roles: b.roles ?? [],
        certTtl: b.cert_ttl ?? "",
        allowWorkloadSvids: b.allow_workload_svids ?? false,
        generation: Number(b.generation ?? 0),
        locked: b.locked ?? false,
        lockedReason: b.locked_reason ?? "",
        ...(lockedAt ? { lockedAt } : {}),
        ...(lastRenewedAt ? { lastRenewedAt } : {}),
        ...(certExpiresAt ? { certExpiresAt } : {}),
      };
    });
  }

  close(): void {
    if (this.#owned) this.#connection.close();
  }
}
