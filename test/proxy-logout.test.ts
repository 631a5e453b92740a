// POSTs without a body work with `Content-Type: application/json` and an empty body (logout,
// WebAuthn register/begin), and logout clears the cookies of an expired or revoked session too.
// Real HTTPS to a proxy backed by a real auth server with short sessions.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PASSWORD, type ProxyFixture, PUBLIC_ORIGIN, startProxyFixture, USERS } from "./proxy-fixture.ts";
import { cookieAttributes, cookieHeader, type HttpResponse } from "./proxy-https-client.ts";

const SESSION_TTL_MS = 3000;

let fx: ProxyFixture;
beforeAll(async () => {
  fx = await startProxyFixture({}, { sessionTtlMs: SESSION_TTL_MS });
});
afterAll(async () => {
  await fx?.close();
});

async function login(): Promise<{ sessionId: string; cookie: string; csrf: string }> {
  const res = await fx.client.send({
    method: "POST",
    path: "/v1/webapi/login",
    body: { username: USERS.user, password: PASSWORD },
  });
  expect(res.status, res.text).toBe(200);
  return {
    sessionId: (res.json as { session_id: string }).session_id,
    cookie: cookieHeader(res.setCookies),
    csrf: cookieAttributes(res.setCookies, "__Host-svc_csrf")?.get("value") ?? "",
  };
}

const json = { "content-type": "application/json" };

function expectLoggedOut(res: HttpResponse): void {
  expect(res.status, res.text).toBe(200);
  expect(res.json).toEqual({ logged_out: true });
  for (const name of ["__Host-svc_session", "__Host-svc_csrf"]) {
    const cleared = cookieAttributes(res.setCookies, name);
    expect(cleared?.get("value"), name).toBe("");
    expect(cleared?.get("max-age") === "0" || cleared?.has("expires"), name).toBe(true);
  }
}

describe("POST without a body", () => {
  it("logout with Content-Type: application/json and an empty body (Bearer and cookie)", async () => {
    const a = await login();
    expectLoggedOut(
      await fx.client.send({
        method: "POST",
        path: "/v1/webapi/logout",
        headers: { ...json, authorization: `Bearer ${a.sessionId}` },
        raw: "",
      }),
    );
    const b = await login();
    expectLoggedOut(
      await fx.client.send({
        method: "POST",
        path: "/v1/webapi/logout",
        headers: { ...json, cookie: b.cookie, origin: PUBLIC_ORIGIN, "x-csrf-token": b.csrf },
        raw: "",
      }),
    );
    for (const sessionId of [a.sessionId, b.sessionId]) {
      const res = await fx.client.send({
        path: "/v1/webapi/session",
        headers: { authorization: `Bearer ${sessionId}` },
      });
      expect(res.status).toBe(401);
    }
  });

  it("WebAuthn register/begin with no body, an empty JSON body or {}", async () => {
    const { sessionId } = await login();
    const headers = { authorization: `Bearer ${sessionId}` };
    for (const req of [{}, { headers: json, raw: "" }, { headers: json, raw: "{}" }]) {
      const res = await fx.client.send({
        method: "POST",
        path: "/v1/webapi/mfa/webauthn/register/begin",
        ...req,
        headers: { ...headers, ...req.headers },
      });
      expect(res.status, res.text).toBe(200);
      expect(typeof (res.json as { challenge_id: unknown }).challenge_id).toBe("string");
    }
  });

  it("a route that needs a body answers 400 for an empty one, not a parse error", async () => {
    const res = await fx.client.send({ method: "POST", path: "/v1/webapi/login", headers: json, raw: "" });
    expect(res.status).toBe(400);
    expect((res.json as { error: { code: string } }).error.code).toBe("bad_parameter");
  });
});

describe("logout of a session that no longer lives", () => {
  it("clears the cookies of an expired session (Bearer and cookie with CSRF proof)", async () => {
    const a = await login();
    const b = await login();
    await new Promise((r) => setTimeout(r, SESSION_TTL_MS + 300));
    expect(
      (
        await fx.client.send({
          path: "/v1/webapi/session",
          headers: { authorization: `Bearer ${a.sessionId}` },
        })
      ).status,
    ).toBe(401);
    expectLoggedOut(
      await fx.client.send({
        method: "POST",
        path: "/v1/webapi/logout",
        headers: { authorization: `Bearer ${a.sessionId}` },
      }),
    );
    expectLoggedOut(
      await fx.client.send({
        method: "POST",
        path: "/v1/webapi/logout",
        headers: { ...json, cookie: b.cookie, origin: PUBLIC_ORIGIN, "x-csrf-token": b.csrf },
        raw: "",
      }),
    );
  });

  it("clears the cookies of a session already logged out; a cookie still needs CSRF proof", async () => {
    const { cookie, csrf } = await login();
    const headers = { cookie, origin: PUBLIC_ORIGIN, "x-csrf-token": csrf };
    expectLoggedOut(await fx.client.send({ method: "POST", path: "/v1/webapi/logout", headers }));
    expectLoggedOut(await fx.client.send({ method: "POST", path: "/v1/webapi/logout", headers }));
    const noProof = await fx.client.send({ method: "POST", path: "/v1/webapi/logout", headers: { cookie } });
    expect(noProof.status).toBe(403);
    expect(noProof.setCookies).toEqual([]);
  });

  it("without any credential is 401", async () => {
    const res = await fx.client.send({ method: "POST", path: "/v1/webapi/logout" });
    expect(res.status).toBe(401);
    expect((res.json as { error: { code: string } }).error.code).toBe("not_authenticated");
  });
});
