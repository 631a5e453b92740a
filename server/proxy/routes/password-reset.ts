// One-time password reset (docs/cli.md): POST /v1/webapi/password/reset trades the token that
// `svcctl users add|reset` printed (or the first start) for a new password; the console's
// /web/reset page (web/serve.ts) does the same from a browser. Rate-limited like login (per client address).
// Auth checks and burns the token.
import { type Static, Type } from "@sinclair/typebox";
import type { FastifyInstance, FastifyPluginAsync } from "fastify";
import type { CliAuthApi } from "../cli-auth-api.ts";
import { commonErrors, errorResponses } from "../schemas.ts";

export const PASSWORD_RESET_PATH = "/v1/webapi/password/reset";
export const RESET_PAGE_PATH = "/web/reset";

const ResetBody = Type.Object(
  {
    token: Type.String({
      pattern: "^[A-Za-z0-9_-]{43}$",
      description: "the one-time reset token (base64url of 32 bytes, as the reset link carries it)",
    }),
    password: Type.String({
      minLength: 1,
      maxLength: 1024,
      description: "the new password (>= 12 characters)",
    }),
  },
  { additionalProperties: false },
);
const ResetDone = Type.Object({ username: Type.String({ description: "whose password was set" }) });

export function passwordResetRoutes(opts: { api: Pick<CliAuthApi, "resetPassword"> }): FastifyPluginAsync {
  return async (app: FastifyInstance) => {
    // No Origin check (unlike login): the request carries no ambient credential, only the token,
    // and whoever holds the token can use it from anywhere anyway. So the link works whichever
    // proxy address the admin's svcctl printed.
    app.post<{ Body: Static<typeof ResetBody> }>(
      PASSWORD_RESET_PATH,
      {
        schema: {
          summary: "Set a new password with a one-time reset token",
          tags: ["session"],
          body: ResetBody,
          response: { 200: ResetDone, ...errorResponses(401, 429, ...commonErrors) },
        },
        preHandler: app.limitLoginAttempts,
      },
      async (request) => opts.api.resetPassword(request.body.token, request.body.password),
    );
  };
}
