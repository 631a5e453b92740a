// The console's join tokens and agent identities (docs/web-api.md "Admin"): node join tokens
// listed without secrets, created with the one-time secret and the exact `svcd agent` command a
// person copies to the node (the same command `svcctl tokens add` prints, docs/agent.md), deleted;
// and the bots (AgentIdentity) with their lock state.
import { type Static, Type } from "@sinclair/typebox";
import type { FastifyInstance, FastifyReply } from "fastify";
import { isNotFound } from "../../../core/errors.ts";
import { caPin } from "../../agent/ca-pin.ts";
import { sessionOf } from "../plugins/session.ts";
import { commonErrors, errorResponses, sessionSecurity, Timestamp } from "../schemas.ts";
import type { AdminAuthApi, AgentIdentityView, JoinTokenUsageView, JoinTokenView } from "./admin-api.ts";

/** Where a node reaches auth, as the agent command must say it. */
export interface AgentTarget {
  /**
   * The proxy's public host:port, when the proxy routes gRPC to auth on it: the command then says
   * `--proxy` (nodes learn auth's name from ping) and names auth's address nowhere.
   */
  proxyAddress?: string;
  /** host:port of auth as nodes reach it (auth.advertise_addr, else where the proxy dials it) */
  authAddress: string;
  /** the host CA the proxy trusts auth by; its pin goes into the command */
  hostCaPem: string;
  /** the name in auth's certificate when nodes reach it by another one (--auth-server-name) */
  serverName?: string;
}

export interface AdminTokenRouteOptions {
  api: AdminAuthApi;
  agentTarget: () => AgentTarget;
}

// auth's rules (server/auth/admin-join-tokens.ts): a 400 here before auth is asked.
const TokenName = Type.String({
  minLength: 1,
  maxLength: 63,
  pattern: "^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$",
});
const LabelKey = Type.String({ pattern: "^[A-Za-z0-9]([A-Za-z0-9_./-]{0,126}[A-Za-z0-9])?$" });
const MAX_TTL_SECONDS = 30 * 24 * 60 * 60;

const JoinToken = Type.Object({
  name: Type.String(),
  roles: Type.Array(Type.String()),
  join_method: Type.String({ description: "token | iam" }),
  expires_at: Timestamp,
  node_labels: Type.Record(Type.String(), Type.String()),
  bot_name: Type.String({ description: "for a bot's bootstrap token: the AgentIdentity; empty for nodes" }),
});

const ListedToken = Type.Composite([
  JoinToken,
  Type.Object({
    used: Type.Boolean({ description: "a node joined with it (a token is spent by one node)" }),
    used_by: Type.String({ description: "hostname of that node; empty when unused" }),
    used_at: Type.Optional(Timestamp),
  }),
]);

const CreateTokenBody = Type.Object(
  {
    name: Type.Optional(Type.Union([TokenName, Type.Literal("")], { description: "empty: node-<random>" })),
    ttl_seconds: Type.Optional(
      Type.Integer({ minimum: 60, maximum: MAX_TTL_SECONDS, description: "lifetime; default 3600" }),
    ),
    node_labels: Type.Optional(
      Type.Record(LabelKey, Type.String({ maxLength: 1024 }), {
        maxProperties: 64,
        description: "labels the joining node gets",
      }),
    ),
  },
  { additionalProperties: false },
);

const CreatedToken = Type.Object({
  token: JoinToken,
  secret: Type.String({ description: "<name>.<secret> for `svcd agent --token`; shown only in this answer" }),
  ca_pin: Type.String({ description: "sha256 pin of the host CA (svcd agent --ca-pin)" }),
  agent_command: Type.String({ description: "the command that joins a node with this token" }),
});

const Bot = Type.Object({
  name: Type.String(),
  roles: Type.Array(Type.String()),
  cert_ttl: Type.String(),
  allow_workload_svids: Type.Boolean(),
  generation: Type.Integer({ minimum: 0, description: "0: not bootstrapped yet" }),
  locked: Type.Boolean({ description: "stale credentials were presented: renewals are refused" }),
  locked_reason: Type.String(),
  locked_at: Type.Optional(Timestamp),
  last_renewed_at: Type.Optional(Timestamp),
  cert_expires_at: Type.Optional(Timestamp),
});

const TokenParams = Type.Object({ name: TokenName });

const tokenView = (t: JoinTokenView): Static<typeof JoinToken> => ({
  name: t.name,
  roles: t.roles,
  join_method: t.joinMethod,
  expires_at: t.expires.toISOString(),
  node_labels: t.nodeLabels,
  bot_name: t.botName,
});

const listedView = (t: JoinTokenView, u: JoinTokenUsageView): Static<typeof ListedToken> => ({
  ...tokenView(t),
  used: u.used,
  used_by: u.usedBy,
  used_at: u.usedAt?.toISOString(),
});

const botView = (b: AgentIdentityView): Static<typeof Bot> => ({
  name: b.name,
  roles: b.roles,
  cert_ttl: b.certTtl,
  allow_workload_svids: b.allowWorkloadSvids,
  generation: b.generation,
  locked: b.locked,
  locked_reason: b.lockedReason,
  locked_at: b.lockedAt?.toISOString(),
  last_renewed_at: b.lastRenewedAt?.toISOString(),
  cert_expires_at: b.certExpiresAt?.toISOString(),
});

