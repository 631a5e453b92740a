// Unauthenticated routes (spec 4.4): cluster ping, public connectors and public key material.
import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import { publicConnectorView } from "../../../core/resources/index.ts";
import { commonErrors, errorResponses, Jwk, JwkSet } from "../schemas.ts";

const Ping = Type.Object({
  cluster_name: Type.String(),
  server_version: Type.String(),
  client_version_policy: Type.Object({
    minimum: Type.String({ description: "older CLIs are refused" }),
    recommended: Type.String({ description: "older CLIs are told to upgrade" }),
  }),
  auth: Type.Object({
    local_login: Type.Boolean({ description: "password login is allowed (auth.local_login)" }),
    default_connector: Type.String({
      description:
        'the connector `svc login` uses when password login is off (auth.default_connector; "" = none)',
    }),
  }),
  tls_routing: Type.Object(
    {
      auth_server_name: Type.String({
        description:
          "SNI that routes a TLS connection on this port to auth's gRPC (the name on auth's certificate); \"\" = this proxy does not pass gRPC through to auth",
      }),
      tunnel: Type.Boolean({ description: "agents may open reverse tunnels to this port (ALPN svc-tunnel)" }),
    },
    { description: "what one public address carries besides HTTPS (docs/one-address.md)" },
  ),
});

/** ping's `tls_routing`: what the public port routes besides HTTPS. */
export interface TlsRoutingInfo {
  auth_server_name: string;
  tunnel: boolean;
}

export interface PublicRoutesOptions {
  /** read on each ping; without it the proxy routes nothing but HTTPS */
  tlsRouting?: () => TlsRoutingInfo;
}

const Connector = Type.Object({
  name: Type.String(),
  type: Type.String({ description: "github | oidc | saml" }),
  display_name: Type.String(),
});

const SpiffeBundle = Type.Object({
  keys: Type.Array(Jwk),
  spiffe_sequence: Type.Integer(),
  spiffe_refresh_hint: Type.Integer(),
});

const OpenIdConfiguration = Type.Object({
  issuer: Type.String(),
  jwks_uri: Type.String(),
  response_types_supported: Type.Array(Type.String()),
  subject_types_supported: Type.Array(Type.String()),
  id_token_signing_alg_values_supported: Type.Array(Type.String()),
  claims_supported: Type.Array(Type.String()),
});

/** How long ping reuses auth's answer (a changed auth.local_login shows within this). */
export const CLUSTER_AUTH_TTL_MS = 30_000;
/** After a failed ask, ping answers the fallback this long before asking again. */
const CLUSTER_AUTH_RETRY_MS = 5_000;
const CLUSTER_AUTH_WAIT_MS = 2_000;

interface LoginSettings {
  local_login: boolean;
  default_connector: string;
}

/**
 * auth.local_login / auth.default_connector from ClusterInfo, one call in flight at a time. When
 * auth cannot be asked, password login is offered (auth still refuses it if it is off).
 */
function cachedLoginSettings(
  ask: () => Promise<{ localLogin: boolean; defaultConnector: string }>,
): () => Promise<LoginSettings> {
  let value: LoginSettings = { local_login: true, default_connector: "" };
  let until = 0;
  let inFlight: Promise<LoginSettings> | undefined;
  return async () => {
    if (Date.now() < until) return value;
    if (inFlight === undefined) {
      // Bounded: a ping must not hang on an unreachable auth.
      const answer = Promise.race([
        ask(),
        new Promise<never>((_, reject) =>
          setTimeout(() => reject(new Error("auth did not answer")), CLUSTER_AUTH_WAIT_MS).unref(),
        ),
      ]);
      inFlight = answer
        .then((c) => {
          value = { local_login: c.localLogin, default_connector: c.defaultConnector };
          until = Date.now() + CLUSTER_AUTH_TTL_MS;
          return value;
        })
        .catch(() => {
          until = Date.now() + CLUSTER_AUTH_RETRY_MS;
          return value;
        })
        .finally(() => {
          inFlight = undefined;
        });
    }
    return inFlight;
  };
}

