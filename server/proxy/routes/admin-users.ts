// The console's users and roles (docs/web-api.md "Admin"): users with where they are managed, and
// create / delete / password-reset links for the ones managed through the API (what auth wrote for
// `svcctl users add`, labelled managed-by svcctl). Users and roles applied to Kubernetes or put in
// the manifests folder stay read-only here: GitOps tools own them, and an edit from the console
// would be undone (or fought) by the next sync.
import { type Static, Type } from "@sinclair/typebox";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { PreconditionFailedError } from "../../../core/errors.ts";
import type { AnyResource } from "../../../core/resources/index.ts";
import { DNS_SUBDOMAIN_MAX, DNS_SUBDOMAIN_PATTERN } from "../../../core/resources/meta.ts";
import { MANAGED_BY_LABEL, MANAGED_BY_SVCCTL } from "../../auth/managed-by.ts";
import { sessionOf } from "../plugins/session.ts";
import { commonErrors, errorResponses, sessionSecurity, Timestamp } from "../schemas.ts";
import type { AdminAuthApi, AdminUserInfo, IssuedReset } from "./admin-api.ts";

export type SourceType = "folder" | "kubernetes";
export type ManagedBy = SourceType | "api";

const ManagedByField = Type.Union([Type.Literal("kubernetes"), Type.Literal("folder"), Type.Literal("api")], {
  description:
    "api: created through the API (svcctl or this console), editable here; kubernetes / folder: applied there, read-only here",
});

// The same rules auth applies (server/auth/admin-password-reset.ts, admin-users.ts), so bad input
// is a 400 from the schema before auth is asked.
const UserName = Type.String({
  minLength: 1,
  maxLength: 64,
  pattern: "^[a-z0-9]([a-z0-9.-]{0,62}[a-z0-9])?$",
});
const RoleName = Type.String({ minLength: 1, maxLength: DNS_SUBDOMAIN_MAX, pattern: DNS_SUBDOMAIN_PATTERN });
const Login = Type.String({ minLength: 1, maxLength: 32, pattern: "^[a-z_][a-z0-9_.-]{0,31}$" });

const User = Type.Object({
  name: Type.String(),
  roles: Type.Array(Type.String()),
  traits: Type.Record(Type.String(), Type.Array(Type.String())),
  webauthn_enrolled: Type.Boolean(),
  locked_until: Type.Optional(Timestamp),
  managed_by: ManagedByField,
  editable: Type.Boolean({ description: "create/delete/reset allowed from the console" }),
});

const Reset = Type.Object({
  username: Type.String(),
  reset_url: Type.String({ description: "the one-time link to set a password; shown only in this answer" }),
  login_command: Type.String({ description: "the same token for `svc login --reset-token`" }),
  expires_at: Timestamp,
  revoked_sessions: Type.Integer({ minimum: 0 }),
});

const CreateUserBody = Type.Object(
  {
    name: UserName,
    roles: Type.Array(RoleName, { minItems: 1, maxItems: 32 }),
    logins: Type.Optional(Type.Array(Login, { maxItems: 32 })),
  },
  { additionalProperties: false },
);
const UserParams = Type.Object({ name: UserName });
const EmptyBody = Type.Object({}, { additionalProperties: false });

const Role = Type.Object({
  name: Type.String(),
  managed_by: ManagedByField,
  spec: Type.Object({}, { additionalProperties: true, description: "allow/deny rules and options" }),
});

export interface AdminUserRouteOptions {
  api: AdminAuthApi;
  /** where resources come from when the API did not write them */
  sourceType: SourceType;
}

/** Where a resource is managed: what auth wrote for the admin API carries the svcctl label. */
export function managedByOf(resource: AnyResource | undefined, sourceType: SourceType): ManagedBy {
  return resource?.metadata.labels?.[MANAGED_BY_LABEL] === MANAGED_BY_SVCCTL ? "api" : sourceType;
}

