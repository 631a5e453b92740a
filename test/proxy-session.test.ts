// Login, session, logout, cookies, CSRF, input errors and headers: real HTTPS to a proxy backed
// by a real auth server over gRPC.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_CAPABILITIES } from "../server/auth/authz.ts";
import { PASSWORD, type ProxyFixture, PUBLIC_ORIGIN, startProxyFixture, USERS } from "./proxy-fixture.ts";
import { cookieAttributes, cookieHeader, type HttpResponse } from "./proxy-https-client.ts";

let fx: ProxyFixture;
beforeAll(async () => {
  fx = await startProxyFixture();
});
afterAll(async () => {
  await fx?.close();
});

interface LoggedIn {
  sessionId: string;
  csrf: string;
  cookie: string;
  res: HttpResponse;
}

async function login(username: string = USERS.user): Promise<LoggedIn> {
  const res = await fx.client.send({
    method: "POST",
    path: "/v1/webapi/login",
    body: { username, password: PASSWORD },
  });
  expect(res.status, res.text).toBe(200);
  const sessionId = (res.json as { session_id: string }).session_id;
  const csrf = cookieAttributes(res.setCookies, "__Host-svc_csrf")?.get("value") ?? "";
  return { sessionId, csrf, cookie: cookieHeader(res.setCookies), res };
}

const bothCredentials = (sessionId: string, cookie: string): Array<Record<string, string>> => [
  { authorization: `Bearer ${sessionId}` },
  { cookie },
];

const errorOf = (res: HttpResponse) => (res.json as { error: { code: string; message: string } }).error;

describe("login", () => {
  it("answers session_id and expiry and sets both cookies with the decided flags", async () => {
    const { res, sessionId, csrf } = await login();
    const body = res.json as { session_id: string; expires_at: string; scope: string };
    expect(Object.keys(body).sort()).toEqual(["expires_at", "scope", "session_id"]);
    expect(body.scope).toBe("full");
    expect(sessionId.length).toBeGreaterThanOrEqual(22);
    const expiresIn = Date.parse(body.expires_at) - Date.now();
    expect(expiresIn).toBeGreaterThan(11.9 * 3600_000);
    expect(expiresIn).toBeLessThanOrEqual(12 * 3600_000);

    const session = cookieAttributes(res.setCookies, "__Host-svc_session");
    expect(session?.get("value")).toBe(sessionId);
    expect(session?.has("httponly")).toBe(true);
    expect(session?.has("secure")).toBe(true);
    expect(session?.get("samesite")).toBe("Strict");
    expect(session?.get("path")).toBe("/");
    // __Host- cookies: Secure, Path=/ and no Domain, or browsers drop them.
    expect(session?.has("domain")).toBe(false);
    expect(session?.get("max-age")).toBe("43200");

    const csrfCookie = cookieAttributes(res.setCookies, "__Host-svc_csrf");
    expect(csrf.length).toBeGreaterThan(20);
    expect(csrf).not.toBe(sessionId);
    expect(csrfCookie?.has("httponly")).toBe(false);
    expect(csrfCookie?.has("secure")).toBe(true);
    expect(csrfCookie?.get("samesite")).toBe("Strict");
    expect(csrfCookie?.get("max-age")).toBe("43200");
    // no certificates in a web login
    expect(res.text).not.toMatch(/cert/i);
  });

  it("refuses a wrong password and an unknown user with the same answer", async () => {
    const wrong = await fx.client.send({
      method: "POST",
      path: "/v1/webapi/login",
      body: { username: USERS.user, password: "not the password at all" },
    });
    const unknown = await fx.client.send({
      method: "POST",
      path: "/v1/webapi/login",
      body: { username: "nobody-here", password: "not the password at all" },
    });
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect(wrong.json).toEqual(unknown.json);
    expect(errorOf(wrong).code).toBe("not_authenticated");
    expect(wrong.setCookies).toEqual([]);
  });

  it("refuses a cross-origin browser login (login CSRF)", async () => {
    const res = await fx.client.send({
      method: "POST",
      path: "/v1/webapi/login",
      headers: { origin: "https://evil.example.com" },
      body: { username: USERS.user, password: PASSWORD },
    });
    expect(res.status).toBe(403);
    expect(errorOf(res).code).toBe("access_denied");
  });
});