/** Public key material changes rarely (CA rotation); let verifiers cache it briefly. */
const publicCache = "public, max-age=60";

export async function publicRoutes(app: FastifyInstance, opts: PublicRoutesOptions = {}): Promise<void> {
  const cfg = app.proxyConfig;
  // Built from config, plus auth's login settings cached briefly: ping is the cheapest call of
  // the API and reaches auth at most once per CLUSTER_AUTH_TTL_MS.
  const ping = {
    cluster_name: cfg.clusterName,
    server_version: cfg.serverVersion,
    client_version_policy: cfg.clientVersionPolicy,
  };
  const loginSettings = cachedLoginSettings(() => app.authApi.getClusterInfo());
  const tlsRouting = opts.tlsRouting ?? (() => ({ auth_server_name: "", tunnel: false }));

  app.get(
    "/v1/webapi/ping",
    {
      schema: {
        summary: "Cluster name, server version, client-tools policy",
        tags: ["public"],
        response: { 200: Ping, ...errorResponses(...commonErrors) },
      },
    },
    async () => ({ ...ping, auth: await loginSettings(), tls_routing: tlsRouting() }),
  );

  app.get(
    "/v1/webapi/connectors/public",
    {
      schema: {
        summary: "SSO connectors a login page should offer (name and type only)",
        tags: ["public"],
        response: { 200: Type.Object({ items: Type.Array(Connector) }), ...errorResponses(...commonErrors) },
      },
    },
    // From the proxy's own resource cache: no auth call, and the view carries no settings.
    async () => ({ items: app.resources.list("Connector").map(publicConnectorView) }),
  );

  app.get(
    "/v1/webapi/spiffe/bundle.json",
    {
      schema: {
        summary: "SPIFFE trust bundle",
        tags: ["public"],
        response: { 200: SpiffeBundle, ...errorResponses(...commonErrors) },
      },
    },
    async (_request, reply) => {
      reply.header("cache-control", publicCache);
      return (await app.authApi.getPublicKeys()).spiffeBundle;
    },
  );

  app.get(
    "/workload-identity/jwt-jwks.json",
    {
      schema: {
        summary: "JWKS of the SPIFFE CA (workload-identity JWT SVIDs)",
        tags: ["public"],
        response: { 200: JwkSet, ...errorResponses(...commonErrors) },
      },
    },
    async (_request, reply) => {
      reply.header("cache-control", publicCache);
      return (await app.authApi.getPublicKeys()).jwtJwks;
    },
  );

  app.get(
    "/workload-identity/app-jwt-jwks.json",
    {
      schema: {
        summary: "JWKS of the App CA (Svc-Jwt-Assertion); a separate key set",
        tags: ["public"],
        response: { 200: JwkSet, ...errorResponses(...commonErrors) },
      },
    },
    async (_request, reply) => {
      reply.header("cache-control", publicCache);
      return (await app.authApi.getPublicKeys()).appJwtJwks;
    },
  );

  app.get(
    "/.well-known/openid-configuration",
    {
      schema: {
        summary: "OIDC discovery for the workload-identity JWT issuer",
        tags: ["public"],
        response: { 200: OpenIdConfiguration, ...errorResponses(...commonErrors) },
      },
    },
    async (_request, reply) => {
      const { jwtJwks } = await app.authApi.getPublicKeys();
      const algs = [...new Set(jwtJwks.keys.map((k) => k["alg"]).filter((a) => typeof a === "string"))];
      reply.header("cache-control", publicCache);
      return {
        issuer: cfg.oidcIssuerUrl,
        jwks_uri: new URL("/workload-identity/jwt-jwks.json", cfg.oidcIssuerUrl).href,
        response_types_supported: ["id_token"],
        subject_types_supported: ["public"],
        id_token_signing_alg_values_supported: algs,
        claims_supported: ["sub", "aud", "exp", "iat", "iss", "jti"],
      };
    },
  );
}
