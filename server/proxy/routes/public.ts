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
});

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

/** Public key material changes rarely (CA rotation); let verifiers cache it briefly. */
const publicCache = "public, max-age=60";

export async function publicRoutes(app: FastifyInstance): Promise<void> {
  const cfg = app.proxyConfig;
  // Built once from config: ping is the cheapest call of the API and never reaches auth.
  const ping = {
    cluster_name: cfg.clusterName,
    server_version: cfg.serverVersion,
    client_version_policy: cfg.clientVersionPolicy,
  };

  app.get(
    "/v1/webapi/ping",
    {
      schema: {
        summary: "Cluster name, server version, client-tools policy",
        tags: ["public"],
        response: { 200: Ping, ...errorResponses(...commonErrors) },
      },
    },
    async () => ping,
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
