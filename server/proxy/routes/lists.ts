// Listing routes (spec 4.2). The proxy forwards the caller's session; auth decides what the
// caller may see (admin-only lists answer 403 from auth; non-admins see only their recordings).
import { type Static, Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import { BadParameterError } from "../../../core/errors.ts";
import type { AuditEventInfo, RecordingInfo, RoleInfo, UserInfo } from "../auth-client.ts";
import { sessionOf, withRequestDigest } from "../plugins/session.ts";
import {
  commonErrors,
  DEFAULT_LIMIT,
  errorResponses,
  Limit,
  Offset,
  sessionSecurity,
  Timestamp,
} from "../schemas.ts";
import { KeptBodies } from "./kept-body.ts";
import { nodeRoutes } from "./nodes.ts";

// Query strings: unknown parameters are ignored (links and clients may carry their own), and an
// empty value is no filter (a form's blank field), for filters and times alike.
const Filter = Type.String({ maxLength: 256, description: "exact match; empty = no filter" });
const TimeBound = (description: string) =>
  Type.Union([Timestamp, Type.Literal("")], { description: `${description}; empty = none` });

// limit and offset are optional (their defaults fill in), so the OpenAPI document does not call
// them required.
const RecordingsQuery = Type.Object({
  limit: Type.Optional(Limit),
  offset: Type.Optional(Offset),
  user: Type.Optional(Filter),
  protocol: Type.Optional(Filter),
  node: Type.Optional(Filter),
  start_time: Type.Optional(TimeBound("RFC 3339, inclusive: sessions started at or after it")),
  end_time: Type.Optional(TimeBound("RFC 3339, exclusive: sessions started before it")),
});

const AuditQuery = Type.Object({
  type: Type.Optional(Filter),
  user: Type.Optional(Filter),
  start_time: Type.Optional(TimeBound("RFC 3339, inclusive: events at or after it")),
  end_time: Type.Optional(TimeBound("RFC 3339, exclusive: events before it")),
  limit: Type.Optional(Limit),
  offset: Type.Optional(Offset),
});

const nonEmpty = (v: string | undefined): string | undefined => (v === "" ? undefined : v);

/**
 * The inventory copy hands out the same role list while no role changed (as it does node pages);
 * a list from auth is a new array each time.
 */
const roleBodies = new KeptBodies<RoleInfo[]>();

/** A query's [start_time, end_time) window; empty = unbounded; start after end is refused. */
function windowOf(q: { start_time?: string; end_time?: string }): { start?: Date; end?: Date } {
  const startText = nonEmpty(q.start_time);
  const endText = nonEmpty(q.end_time);
  // Dates before 1970 are real bounds (negative milliseconds), not "none".
  const start = startText === undefined ? undefined : new Date(startText);
  const end = endText === undefined ? undefined : new Date(endText);
  if (start && end && start.getTime() > end.getTime()) {
    throw new BadParameterError("start_time is after end_time");
  }
  return { ...(start ? { start } : {}), ...(end ? { end } : {}) };
}

const Recording = Type.Object({
  id: Type.String(),
  user: Type.String(),
  protocol: Type.String(),
  node: Type.String(),
  login: Type.String(),
  start_time: Timestamp,
  end_time: Type.Optional(Timestamp),
  size_bytes: Type.Integer({ minimum: 0 }),
  format: Type.String(),
});

const User = Type.Object({
  name: Type.String(),
  roles: Type.Array(Type.String()),
  traits: Type.Record(Type.String(), Type.Array(Type.String())),
  webauthn_enrolled: Type.Boolean(),
  locked_until: Type.Optional(Timestamp),
});

const Role = Type.Object({
  name: Type.String(),
  spec: Type.Object({}, { additionalProperties: true }),
});

const AuditEvent = Type.Object({
  id: Type.String(),
  time: Timestamp,
  event_type: Type.String(),
  user_name: Type.String(),
  success: Type.Optional(Type.Boolean()),
  fields: Type.Object({}, { additionalProperties: true }),
});

const pageOf = <T extends ReturnType<typeof Type.Object>>(item: T) =>
  Type.Object({ items: Type.Array(item), total_count: Type.Integer({ minimum: 0 }) });
const listOf = <T extends ReturnType<typeof Type.Object>>(item: T) =>
  Type.Object({ items: Type.Array(item) });

const recordingView = (r: RecordingInfo): Static<typeof Recording> => ({
  id: r.id,
  user: r.user,
  protocol: r.protocol,
  node: r.node,
  login: r.login,
  start_time: r.start.toISOString(),
  end_time: r.end?.toISOString(),
  size_bytes: r.sizeBytes,
  format: r.format,
});
const userView = (u: UserInfo): Static<typeof User> => ({
  name: u.name,
  roles: u.roles,
  traits: u.traits,
  webauthn_enrolled: u.webauthnEnrolled,
  locked_until: u.lockedUntil?.toISOString(),
});
const roleView = (r: RoleInfo): Static<typeof Role> => ({ name: r.name, spec: r.spec });
const auditView = (e: AuditEventInfo): Static<typeof AuditEvent> => ({
  id: e.id,
  time: e.time.toISOString(),
  event_type: e.event_type,
  user_name: e.user_name,
  success: e.success,
  fields: e.fields,
});

export async function listRoutes(app: FastifyInstance): Promise<void> {
  app.get<{ Querystring: Static<typeof RecordingsQuery> }>(
    "/v1/webapi/sessions",
    {
      schema: {
        summary: "Recorded SSH sessions (non-admins: their own only)",
        tags: ["lists"],
        ...sessionSecurity,
        querystring: RecordingsQuery,
        response: { 200: pageOf(Recording), ...errorResponses(401, 403, ...commonErrors) },
      },
      preHandler: app.requireSession,
    },
    async (request) => {
      const q = request.query;
      const page = await app.authApi.listRecordings(sessionOf(request).sessionId, {
        limit: q.limit ?? DEFAULT_LIMIT,
        offset: q.offset ?? 0,
        user: nonEmpty(q.user),
        protocol: nonEmpty(q.protocol),
        node: nonEmpty(q.node),
        ...windowOf(q),
      });
      return { items: page.items.map(recordingView), total_count: page.total_count };
    },
  );

  // GET /v1/webapi/nodes: its own file (paging and filters).
  await nodeRoutes(app);

  app.get(
    "/v1/webapi/users",
    {
      schema: {
        summary: "Users (admin)",
        tags: ["admin"],
        ...sessionSecurity,
        response: { 200: listOf(User), ...errorResponses(401, 403, ...commonErrors) },
      },
      preHandler: app.requireSession,
    },
    async (request) => ({ items: (await app.authApi.listUsers(sessionOf(request).sessionId)).map(userView) }),
  );

  app.get(
    "/v1/webapi/roles",
    {
      schema: {
        summary: "RBAC roles (admin)",
        tags: ["admin"],
        ...sessionSecurity,
        response: { 200: listOf(Role), ...errorResponses(401, 403, ...commonErrors) },
      },
      preHandler: app.requireSession,
    },
    async (request, reply) => {
      const session = sessionOf(request);
      const roles = await withRequestDigest(session, () => app.authApi.listRoles(session.sessionId));
      return roleBodies.send(reply, roles, (list) => ({ items: list.map(roleView) }));
    },
  );

  app.get<{ Querystring: Static<typeof AuditQuery> }>(
    "/v1/webapi/audit",
    {
      schema: {
        summary: "Audit events, newest first (admin)",
        tags: ["admin"],
        ...sessionSecurity,
        querystring: AuditQuery,
        response: { 200: pageOf(AuditEvent), ...errorResponses(401, 403, ...commonErrors) },
      },
      preHandler: app.requireSession,
    },
    async (request) => {
      const q = request.query;
      const page = await app.authApi.searchAudit(sessionOf(request).sessionId, {
        limit: q.limit ?? DEFAULT_LIMIT,
        offset: q.offset ?? 0,
        type: nonEmpty(q.type),
        user: nonEmpty(q.user),
        ...windowOf(q),
      });
      return { items: page.items.map(auditView), total_count: page.total_count };
    },
  );
}
