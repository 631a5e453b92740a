// The console's admin routes as one plugin for the proxy's wiring (embedded start, svcd proxy):
// users and roles (admin-users.ts), join tokens and bots (admin-tokens.ts).
import type { FastifyInstance, FastifyPluginAsync } from "fastify";
import { type AdminTokenRouteOptions, adminTokenRoutes } from "./admin-tokens.ts";
import { type AdminUserRouteOptions, adminUserRoutes } from "./admin-users.ts";

export type AdminRouteOptions = AdminUserRouteOptions & AdminTokenRouteOptions;

export function adminRoutes(opts: AdminRouteOptions): FastifyPluginAsync {
  return async (app: FastifyInstance) => {
    await adminUserRoutes(app, opts);
    await adminTokenRoutes(app, opts);
  };
}
