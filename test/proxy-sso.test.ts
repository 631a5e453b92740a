// The SSO routes through the real proxy and auth (docs/sso.md): every redirect the proxy would
// answer is a path on itself or a CLI's loopback address, the binding cookie's attributes, the
// refusals a browser or a CLI can meet (clear 4xx, JSON or a small HTML page), and no secret in
// any answer. The flows against real identity providers are test/sso-browser.test.ts and
// test/sso-cli.test.ts.
import { createHash, randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { API_VERSION } from "../core/resources/index.ts";
import { SSO_COOKIE } from "../server/proxy/sso-cookie.ts";
import { type ProxyFixture, PUBLIC_ORIGIN, startProxyFixture } from "./proxy-fixture.ts";
import { cookieAttributes, type HttpResponse } from "./proxy-https-client.ts";

let fx: ProxyFixture;
let dir: string;
const CLIENT_SECRET = `s3cret-${randomBytes(8).toString("hex")}`;
const HTML = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";

beforeAll(async () => {
  // The rate limit is not what is tested here: every case may start a login.
  fx = await startProxyFixture({ rateLimit: { perAddress: 10_000, perUsername: 10_000, windowMs: 60_000 } });
  dir = await mkdtemp(join(tmpdir(), "svc-proxy-sso-"));
  const secretFile = join(dir, "client-secret");
  await writeFile(secretFile, CLIENT_SECRET, { mode: 0o600 });
  // A GitHub connector needs no discovery to start: the provider URL is built from endpoint_url.
  await fx.source.apply({
    apiVersion: API_VERSION,
    kind: "Connector",
    metadata: { name: "gh" },
    spec: {
      type: "github",
      display_name: "GitHub",
      settings: {
        client_id: "client-1",
        redirect_url: `${PUBLIC_ORIGIN}/v1/webapi/sso/callback`,
        endpoint_url: "https://github.example",
        api_endpoint_url: "https://api.github.example",
      },
      client_secret_ref: { file: secretFile },
      claims_to_roles: [{ claim: "orgs", value: "acme", roles: ["access"] }],
    },
  } as never);
  await fx.source.apply({
    apiVersion: API_VERSION,
    kind: "Connector",
    metadata: { name: "corp-saml" },
    spec: {
      type: "saml",
      display_name: "Corp SAML",
      settings: {
        entity_id: `${PUBLIC_ORIGIN}/v1/webapi/sso/corp-saml/saml/metadata`,
        acs_url: `${PUBLIC_ORIGIN}/v1/webapi/sso/saml/acs`,
        sso_url: "https://idp.example/sso",
      },
    },
  } as never);
}, 60_000);

afterAll(async () => {
  await fx?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

function expectJsonError(res: HttpResponse, status: number, code: string): void {
  expect(res.status, res.text).toBe(status);
  expect(String(res.headers["content-type"])).toMatch(/^application\/json/);
  expect((res.json as { error: { code: string } }).error.code).toBe(code);
}

function expectNoSecret(res: HttpResponse): void {
  expect(res.text).not.toContain(CLIENT_SECRET);
  expect(JSON.stringify(res.headers)).not.toContain(CLIENT_SECRET);
}

const challenge = (verifier: string) => createHash("sha256").update(verifier).digest("base64url");
const VERIFIER = randomBytes(32).toString("base64url");

describe("ping", () => {
  it("says whether password login is on and which connector svc login uses otherwise", async () => {
    const res = await fx.client.send({ path: "/v1/webapi/ping" });
    expect(res.status).toBe(200);
    expect((res.json as { auth: unknown }).auth).toEqual({ local_login: true, default_connector: "" });
  });
});

describe("open redirects are refused", () => {
  const browserCases = [
    "//evil.example/",
    "https://evil.example/",
    "/\\evil.example",
    "\\\\evil.example",
    "javascript:alert(1)",
    "http://127.0.0.1.evil.com/",
    "/web/%0d%0aSet-Cookie:x=1".replace("%0d%0a", "\r\n"),
    "web/",
    `/${"a".repeat(2100)}`,
  ];
  for (const target of browserCases) {
    it(`browser start with redirect_url=${JSON.stringify(target.slice(0, 40))}: 400, no cookie, no 302`, async () => {
      const res = await fx.client.send({
        path: `/v1/webapi/sso/gh/login?redirect_url=${encodeURIComponent(target)}`,
      });
      expectJsonError(res, 400, "bad_parameter");
      expect(res.headers.location).toBeUndefined();
      expect(cookieAttributes(res.setCookies, SSO_COOKIE)).toBeUndefined();
    });
  }

  it("a browser asking for HTML gets a small page with the reason, escaped, and the way back", async () => {
    const res = await fx.client.send({
      path: `/v1/webapi/sso/gh/login?redirect_url=${encodeURIComponent("//<script>alert(1)</script>")}`,
      headers: { accept: HTML },
    });
    expect(res.status).toBe(400);
    expect(String(res.headers["content-type"])).toMatch(/^text\/html/);
    expect(res.text).not.toContain("<script>");
    expect(res.text).toMatch(/href="\/web\/login#sso_error=/);
    expect(res.headers["content-security-policy"]).toContain("script-src 'self'");
  });

  const loopbackCases = [
    "http://127.0.0.1.evil.com:8080/callback",
    "http://localhost.evil.com:8080/callback",
    "http://evil.example:8080/callback",
    "https://127.0.0.1:8080/callback",
    "http://127.0.0.1:8080@evil.example/callback",
    "http://user@127.0.0.1:8080/callback",
    "http://127.0.0.1/callback",
    "http://127.1:8080/callback",
    "http://0x7f.0.0.1:8080/callback",
    "http://[::1].evil.com:8080/callback",
    "http://127.0.0.1:8080/callback#frag",
    "http://127.0.0.1:8080\\@evil.example/",
    "javascript://127.0.0.1:8080/%0aalert(1)",
    "/web/",
  ];
  for (const target of loopbackCases) {
    it(`CLI start with redirect_url=${target}: 400`, async () => {
      const res = await fx.client.send({
        method: "POST",
        path: "/v1/webapi/sso/gh/cli",
        body: { redirect_url: target, code_challenge: challenge(VERIFIER) },
      });
      expectJsonError(res, 400, "bad_parameter");
    });
  }

  it("CLI start: a code challenge that is not S256's shape is 400", async () => {
    for (const code_challenge of ["", "short", `${challenge(VERIFIER)}=`, `${VERIFIER}A`]) {
      const res = await fx.client.send({
        method: "POST",
        path: "/v1/webapi/sso/gh/cli",
        body: { redirect_url: "http://127.0.0.1:8080/callback", code_challenge },
      });
      expectJsonError(res, 400, "bad_parameter");
    }
  });
});

describe("cross-site requests", () => {
  it("a page on another site cannot start a CLI login or exchange a code (403)", async () => {
    const cli = await fx.client.send({
      method: "POST",
      path: "/v1/webapi/sso/gh/cli",
      headers: { origin: "https://evil.example" },
      body: { redirect_url: "http://127.0.0.1:8080/callback", code_challenge: challenge(VERIFIER) },
    });
    expectJsonError(cli, 403, "access_denied");
    const exchange = await fx.client.send({
      method: "POST",
      path: "/v1/webapi/sso/exchange",
      headers: { origin: "https://evil.example" },
      body: { code: randomBytes(32).toString("base64url"), code_verifier: VERIFIER },
    });
    expectJsonError(exchange, 403, "access_denied");
  });

  it("the WebAuthn finish with an sso_request from another site is refused like any login (403)", async () => {
    const res = await fx.client.send({
      method: "POST",
      path: "/v1/webapi/mfa/webauthn/login/finish",
      headers: { origin: "https://evil.example" },
      body: {
        challenge_id: "abc",
        sso_request: randomBytes(32).toString("base64url"),
        credential: {
          id: "AA",
          rawId: "AA",
          type: "public-key",
          response: { clientDataJSON: "AA", authenticatorData: "AA", signature: "AA" },
          clientExtensionResults: {},
        },
      },
    });
    expectJsonError(res, 403, "access_denied");
  });
});

describe("callbacks", () => {
  it("an OIDC/GitHub callback without the binding cookie is refused (403) and clears the cookie", async () => {
    const res = await fx.client.send({
      path: `/v1/webapi/sso/callback?code=abc&state=${randomBytes(32).toString("base64url")}`,
    });
    expectJsonError(res, 403, "access_denied");
    expect((res.json as { error: { message: string } }).error.message).toMatch(/not started in this browser/);
    const cleared = cookieAttributes(res.setCookies, SSO_COOKIE);
    expect(cleared?.get("value")).toBe("");
    expect(cleared?.get("path")).toBe("/");
    expect(cleared?.has("secure")).toBe(true);
  });

  it("the same refusal as a page for a browser", async () => {
    const res = await fx.client.send({
      path: "/v1/webapi/sso/callback?error=access_denied&state=x",
      headers: { accept: HTML },
    });
    expect(res.status).toBe(403);
    expect(res.text).toContain("Sign-in failed");
    expect(res.text).toContain("not started in this browser");
  });

  it("a SAML POST without the binding cookie is refused (403)", async () => {
    const res = await fx.client.send({
      method: "POST",
      path: "/v1/webapi/sso/saml/acs",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      raw: new URLSearchParams({ SAMLResponse: "PHNhbWxwOlJlc3BvbnNlLz4=", RelayState: "abc" }).toString(),
    });
    expectJsonError(res, 403, "access_denied");
  });

  it("the SAML ACS takes only its form, bounded: JSON or text is 415, a huge form 413, a missing field 400", async () => {
    const cookie = `${SSO_COOKIE}=${randomBytes(32).toString("base64url")}`;
    const json = await fx.client.send({
      method: "POST",
      path: "/v1/webapi/sso/saml/acs",
      headers: { cookie },
      body: { SAMLResponse: "x", RelayState: "y" },
    });
    expectJsonError(json, 415, "unsupported_media_type");
    const text = await fx.client.send({
      method: "POST",
      path: "/v1/webapi/sso/saml/acs",
      headers: { cookie, "content-type": "text/plain" },
      raw: "SAMLResponse=x&RelayState=y",
    });
    expectJsonError(text, 415, "unsupported_media_type");
    const huge = await fx.client.send({
      method: "POST",
      path: "/v1/webapi/sso/saml/acs",
      headers: { cookie, "content-type": "application/x-www-form-urlencoded" },
      raw: `RelayState=y&SAMLResponse=${"A".repeat(600 * 1024)}`,
    });
    expectJsonError(huge, 413, "body_too_large");
    const missing = await fx.client.send({
      method: "POST",
      path: "/v1/webapi/sso/saml/acs",
      headers: { cookie, "content-type": "application/x-www-form-urlencoded" },
      raw: "RelayState=y",
    });
    expectJsonError(missing, 400, "bad_parameter");
  });
});

describe("SAML service-provider metadata", () => {
  it("answers the connector's entity id and ACS URL as XML; other names are 404", async () => {
    const res = await fx.client.send({ path: "/v1/webapi/sso/corp-saml/saml/metadata" });
    expect(res.status, res.text).toBe(200);
    expect(String(res.headers["content-type"])).toMatch(/^application\/samlmetadata\+xml/);
    expect(res.text).toContain(`entityID="${PUBLIC_ORIGIN}/v1/webapi/sso/corp-saml/saml/metadata"`);
    expect(res.text).toContain(`Location="${PUBLIC_ORIGIN}/v1/webapi/sso/saml/acs"`);
    expectJsonError(await fx.client.send({ path: "/v1/webapi/sso/gh/saml/metadata" }), 404, "not_found");
    expectJsonError(await fx.client.send({ path: "/v1/webapi/sso/nope/saml/metadata" }), 404, "not_found");
  });
});

describe("OpenAPI", () => {
  it("documents every SSO route", async () => {
    const doc = (await fx.client.send({ path: "/v1/webapi/openapi.json" })).json as {
      paths: Record<string, unknown>;
    };
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining([
        "/v1/webapi/sso/{connector}/login",
        "/v1/webapi/sso/{connector}/cli",
        "/v1/webapi/sso/requests/{request_id}",
        "/v1/webapi/sso/callback",
        "/v1/webapi/sso/saml/acs",
        "/v1/webapi/sso/exchange",
        "/v1/webapi/sso/{connector}/saml/metadata",
      ]),
    );
  });
});