describe("bad input", () => {
  const post = (raw: string | Buffer, contentType = "application/json") =>
    fx.client.send({
      method: "POST",
      path: "/v1/webapi/login",
      headers: { "content-type": contentType },
      raw,
    });

  it("malformed JSON is 400 with the error body", async () => {
    const res = await post('{"username": "alice", "password": ');
    expect(res.status).toBe(400);
    expect(errorOf(res)).toEqual({ code: "bad_parameter", message: "malformed JSON body" });
  });

  it("wrong types are 400 (no coercion of JSON bodies)", async () => {
    const res = await post(JSON.stringify({ username: 12345, password: PASSWORD }));
    expect(res.status).toBe(400);
    expect(errorOf(res).code).toBe("bad_parameter");
    expect(errorOf(res).message).toContain("username");
  });

  it("unknown fields are 400, not silently dropped", async () => {
    const res = await post(JSON.stringify({ username: USERS.user, password: PASSWORD, admin: true }));
    expect(res.status).toBe(400);
    expect(errorOf(res).code).toBe("bad_parameter");
  });

  it("missing fields are 400", async () => {
    const res = await post(JSON.stringify({ username: USERS.user }));
    expect(res.status).toBe(400);
  });

  it("a body over 64 KiB is 413", async () => {
    const res = await post(JSON.stringify({ username: USERS.user, password: "x".repeat(70 * 1024) }));
    expect(res.status).toBe(413);
    expect(errorOf(res).code).toBe("body_too_large");
  });

  it("a non-JSON content type is 415", async () => {
    const res = await post("username=alice", "application/x-www-form-urlencoded");
    expect(res.status).toBe(415);
    expect(errorOf(res).code).toBe("unsupported_media_type");
  });

  it("unknown routes answer the error body with 404", async () => {
    const res = await fx.client.send({ path: "/v1/webapi/nope" });
    expect(res.status).toBe(404);
    expect(errorOf(res).code).toBe("not_found");
  });
});

