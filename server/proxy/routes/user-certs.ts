// POST /v1/webapi/ssh/certs: a short-lived OpenSSH user certificate for the caller's public key,
// through IssueUserCerts with the caller's session (docs/cli.md). This is how `svc certs` and
// `svc ssh --direct` get certificates while auth's gRPC port stays private (spec: auth "must not
// be exposed publicly"). Auth decides principals and lifetime; the proxy only forwards.
import { type Static, Type } from "@sinclair/typebox";
import type { FastifyInstance, FastifyPluginAsync } from "fastify";
import type { CliAuthApi } from "../cli-auth-api.ts";
import { sessionOf } from "../plugins/session.ts";
import { commonErrors, errorResponses, sessionSecurity, Timestamp } from "../schemas.ts";

export const USER_CERTS_PATH = "/v1/webapi/ssh/certs";

const CertsBody = Type.Object(
  {
    public_key: Type.String({
      minLength: 1,
      maxLength: 16 * 1024,
      description: "OpenSSH public key line (authorized_keys format)",
    }),
    ttl_seconds: Type.Optional(
      Type.Integer({ minimum: 0, maximum: 7 * 24 * 3600, description: "0 = the roles' max_session_ttl" }),
    ),
    node: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 253,
        description:
          "scope the certificate to one node (hostname or id): only the logins the roles grant there (plus <login>@<node id> for an agentless node)",
      }),
    ),
  },
  { additionalProperties: false },
);
const CertsIssued = Type.Object({
  certificate: Type.String({ description: "OpenSSH user certificate line" }),
  principals: Type.Array(Type.String()),
  key_id: Type.String(),
  valid_after: Timestamp,
  valid_before: Timestamp,
  host_ca_keys: Type.Array(Type.String(), {
    description: "host CA public keys for known_hosts @cert-authority",
  }),
});

export function userCertRoutes(opts: { api: Pick<CliAuthApi, "issueUserCerts"> }): FastifyPluginAsync {
  return async (app: FastifyInstance) => {
    app.post<{ Body: Static<typeof CertsBody> }>(
      USER_CERTS_PATH,
      {
        schema: {
          summary: "Issue a short-lived SSH user certificate for the caller's key",
          tags: ["ssh"],
          body: CertsBody,
          ...sessionSecurity,
          response: { 200: CertsIssued, ...errorResponses(401, 403, 404, ...commonErrors) },
        },
        preHandler: app.requireSession,
      },
      async (request): Promise<Static<typeof CertsIssued>> => {
        const c = await opts.api.issueUserCerts(
          sessionOf(request).sessionId,
          request.body.public_key,
          request.body.ttl_seconds ?? 0,
          request.body.node,
        );
        return {
          certificate: c.certificate,
          principals: c.principals,
          key_id: c.keyId,
          valid_after: c.validAfter.toISOString(),
          valid_before: c.validBefore.toISOString(),
          host_ca_keys: c.hostCaKeys,
        };
      },
    );
  };
}
