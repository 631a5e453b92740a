// Probes (spec 4.4). Liveness is the process answering; readiness needs auth answering its health
// check AND the resource source synced, so a load balancer never routes to a proxy that would fail.
import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import { UnavailableError } from "../../../core/errors.ts";
import { commonErrors, errorResponses } from "../schemas.ts";

const Status = Type.Object({ status: Type.String() });

export async function healthRoutes(app: FastifyInstance): Promise<void> {
  app.get(
    "/healthz",
    {
      schema: {
        summary: "Liveness",
        tags: ["probes"],
        response: { 200: Status, ...errorResponses(...commonErrors) },
      },
    },
    async () => ({ status: "ok" }),
  );

  app.get(
    "/readyz",
    {
      schema: {
        summary: "Readiness",
        tags: ["probes"],
        response: { 200: Status, ...errorResponses(...commonErrors) },
      },
    },
    async () => {
      if (!app.resourcesReady()) throw new UnavailableError("resource source has not synced");
      const authUp = await app.authApi.health().catch(() => false);
      if (!authUp) throw new UnavailableError("auth is not answering");
      return { status: "ready" };
    },
  );
}