describe("session and logout", () => {
  it("GET /session works with Bearer and with the cookie", async () => {
    const { sessionId, cookie } = await login();
    for (const headers of bothCredentials(sessionId, cookie)) {
      const res = await fx.client.send({ path: "/v1/webapi/session", headers });
      expect(res.status, res.text).toBe(200);
      const body = res.json as { username: string; roles: string[]; expires_at: string };
      expect(body.username).toBe(USERS.user);
      expect(body.roles).toEqual(["access"]);
      expect(Date.parse(body.expires_at)).toBeGreaterThan(Date.now());
    }
  });

  it("answers the admin capabilities the roles grant: all for an admin, none for an ordinary user", async () => {
    const consolePages = ["users:list", "roles:list", "tokens:list", "agent_identities:list", "audit:list"];
    const allowedOf = async (username: string): Promise<string[]> => {
      const { sessionId } = await login(username);
      const res = await fx.client.send({
        path: "/v1/webapi/session",
        headers: { authorization: `Bearer ${sessionId}` },
      });
      expect(res.status, res.text).toBe(200);
      return (res.json as { allowed: string[] }).allowed;
    };
    const admin = await allowedOf(USERS.admin);
    expect(admin).toEqual(ADMIN_CAPABILITIES.map((c) => c.name));
    expect(admin).toEqual(expect.arrayContaining(consolePages));
    expect(await allowedOf(USERS.user)).toEqual([]);
  });

  it("anonymous and bogus credentials are 401", async () => {
    for (const headers of [
      {} as Record<string, string>,
      { authorization: "Bearer AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA" },
      { authorization: "Basic Zm9vOmJhcg==" },
      { cookie: "__Host-svc_session=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA" },
    ]) {
      const res = await fx.client.send({ path: "/v1/webapi/session", headers });
      expect(res.status, JSON.stringify(headers)).toBe(401);
      expect(errorOf(res).code).toBe("not_authenticated");
    }
  });

  it("reads the session only from the __Host- cookie: an unprefixed one a sibling host could plant is ignored", async () => {
    const { sessionId } = await login();
    const planted = await fx.client.send({
      path: "/v1/webapi/session",
      headers: { cookie: `svc_session=${sessionId}` },
    });
    expect(planted.status).toBe(401);
    const real = await fx.client.send({
      path: "/v1/webapi/session",
      headers: { cookie: `__Host-svc_session=${sessionId}` },
    });
    expect(real.status, real.text).toBe(200);
  });

  it("logout with Bearer (no CSRF needed) kills the session for both credentials", async () => {
    const { sessionId, cookie } = await login();
    const out = await fx.client.send({
      method: "POST",
      path: "/v1/webapi/logout",
      headers: { authorization: `Bearer ${sessionId}` },
    });
    expect(out.status, out.text).toBe(200);
    expect(out.json).toEqual({ logged_out: true });
    const cleared = cookieAttributes(out.setCookies, "__Host-svc_session");
    expect(cleared?.get("value")).toBe("");
    expect(cleared?.get("max-age") === "0" || cleared?.has("expires")).toBe(true);
    expect(cookieAttributes(out.setCookies, "__Host-svc_csrf")?.get("value")).toBe("");

    for (const headers of bothCredentials(sessionId, cookie)) {
      const res = await fx.client.send({ path: "/v1/webapi/session", headers });
      expect(res.status).toBe(401);
    }
  });

  it("logout with the cookie needs CSRF proof; with it the session dies for both credentials", async () => {
    const { sessionId, cookie, csrf } = await login();
    const attempts: Array<Record<string, string>> = [
      { cookie },
      { cookie, origin: PUBLIC_ORIGIN },
      { cookie, "x-csrf-token": csrf },
      { cookie, origin: "https://evil.example.com", "x-csrf-token": csrf },
      { cookie, origin: PUBLIC_ORIGIN, "x-csrf-token": `${csrf.slice(0, -2)}AA` },
    ];
    for (const headers of attempts) {
      const res = await fx.client.send({ method: "POST", path: "/v1/webapi/logout", headers });
      expect(res.status, JSON.stringify(Object.keys(headers))).toBe(403);
      expect(errorOf(res).message).toMatch(/^CSRF check failed/);
    }
    // still alive after the refused attempts
    expect((await fx.client.send({ path: "/v1/webapi/session", headers: { cookie } })).status).toBe(200);

    const ok = await fx.client.send({
      method: "POST",
      path: "/v1/webapi/logout",
      headers: { cookie, origin: PUBLIC_ORIGIN, "x-csrf-token": csrf },
    });
    expect(ok.status, ok.text).toBe(200);
    for (const headers of bothCredentials(sessionId, cookie)) {
      expect((await fx.client.send({ path: "/v1/webapi/session", headers })).status).toBe(401);
    }
  });

  it("a same-origin Referer stands in for a missing Origin", async () => {
    const { cookie, csrf } = await login();
    const res = await fx.client.send({
      method: "POST",
      path: "/v1/webapi/logout",
      headers: { cookie, referer: `${PUBLIC_ORIGIN}/web/`, "x-csrf-token": csrf },
    });
    expect(res.status, res.text).toBe(200);
  });

  it("a CSRF token of another session is refused", async () => {
    const a = await login();
    const b = await login();
    const res = await fx.client.send({
      method: "POST",
      path: "/v1/webapi/logout",
      headers: { cookie: a.cookie, origin: PUBLIC_ORIGIN, "x-csrf-token": b.csrf },
    });
    expect(res.status).toBe(403);
  });
});

describe("security headers", () => {
  it("are on successes, errors and 404s", async () => {
    const responses = [
      await fx.client.send({ path: "/v1/webapi/ping" }),
      await fx.client.send({ path: "/v1/webapi/session" }),
      await fx.client.send({ path: "/no/such/route" }),
      await fx.client.send({
        method: "POST",
        path: "/v1/webapi/login",
        headers: { "content-type": "application/json" },
        raw: "{",
      }),
    ];
    for (const res of responses) {
      expect(res.headers["strict-transport-security"]).toBe("max-age=31536000; includeSubDomains");
      const csp = String(res.headers["content-security-policy"]);
      expect(csp).toContain("default-src 'self'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain(`connect-src 'self' wss://proxy.svc.test`);
      expect(res.headers["x-content-type-options"]).toBe("nosniff");
      expect(res.headers["x-frame-options"]).toBe("DENY");
      expect(res.headers["referrer-policy"]).toBe("same-origin");
      expect(res.headers["cache-control"]).toBe("no-store");
    }
  });
});
