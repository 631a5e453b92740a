// OpenAPI 3 generated from the route schemas; served at /v1/webapi/openapi.json. Registered
// before the routes so @fastify/swagger sees every one of them.
import swagger from "@fastify/swagger";
import type { FastifyInstance } from "fastify";
import fp from "fastify-plugin";

/**
 * Route schema key for a body that may be left out. @fastify/swagger marks every request body
 * required (fastify needs one when a body schema exists, unless the route fills it in itself),
 * and copies `x-` keys onto the operation: the document is corrected from this mark.
 */
export const BODY_OPTIONAL = "x-body-optional";

declare module "fastify" {
  interface FastifySchema {
    "x-body-optional"?: boolean;
  }
}

type Operation = { requestBody?: { required?: boolean }; [BODY_OPTIONAL]?: boolean };

function markOptionalBodies(doc: { paths?: Record<string, Record<string, Operation>> }): void {
  for (const ops of Object.values(doc.paths ?? {})) {
    for (const op of Object.values(ops)) {
      if (!op[BODY_OPTIONAL]) continue;
      delete op[BODY_OPTIONAL];
      if (op.requestBody) op.requestBody.required = false;
    }
  }
}

export interface OpenApiOptions {
  publicUrl: string;
  version: string;
}

export const openApiPlugin = fp(
  async (app: FastifyInstance, opts: OpenApiOptions) => {
    await app.register(swagger, {
      openapi: {
        openapi: "3.1.0",
        info: { title: "svc proxy web API", version: opts.version },
        servers: [{ url: opts.publicUrl }],
        components: {
          securitySchemes: {
            bearer: { type: "http", scheme: "bearer", description: "Authorization: Bearer <session_id>" },
            cookie: { type: "apiKey", in: "cookie", name: "__Host-svc_session" },
          },
        },
      },
      transformObject: (documents) => {
        const doc = "openapiObject" in documents ? documents.openapiObject : documents.swaggerObject;
        markOptionalBodies(doc as Parameters<typeof markOptionalBodies>[0]);
        return doc;
      },
    });
  },
  { name: "svc-openapi" },
);

export async function openApiRoute(app: FastifyInstance): Promise<void> {
  app.get("/v1/webapi/openapi.json", { schema: { hide: true } }, async () => app.swagger());
}