/** `svcd agent ...` as docs/agent.md gives it; every part is a plain word (no shell quoting needed). */
export function agentCommand(target: AgentTarget, secret: string): { command: string; pin: string } {
  const pin = caPin(target.hostCaPem);
  if (target.proxyAddress)
    return {
      pin,
      command: `svcd agent --proxy ${target.proxyAddress} --ca-pin ${pin} --token ${secret} --data-dir /var/lib/svc-agent`,
    };
  const host = target.authAddress.slice(0, target.authAddress.lastIndexOf(":")).replace(/^\[|\]$/g, "");
  const serverName =
    target.serverName && target.serverName !== host ? ` --auth-server-name ${target.serverName}` : "";
  return {
    pin,
    command: `svcd agent --auth ${target.authAddress}${serverName} --ca-pin ${pin} --token ${secret} --data-dir /var/lib/svc-agent`,
  };
}

/**
 * The public address of an embedded run: proxy.public_addr, unless --proxy-listen moved the proxy
 * for this run; then the bound port, on the bound host (the public host when bound to all).
 */
export function publicAddressOfRun(
  publicAddr: string,
  listenOverride: string | undefined,
  boundUrl: string,
): string {
  if (!listenOverride) return publicAddr;
  const bound = new URL(boundUrl);
  const host = bound.hostname.replace(/^\[|\]$/g, "");
  const publicHost = publicAddr.slice(0, publicAddr.lastIndexOf(":"));
  const name = host === "0.0.0.0" || host === "::" ? publicHost : host.includes(":") ? `[${host}]` : host;
  return `${name}:${bound.port || "443"}`;
}

export async function adminTokenRoutes(app: FastifyInstance, opts: AdminTokenRouteOptions): Promise<void> {
  app.get(
    "/v1/webapi/admin/tokens",
    {
      schema: {
        summary: "Join tokens with whether a node used each, without their secrets (admin: tokens/list)",
        tags: ["admin"],
        ...sessionSecurity,
        response: {
          200: Type.Object({ items: Type.Array(ListedToken) }),
          ...errorResponses(401, 403, ...commonErrors),
        },
      },
      preHandler: app.requireSession,
    },
    async (request) => {
      const sessionId = sessionOf(request).sessionId;
      const tokens = await opts.api.listJoinTokens(sessionId);
      // One usage question per token: lists are short (tokens are spent or expire), and auth
      // answers each from its backend.
      const rows = await Promise.all(
        tokens.map(async (t) => {
          try {
            return listedView(t, await opts.api.getJoinTokenUsage(sessionId, t.name));
          } catch (err) {
            // Deleted between the list and this question: it is gone, so it is not listed.
            if (isNotFound(err)) return undefined;
            throw err;
          }
        }),
      );
      return { items: rows.filter((r) => r !== undefined) };
    },
  );

  app.post<{ Body: Static<typeof CreateTokenBody> }>(
    "/v1/webapi/admin/tokens",
    {
      schema: {
        summary: "Create a node join token; answers its secret once and the agent command",
        tags: ["admin"],
        ...sessionSecurity,
        body: CreateTokenBody,
        response: { 201: CreatedToken, ...errorResponses(401, 403, 409, 501, ...commonErrors) },
      },
      preHandler: app.requireSession,
    },
    async (request, reply: FastifyReply) => {
      const b = request.body;
      const created = await opts.api.createJoinToken(sessionOf(request).sessionId, {
        name: b.name ?? "",
        ttlSeconds: b.ttl_seconds ?? 0,
        nodeLabels: b.node_labels ?? {},
      });
      const { command, pin } = agentCommand(opts.agentTarget(), created.token);
      return reply.code(201).send({
        token: tokenView(created.info),
        secret: created.token,
        ca_pin: pin,
        agent_command: command,
      });
    },
  );

  app.delete<{ Params: Static<typeof TokenParams> }>(
    "/v1/webapi/admin/tokens/:name",
    {
      schema: {
        summary: "Delete a join token (admin: tokens/delete)",
        tags: ["admin"],
        ...sessionSecurity,
        params: TokenParams,
        response: {
          200: Type.Object({ deleted: Type.String() }),
          ...errorResponses(401, 403, 404, 501, ...commonErrors),
        },
      },
      preHandler: app.requireSession,
    },
    async (request) => {
      await opts.api.deleteJoinToken(sessionOf(request).sessionId, request.params.name);
      return { deleted: request.params.name };
    },
  );

  app.get(
    "/v1/webapi/admin/bots",
    {
      schema: {
        summary: "Agent identities (bots) with their lock state (admin: agent_identities/list)",
        tags: ["admin"],
        ...sessionSecurity,
        response: {
          200: Type.Object({ items: Type.Array(Bot) }),
          ...errorResponses(401, 403, 501, ...commonErrors),
        },
      },
      preHandler: app.requireSession,
    },
    async (request) => ({
      items: (await opts.api.listAgentIdentities(sessionOf(request).sessionId)).map(botView),
    }),
  );
}