export async function adminUserRoutes(app: FastifyInstance, opts: AdminUserRouteOptions): Promise<void> {
  const publicUrl = new URL(app.proxyConfig.publicUrl);
  // The proxy's cache of User resources by name: where each is managed (its labels).
  const userResources = () => new Map(app.resources.list("User").map((u) => [u.metadata.name, u]));

  const userView = (u: AdminUserInfo, resources: Map<string, AnyResource>): Static<typeof User> => {
    const managedBy = managedByOf(resources.get(u.name), opts.sourceType);
    return {
      name: u.name,
      roles: u.roles,
      traits: u.traits,
      webauthn_enrolled: u.webauthnEnrolled,
      locked_until: u.lockedUntil?.toISOString(),
      managed_by: managedBy,
      editable: managedBy === "api",
    };
  };
  const resetView = (r: IssuedReset): Static<typeof Reset> => ({
    username: r.username,
    reset_url: new URL(`/web/reset?token=${encodeURIComponent(r.token)}`, publicUrl).href,
    login_command: `svc login --proxy ${publicUrl.host} --reset-token ${r.token}`,
    expires_at: r.expires.toISOString(),
    revoked_sessions: r.revokedSessions,
  });

  /**
   * Refuses a user the console must not change. Auth is asked first (ListUsers, an admin RPC), so an
   * ordinary user is refused there (403) and learns nothing about who is managed where.
   */
  const requireEditable = async (sessionId: string, name: string): Promise<void> => {
    await opts.api.listUsers(sessionId);
    const resource = userResources().get(name);
    const managedBy = managedByOf(resource, opts.sourceType);
    if (resource && managedBy !== "api") {
      throw new PreconditionFailedError(
        `user ${name} is managed in ${managedBy === "kubernetes" ? "Kubernetes" : "the manifests folder"}: change it there`,
      );
    }
  };

  // A POST without a body is the empty object (plugins/openapi.ts tells the document).
  const noBody = async (request: FastifyRequest) => {
    if (request.body === undefined) request.body = {};
  };

  app.get(
    "/v1/webapi/admin/users",
    {
      schema: {
        summary: "Users with where each is managed (admin: users/list)",
        tags: ["admin"],
        ...sessionSecurity,
        response: {
          200: Type.Object({ items: Type.Array(User) }),
          ...errorResponses(401, 403, ...commonErrors),
        },
      },
      preHandler: app.requireSession,
    },
    async (request) => {
      const users = await opts.api.listUsers(sessionOf(request).sessionId);
      const resources = userResources();
      return { items: users.map((u) => userView(u, resources)) };
    },
  );

  app.post<{ Body: Static<typeof CreateUserBody> }>(
    "/v1/webapi/admin/users",
    {
      schema: {
        summary: "Create a user (managed through the API); answers its one-time reset link",
        tags: ["admin"],
        ...sessionSecurity,
        body: CreateUserBody,
        response: {
          201: Type.Object({ user: User, reset: Reset }),
          ...errorResponses(401, 403, 409, 501, ...commonErrors),
        },
      },
      preHandler: app.requireSession,
    },
    async (request, reply: FastifyReply) => {
      const b = request.body;
      const created = await opts.api.createUser(sessionOf(request).sessionId, {
        name: b.name,
        roles: b.roles,
        logins: b.logins ?? [],
      });
      // Auth wrote it with the managed-by label; the proxy's cache may not have it yet.
      const user = { ...userView(created.user, new Map()), managed_by: "api" as const, editable: true };
      return reply.code(201).send({ user, reset: resetView(created.reset) });
    },
  );

  app.delete<{ Params: Static<typeof UserParams> }>(
    "/v1/webapi/admin/users/:name",
    {
      schema: {
        summary: "Delete a user managed through the API (revokes its sessions)",
        tags: ["admin"],
        ...sessionSecurity,
        params: UserParams,
        response: {
          200: Type.Object({ deleted: Type.String() }),
          ...errorResponses(401, 403, 404, 412, 501, ...commonErrors),
        },
      },
      preHandler: app.requireSession,
    },
    async (request) => {
      const sessionId = sessionOf(request).sessionId;
      await requireEditable(sessionId, request.params.name);
      await opts.api.deleteUser(sessionId, request.params.name);
      return { deleted: request.params.name };
    },
  );

  app.post<{ Params: Static<typeof UserParams>; Body: Static<typeof EmptyBody> }>(
    "/v1/webapi/admin/users/:name/reset",
    {
      schema: {
        summary:
          "A new one-time password reset link for a user managed through the API (revokes its sessions)",
        tags: ["admin"],
        ...sessionSecurity,
        params: UserParams,
        body: EmptyBody,
        "x-body-optional": true,
        response: { 200: Reset, ...errorResponses(401, 403, 404, 412, ...commonErrors) },
      },
      preValidation: noBody,
      preHandler: app.requireSession,
    },
    async (request) => {
      const sessionId = sessionOf(request).sessionId;
      await requireEditable(sessionId, request.params.name);
      return resetView(await opts.api.createPasswordReset(sessionId, request.params.name));
    },
  );

  app.get(
    "/v1/webapi/admin/roles",
    {
      schema: {
        summary: "RBAC roles with where each is managed; read-only (admin: roles/list)",
        tags: ["admin"],
        ...sessionSecurity,
        response: {
          200: Type.Object({ items: Type.Array(Role) }),
          ...errorResponses(401, 403, ...commonErrors),
        },
      },
      preHandler: app.requireSession,
    },
    async (request) => {
      const roles = await opts.api.listRoles(sessionOf(request).sessionId);
      const resources = new Map(app.resources.list("Role").map((r) => [r.metadata.name, r]));
      return {
        items: roles.map((r) => ({
          name: r.name,
          managed_by: managedByOf(resources.get(r.name), opts.sourceType),
          spec: r.spec,
        })),
      };
    },
  );
}
