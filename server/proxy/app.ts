// Assembles the proxy: one plugin per concern, then the routes. Not listening; server.ts binds it.
import { createServer } from "node:https";
import type { Socket } from "node:net";
import Fastify, {
  type FastifyInstance,
  type FastifyPluginAsync,
  type FastifyReply,
  type FastifyServerOptions,
  LogController,
} from "fastify";
import type { Logger } from "pino";
import type { Registry } from "prom-client";
import type { ResourceSource } from "../../core/sources/source.ts";
import type { AuthApi } from "./auth-client.ts";
import type { ProxyConfig, ProxyTls } from "./config.ts";
import { clientErrorResponse, mapError } from "./http-errors.ts";
import { bodyParsingPlugin } from "./plugins/body-parsing.ts";
import { depsPlugin } from "./plugins/deps.ts";
import { errorHandlerPlugin } from "./plugins/error-handler.ts";
import { loginRateLimitPlugin } from "./plugins/login-rate-limit.ts";
import { openApiPlugin, openApiRoute } from "./plugins/openapi.ts";
import { LazyRequestLogger } from "./plugins/request-logger.ts";
import { computeSecurityHeaders, securityHeadersPlugin } from "./plugins/security-headers.ts";
import { sessionPlugin } from "./plugins/session.ts";
import { sessionRateLimitPlugin } from "./plugins/session-rate-limit.ts";
import { appRoutes } from "./routes/apps.ts";
import { healthRoutes } from "./routes/health.ts";
import { listRoutes } from "./routes/lists.ts";
import { loginRoutes } from "./routes/login.ts";
import { publicRoutes, type TlsRoutingInfo } from "./routes/public.ts";
import { ssoRoutes } from "./routes/sso.ts";
import { webauthnDeviceRoutes } from "./routes/webauthn-devices.ts";
import { validatorCompiler } from "./validation.ts";

export interface ProxyDeps {
  config: ProxyConfig;
  tls: ProxyTls;
  authApi: AuthApi;
  logger: Logger;
  /** True once the resource source has synced (readiness). */
  ready: () => boolean;
  /** Resource cache (informers or folder); the proxy reads public connectors from it. */
  resources: Pick<ResourceSource, "list">;
  /**
   * More route plugins (e.g. the terminal WebSocket), registered after the shared plugins so they
   * get the error handler, headers, `app.requireSession` and `app.authApi` like every route.
   */
  routes?: FastifyPluginAsync[];
  /**
   * Where the public port passes gRPC connections for auth through (raw TCP; docs/one-address.md):
   * auth's gRPC address and the TLS name on its certificate. Without it nothing routes to auth.
   */
  authPassthrough?: { address: string; serverName: string };
  /** The role's metrics registry: connection routing counters are registered in it. */
  metrics?: Registry;
  /**
   * Application access (docs/apps.md): connections whose SNI names an app host (one label under
   * the public host) go to `handle`. Without it such names reach the web server as before.
   */
  apps?: { handle(socket: Socket): void };
}

/** What the listener around the app tells it (server.ts). */
export interface ProxyAppExtras {
  /** ping's tls_routing, read on every ping */
  tlsRouting?: () => TlsRoutingInfo;
}

/** How long a connection answered with a client error (400, 431) may linger before it is cut. */
const CLIENT_ERROR_LINGER_MS = 1_000;

/** Path parameters are bounded by their schemas (at most 256); beyond this fastify answers 414. */
const MAX_PARAM_LENGTH = 1024;

export async function buildProxyApp(deps: ProxyDeps, extras: ProxyAppExtras = {}): Promise<FastifyInstance> {
  const securityHeaders = computeSecurityHeaders(deps.config.publicUrl);
  const options: FastifyServerOptions = {
    loggerInstance: deps.logger,
    bodyLimit: deps.config.bodyLimit,
    // No per-request logs: request lines carry session ids in headers and MFA tokens in bodies.
    logController: new LogController({ disableRequestLogging: true }),
    // request.log is built when a request first logs (most never do): plugins/request-logger.ts
    childLoggerFactory: (logger, bindings, childOptions) =>
      new LazyRequestLogger(logger, bindings, childOptions),
    trustProxy: deps.config.trustedProxies.length > 0 ? deps.config.trustedProxies : false,
    // Requests arriving while closing get 503 from the error-handler plugin, in our error body.
    return503OnClosing: false,
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    // Errors raised before routing (malformed URL, over-long path segment) get the one error
    // body and the security headers too; those requests skip the hooks.
    frameworkErrors: (err, _request, frameworkReply) => {
      const mapped = mapError(err);
      const reply = frameworkReply as FastifyReply;
      return reply
        .headers(securityHeaders)
        .code(mapped.status)
        .type("application/json; charset=utf-8")
        .send(mapped.body);
    },
    // Errors of node's HTTP parser (bad framing, head over 16 KiB): no request exists yet.
    clientErrorHandler: (err, socket) => {
      if (err.code === "ECONNRESET" || socket.destroyed) return;
      if (!socket.writable) {
        socket.destroy(err);
        return;
      }
      // end, not write + destroy: on a connection the public port handed over (routing/), an
      // immediate destroy drops the still-queued answer. The timer bounds a peer that keeps sending.
      socket.end(clientErrorResponse(err.code));
      setTimeout(() => socket.destroy(), CLIENT_ERROR_LINGER_MS).unref();
    },
  };
  // serverFactory keeps the instance typed as the default server, which https.Server extends.
  const tlsOptions = {
    cert: deps.tls.certPem,
    key: deps.tls.keyPem,
    minVersion: "TLSv1.2" as const,
    // A browser finishes its handshake in one or two round trips; Node's default (120 s) let a
    // silent client hold a connection (two sockets, with the router's) for two minutes.
    handshakeTimeout: 10_000,
    ...(deps.tls.sniCallback ? { SNICallback: deps.tls.sniCallback } : {}),
  };
  const app = Fastify({ ...options, serverFactory: (handler) => createServer(tlsOptions, handler) });
  app.setValidatorCompiler(validatorCompiler());

  // First: its hook sets the security headers before any other hook may refuse the request.
  await app.register(securityHeadersPlugin, { publicUrl: deps.config.publicUrl });
  await app.register(errorHandlerPlugin);
  await app.register(bodyParsingPlugin);
  await app.register(depsPlugin, {
    authApi: deps.authApi,
    config: deps.config,
    ready: deps.ready,
    resources: deps.resources,
  });
  await app.register(sessionPlugin);
  await app.register(loginRateLimitPlugin, deps.config.rateLimit);
  // Before the OpenAPI plugin and the routes: it adds the 429 to session routes as they are added.
  await app.register(sessionRateLimitPlugin, {
    perSecond: deps.config.limits.sessionRequestsPerSecond,
    burst: deps.config.limits.sessionRequestBurst,
  });
  await app.register(openApiPlugin, { publicUrl: deps.config.publicUrl, version: deps.config.serverVersion });

  await app.register(publicRoutes, extras.tlsRouting ? { tlsRouting: extras.tlsRouting } : {});
  await app.register(healthRoutes);
  await app.register(loginRoutes);
  await app.register(ssoRoutes);
  await app.register(listRoutes);
  await app.register(webauthnDeviceRoutes);
  await app.register(appRoutes);
  for (const plugin of deps.routes ?? []) await app.register(plugin);
  await app.register(openApiRoute);
  return app;
}
