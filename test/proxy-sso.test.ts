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
import { cookieAttributes, cookieHeader, type HttpResponse } from "./proxy-https-client.ts";

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

describe("browser start", () => {
  it("sets the binding cookie (Secure, HttpOnly, SameSite=None, Path=/, 10 min) and sends the browser to the provider", async () => {
    const res = await fx.client.send({
      path: "/v1/webapi/sso/gh/login?redirect_url=%2Fweb%2Fterminal%3Fnode%3Dn1",
    });
    expect(res.status, res.text).toBe(302);
    const to = new URL(String(res.headers.location));
    expect(`${to.origin}${to.pathname}`).toBe("https://github.example/login/oauth/authorize");
    expect(to.searchParams.get("client_id")).toBe("client-1");
    expect(to.searchParams.get("redirect_uri")).toBe(`${PUBLIC_ORIGIN}/v1/webapi/sso/callback`);
    expect(to.searchParams.get("state")).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const cookie = cookieAttributes(res.setCookies, SSO_COOKIE);
    expect(cookie?.get("value")).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(cookie?.get("max-age")).toBe("600");
    expect(cookie?.get("path")).toBe("/");
    expect(cookie?.get("samesite")).toBe("None");
    expect(cookie?.has("secure")).toBe(true);
    expect(cookie?.has("httponly")).toBe(true);
    expect(cookie?.has("domain")).toBe(false);
    // The state is not the cookie; neither the secret nor the cookie is anywhere else.
    expect(to.searchParams.get("state")).not.toBe(cookie?.get("value"));
    expect(res.headers.location).not.toContain(cookie?.get("value") ?? "-");
    expectNoSecret(res);
  });

  it("an unknown connector is 404 (JSON, or a page for a browser)", async () => {
    const json = await fx.client.send({ path: "/v1/webapi/sso/nope/login" });
    expectJsonError(json, 404, "not_found");
    // A refused start leaves the browser's cookies alone.
    expect(json.setCookies).toEqual([]);
    const page = await fx.client.send({ path: "/v1/webapi/sso/nope/login", headers: { accept: HTML } });
    expect(page.status).toBe(404);
    expect(page.text).toContain("Sign-in failed");
  });

  it("a connector whose secret cannot be read is 412, without saying more than that", async () => {
    // The fixture's own github connector names a Kubernetes Secret, which embedded auth cannot read.
    const res = await fx.client.send({ path: "/v1/webapi/sso/github/login" });
    expectJsonError(res, 412, "precondition_failed");
    expect(res.text).not.toContain("client_secret");
  });
});

describe("CLI start and its browser leg", () => {
  it("answers the URL to open; opening it binds the browser once and goes to the provider", async () => {
    const res = await fx.client.send({
      method: "POST",
      path: "/v1/webapi/sso/gh/cli",
      body: { redirect_url: "http://127.0.0.1:45678/callback", code_challenge: challenge(VERIFIER) },
    });
    expect(res.status, res.text).toBe(200);
    const started = res.json as { request_id: string; login_url: string; expires_at: string };
    expect(started.login_url).toBe(`${PUBLIC_ORIGIN}/v1/webapi/sso/requests/${started.request_id}`);
    expect(Date.parse(started.expires_at) - Date.now()).toBeGreaterThan(9 * 60_000);
    expectNoSecret(res);

    const path = new URL(started.login_url).pathname;
    const opened = await fx.client.send({ path });
    expect(opened.status, opened.text).toBe(302);
    expect(String(opened.headers.location)).toMatch(/^https:\/\/github\.example\/login\/oauth\/authorize\?/);
    expect(cookieAttributes(opened.setCookies, SSO_COOKIE)?.get("samesite")).toBe("None");
    // Only the first browser binds it: a second one (someone the link was forwarded to) is refused.
    const again = await fx.client.send({ path, headers: { accept: HTML } });
    expect(again.status).toBeGreaterThanOrEqual(400);
    expect(again.status).toBeLessThan(500);
    expect(again.headers.location).toBeUndefined();
  });

  it("an unknown request id is refused; a malformed one is 400", async () => {
    const unknown = await fx.client.send({
      path: `/v1/webapi/sso/requests/${randomBytes(32).toString("base64url")}`,
    });
    expect([401, 403, 404]).toContain(unknown.status);
    expectJsonError(
      await fx.client.send({ path: "/v1/webapi/sso/requests/..%2F..%2Fetc" }),
      400,
      "bad_parameter",
    );
  });

  it("a made-up code is refused at the exchange (4xx), a malformed verifier is 400", async () => {
    const made = await fx.client.send({
      method: "POST",
      path: "/v1/webapi/sso/exchange",
      body: { code: randomBytes(32).toString("base64url"), code_verifier: VERIFIER },
    });
    expect([401, 403, 404]).toContain(made.status);
    expect(made.setCookies).toEqual([]);
    const bad = await fx.client.send({
      method: "POST",
      path: "/v1/webapi/sso/exchange",
      body: { code: randomBytes(32).toString("base64url"), code_verifier: "short" },
    });
    expectJsonError(bad, 400, "bad_parameter");
  });
});

describe("callbacks", () => {
  it("a callback with another browser's binding cookie is refused and the cookie cleared", async () => {
    const start = await fx.client.send({ path: "/v1/webapi/sso/gh/login" });
    const state = new URL(String(start.headers.location)).searchParams.get("state") ?? "";
    const res = await fx.client.send({
      path: `/v1/webapi/sso/callback?code=abc&state=${state}`,
      headers: { cookie: `${SSO_COOKIE}=${randomBytes(32).toString("base64url")}` },
    });
    expect([401, 403]).toContain(res.status);
    expect(cookieAttributes(res.setCookies, SSO_COOKIE)?.get("value")).toBe("");
    expect(res.headers.location).toBeUndefined();
    expectNoSecret(res);
  });

  it("the provider's error comes back as 401 naming its code, never echoing its text unescaped", async () => {
    const start = await fx.client.send({ path: "/v1/webapi/sso/gh/login" });
    const state = new URL(String(start.headers.location)).searchParams.get("state") ?? "";
    const cookie = cookieHeader(start.setCookies);
    const res = await fx.client.send({
      path: `/v1/webapi/sso/callback?error=access_denied&error_description=${encodeURIComponent("<script>x</script>")}&state=${state}`,
      headers: { cookie, accept: HTML },
    });
    expect(res.status).toBe(401);
    expect(res.text).toContain("access_denied");
    expect(res.text).not.toContain("<script>");
  });

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
      path: `/v1/webapi/sso/callback?error=access_denied&state=${randomBytes(32).toString("base64url")}`,
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

  it("callback parameters out of their bounds are 400 before anything else (and fit the URL limit)", async () => {
    for (const query of [
      "state=short",
      `state=${"a".repeat(129)}`,
      `code=${"c".repeat(2049)}&state=${randomBytes(32).toString("base64url")}`,
      `code=%C3%A9&state=${randomBytes(32).toString("base64url")}`,
      `error=${"e".repeat(129)}`,
    ]) {
      expectJsonError(
        await fx.client.send({ path: `/v1/webapi/sso/callback?${query}` }),
        400,
        "bad_parameter",
      );
    }
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
