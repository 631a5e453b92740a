// OpenAPI 3 generated from the route schemas; served at /v1/webapi/openapi.json. Registered
// before the routes so @fastify/swagger sees every one of them.
import swagger from "@fastify/swagger";
import type { FastifyInstance } from "fastify";
import fp from "fastify-plugin";

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
    });
  },
  { name: "svc-openapi" },
);

export async function openApiRoute(app: FastifyInstance): Promise<void> {
  app.get("/v1/webapi/openapi.json", { schema: { hide: true } }, async () => app.swagger());
}
