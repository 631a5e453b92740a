// Public routes and probes through real HTTPS against a proxy backed by a real auth server.
import { createLocalJWKSet, jwtVerify } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ProxyFixture, PUBLIC_ORIGIN, startProxyFixture } from "./proxy-fixture.ts";

let fx: ProxyFixture;
beforeAll(async () => {
  fx = await startProxyFixture();
});
afterAll(async () => {
  await fx?.close();
});

describe("public routes", () => {
  it("ping answers cluster name, version and client policy from config, and auth's login settings", async () => {
    const res = await fx.client.send({ path: "/v1/webapi/ping" });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({
      cluster_name: "proxy-test",
      server_version: "0.1.0",
      client_version_policy: { minimum: "0.1.0", recommended: "0.1.0" },
      auth: { local_login: true, default_connector: "" },
      // this fixture's proxy passes nothing through (test/proxy-routing.test.ts covers routing)
      tls_routing: { auth_server_name: "", tunnel: false },
    });
  });

  it("public connectors show name, type and display name only (no settings, no secret reference)", async () => {
    const res = await fx.client.send({ path: "/v1/webapi/connectors/public" });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ items: [{ name: "github", type: "github", display_name: "GitHub" }] });
    expect(res.text).not.toContain("abc123");
    expect(res.text).not.toContain("github-secret");
  });

  it("serves the SPIFFE bundle with x509-svid and jwt-svid keys", async () => {
    const res = await fx.client.send({ path: "/v1/webapi/spiffe/bundle.json" });
    expect(res.status).toBe(200);
    const body = res.json as {
      keys: Array<{ use?: string; x5c?: string[] }>;
      spiffe_sequence: number;
      spiffe_refresh_hint: number;
    };
    expect(body.keys.map((k) => k.use).sort()).toEqual(["jwt-svid", "x509-svid"]);
    expect(body.keys.find((k) => k.use === "x509-svid")?.x5c?.length).toBe(1);
    expect(body.spiffe_sequence).toBeGreaterThan(0);
    expect(body.spiffe_refresh_hint).toBeGreaterThan(0);
    expect(res.text).not.toMatch(/"d"\s*:/);
    // public key material may be cached briefly; everything else is no-store
    expect(res.headers["cache-control"]).toBe("public, max-age=60");
  });

  it("OIDC discovery names the configured issuer and the JWKS route", async () => {
    const res = await fx.client.send({ path: "/.well-known/openid-configuration" });
    expect(res.status).toBe(200);
    const body = res.json as Record<string, unknown>;
    expect(body["issuer"]).toBe(PUBLIC_ORIGIN);
    expect(body["jwks_uri"]).toBe(`${PUBLIC_ORIGIN}/workload-identity/jwt-jwks.json`);
    expect(body["id_token_signing_alg_values_supported"]).toEqual(["ES256"]);
  });

  it("the SPIFFE JWKS verifies a JWT-SVID signed by auth's SPIFFE CA; the App JWKS does not", async () => {
    const jwt = await fx.cas.signJwtSvid({
      spiffeId: "spiffe://proxy-test.local/workload/web",
      audience: "db",
      issuer: PUBLIC_ORIGIN,
    });
    const spiffe = await fx.client.send({ path: "/workload-identity/jwt-jwks.json" });
    expect(spiffe.status).toBe(200);
    const verified = await jwtVerify(jwt, createLocalJWKSet(spiffe.json as { keys: [] }), {
      issuer: PUBLIC_ORIGIN,
      audience: "db",
    });
    expect(verified.payload.sub).toBe("spiffe://proxy-test.local/workload/web");

    const app = await fx.client.send({ path: "/workload-identity/app-jwt-jwks.json" });
    expect(app.status).toBe(200);
    await expect(jwtVerify(jwt, createLocalJWKSet(app.json as { keys: [] }))).rejects.toThrow();
  });

  it("the App JWKS verifies an app-access assertion signed by the App CA", async () => {
    const jwt = await fx.cas.signAppJwt({
      username: "alice",
      roles: ["access"],
      audience: "https://app.test",
    });
    const app = await fx.client.send({ path: "/workload-identity/app-jwt-jwks.json" });
    const verified = await jwtVerify(jwt, createLocalJWKSet(app.json as { keys: [] }), {
      audience: "https://app.test",
    });
    expect(verified.payload["username"]).toBe("alice");
  });
});

describe("probes", () => {
  it("healthz answers ok", async () => {
    const res = await fx.client.send({ path: "/healthz" });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ status: "ok" });
  });

  it("readyz is ready only when the resources have synced and auth answers", async () => {
    expect((await fx.client.send({ path: "/readyz" })).status).toBe(200);
    fx.setResourcesReady(false);
    try {
      const res = await fx.client.send({ path: "/readyz" });
      expect(res.status).toBe(503);
      expect(res.json).toEqual({ error: { code: "unavailable", message: "resource source has not synced" } });
    } finally {
      fx.setResourcesReady(true);
    }
    fx.auth.health.setStatus("", "NOT_SERVING");
    try {
      const res = await fx.client.send({ path: "/readyz" });
      expect(res.status).toBe(503);
      expect((res.json as { error: { message: string } }).error.message).toBe("auth is not answering");
    } finally {
      fx.auth.health.setStatus("", "SERVING");
    }
    expect((await fx.client.send({ path: "/readyz" })).status).toBe(200);
  });
});

describe("OpenAPI", () => {
  it("documents every route with request and response schemas", async () => {
    const res = await fx.client.send({ path: "/v1/webapi/openapi.json" });
    expect(res.status).toBe(200);
    const doc = res.json as {
      openapi: string;
      paths: Record<string, Record<string, { responses?: object }>>;
    };
    expect(doc.openapi).toMatch(/^3\./);
    for (const [path, method] of [
      ["/v1/webapi/ping", "get"],
      ["/v1/webapi/login", "post"],
      ["/v1/webapi/mfa/webauthn/login/begin", "post"],
      ["/v1/webapi/mfa/webauthn/login/finish", "post"],
      ["/v1/webapi/session", "get"],
      ["/v1/webapi/logout", "post"],
      ["/v1/webapi/sessions", "get"],
      ["/v1/webapi/nodes", "get"],
      ["/v1/webapi/users", "get"],
      ["/v1/webapi/roles", "get"],
      ["/v1/webapi/audit", "get"],
      ["/v1/webapi/connectors/public", "get"],
      ["/v1/webapi/spiffe/bundle.json", "get"],
      ["/.well-known/openid-configuration", "get"],
      ["/workload-identity/jwt-jwks.json", "get"],
      ["/workload-identity/app-jwt-jwks.json", "get"],
      ["/healthz", "get"],
      ["/readyz", "get"],
      ["/v1/webapi/mfa/webauthn/register/begin", "post"],
      ["/v1/webapi/mfa/webauthn/register/finish", "post"],
      ["/v1/webapi/mfa/devices", "get"],
      ["/v1/webapi/mfa/devices/{id}", "delete"],
    ] as const) {
      const op = doc.paths[path]?.[method];
      expect(op, `${method} ${path}`).toBeDefined();
      const codes = Object.keys(op?.responses ?? {});
      expect(
        codes.some((c) => c.startsWith("2")),
        `${method} ${path}: ${codes}`,
      ).toBe(true);
    }
  });
});
