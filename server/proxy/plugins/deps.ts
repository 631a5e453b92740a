// The proxy's dependencies as typed fastify decorators, so every route reads them the same way.
import type { FastifyInstance } from "fastify";
import fp from "fastify-plugin";
import type { ResourceSource } from "../../../core/sources/source.ts";
import type { AuthApi } from "../auth-client.ts";
import type { ProxyConfig } from "../config.ts";

declare module "fastify" {
  interface FastifyInstance {
    authApi: AuthApi;
    proxyConfig: ProxyConfig;
    /** True when the resource source has synced (the readiness dependency). */
    resourcesReady: () => boolean;
    /** The proxy's informer cache of resources (connectors for the login page). */
    resources: Pick<ResourceSource, "list">;
  }
}

export interface DepsOptions {
  authApi: AuthApi;
  config: ProxyConfig;
  ready: () => boolean;
  resources: Pick<ResourceSource, "list">;
}

export const depsPlugin = fp(
  async (app: FastifyInstance, opts: DepsOptions) => {
    app.decorate("authApi", opts.authApi);
    app.decorate("proxyConfig", opts.config);
    app.decorate("resourcesReady", opts.ready);
    app.decorate("resources", opts.resources);
  },
  { name: "svc-deps" },
);
