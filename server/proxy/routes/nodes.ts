// GET /v1/webapi/nodes (docs/web-api.md): the nodes the caller's roles show, filtered and paged
// (search, label selector, status, limit, start_key -> next_key) by auth's code, from the proxy's
// inventory copy or by auth itself, each with the logins the caller may use on it, so the
// console's Connect offers a choice instead of a free text box.
import { type Static, Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import type { NodeInfo, NodePage as NodePageInfo } from "../auth-client.ts";
import { inventoryOf } from "../inventory-cache.ts";
import { sessionOf, withRequestDigest } from "../plugins/session.ts";
import {
  commonErrors,
  DEFAULT_LIMIT,
  errorResponses,
  Limit,
  sessionSecurity,
  Timestamp,
} from "../schemas.ts";
import { KeptBodies } from "./kept-body.ts";

// Lengths fit the proxy's 8 KiB URL limit even when every character is a 4-byte UTF-8 one
// percent-encoded (12 characters each), so a schema-valid query is never a 414.
const NodesQuery = Type.Object({
  search: Type.Optional(
    Type.String({
      maxLength: 128,
      description: "case-insensitive substring of the hostname, node ID or a `key=value` label; empty = any",
    }),
  ),
  labels: Type.Optional(
    Type.String({
      maxLength: 256,
      description: "label selector `k=v,k2=v2` (all must match; a bare `k`: the key exists); empty = any",
    }),
  ),
  status: Type.Optional(
    Type.Union([Type.Literal("online"), Type.Literal("offline"), Type.Literal("")], {
      description: "online | offline; empty = any",
    }),
  ),
  limit: Type.Optional(Limit),
  start_key: Type.Optional(
    Type.String({
      maxLength: 1024,
      pattern: "^[A-Za-z0-9_-]*$",
      description: "a previous answer's next_key (opaque); empty = the first page",
    }),
  ),
});

const Node = Type.Object({
  id: Type.String(),
  hostname: Type.String(),
  addresses: Type.Array(Type.String()),
  labels: Type.Record(Type.String(), Type.String()),
  status: Type.String({ description: "online | offline" }),
  last_heartbeat: Type.Optional(Timestamp),
  version: Type.String(),
  logins: Type.Array(Type.String(), { description: "the logins the caller's roles allow on this node" }),
});

const NodesPage = Type.Object({
  items: Type.Array(Node),
  next_key: Type.Optional(Type.String({ description: "start_key of the next page; absent on the last" })),
  total_count: Type.Integer({ minimum: 0, description: "nodes matching the filters, all pages" }),
});

const nodeView = (n: NodeInfo): Static<typeof Node> => ({
  id: n.id,
  hostname: n.hostname,
  addresses: n.addresses,
  labels: n.labels,
  status: n.status,
  last_heartbeat: n.lastHeartbeat?.toISOString(),
  version: n.version,
  logins: n.logins ?? [],
});

const pageView = (page: NodePageInfo): Static<typeof NodesPage> => ({
  items: page.items.map(nodeView),
  ...(page.nextKey ? { next_key: page.nextKey } : {}),
  total_count: page.totalCount,
});

/** The inventory copy hands out the same page object while nothing changed. */
const bodies = new KeptBodies<NodePageInfo>();

export async function nodeRoutes(app: FastifyInstance): Promise<void> {
  app.get<{ Querystring: Static<typeof NodesQuery> }>(
    "/v1/webapi/nodes",
    {
      schema: {
        summary: "Registered SSH nodes the caller may see: filtered, paged, with the caller's logins",
        tags: ["lists"],
        ...sessionSecurity,
        querystring: NodesQuery,
        response: { 200: NodesPage, ...errorResponses(401, 403, ...commonErrors) },
      },
      preHandler: app.requireSession,
    },
    async (request, reply) => {
      const q = request.query;
      const session = sessionOf(request);
      const query = {
        search: q.search ?? "",
        labels: q.labels ?? "",
        status: q.status ?? "",
        limit: q.limit ?? DEFAULT_LIMIT,
        startKey: q.start_key ?? "",
        withLogins: true,
      };
      const ask = () => withRequestDigest(session, () => app.authApi.listNodes(session.sessionId, query));
      // The proxy's inventory copy answers for the session's user when it can (same decision
      // code as auth's; docs/proxy-cache.md); otherwise auth does, as before.
      const inventory = inventoryOf(app.authApi);
      const page = inventory ? await inventory.answerNodes(session.info, query, ask) : await ask();
      return bodies.send(reply, page, pageView);
    },
  );
}
