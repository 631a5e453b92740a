// WebAuthn through the proxy with a software authenticator: enrolment, the 401 challenge at
// login, finishing it, and the refusals (tampered assertion, replayed challenge, wrong origin,
// non-increasing counter). Verification happens in the real auth server.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PASSWORD, type ProxyFixture, PUBLIC_ORIGIN, startProxyFixture, USERS } from "./proxy-fixture.ts";
import { cookieAttributes, cookieHeader, type HttpResponse } from "./proxy-https-client.ts";
import { SoftAuthenticator } from "./proxy-soft-authenticator.ts";
import { finish, mfaLogin, passwordStep, register } from "./proxy-webauthn-steps.ts";

let fx: ProxyFixture;
let authenticator: SoftAuthenticator;
let deviceId = "";
let passwordSession = "";

const codeOf = (res: HttpResponse) => (res.json as { error?: { code: string } }).error?.code;

beforeAll(async () => {
  // many logins of one user in a minute here; the limiter has its own test
  fx = await startProxyFixture({ rateLimit: { perAddress: 1000, perUsername: 1000, windowMs: 60_000 } });
  const res = await fx.client.send({
    method: "POST",
    path: "/v1/webapi/login",
    body: { username: USERS.mfa, password: PASSWORD },
  });
  expect(res.status).toBe(200);
  passwordSession = (res.json as { session_id: string }).session_id;
  authenticator = new SoftAuthenticator(PUBLIC_ORIGIN);
});
afterAll(async () => {
  await fx?.close();
});

describe("enrolment", () => {
  it("needs a session", async () => {
    const res = await fx.client.send({
      method: "POST",
      path: "/v1/webapi/mfa/webauthn/register/begin",
      body: {},
    });
    expect(res.status).toBe(401);
  });

  it("with the cookie, needs CSRF proof", async () => {
    const login = await fx.client.send({
      method: "POST",
      path: "/v1/webapi/login",
      body: { username: USERS.user, password: PASSWORD },
    });
    const cookie = cookieHeader(login.setCookies);
    const csrf = cookieAttributes(login.setCookies, "__Host-svc_csrf")?.get("value") ?? "";
    const refused = await fx.client.send({
      method: "POST",
      path: "/v1/webapi/mfa/webauthn/register/begin",
      headers: { cookie },
      body: {},
    });
    expect(refused.status).toBe(403);
    const accepted = await fx.client.send({
      method: "POST",
      path: "/v1/webapi/mfa/webauthn/register/begin",
      headers: { cookie, origin: PUBLIC_ORIGIN, "x-csrf-token": csrf },
      body: {},
    });
    expect(accepted.status, accepted.text).toBe(200);
    const options = (accepted.json as { webauthn: { rp: { id: string }; challenge: string } }).webauthn;
    expect(options.rp.id).toBe("proxy.svc.test");
    expect(options.challenge.length).toBeGreaterThan(16);
  });

  it("refuses an attestation made for another origin", async () => {
    const stranger = new SoftAuthenticator("https://evil.example.com");
    const res = await register(fx, passwordSession, stranger);
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
  });

  it("stores a device from a real attestation, listed by name", async () => {
    const res = await register(fx, passwordSession, authenticator, "yubikey-test");
    expect(res.status, res.text).toBe(201);
    const device = res.json as { id: string; name: string; added_at: string };
    expect(device.name).toBe("yubikey-test");
    expect(device.id).toBe(authenticator.credentialId.toString("base64url"));
    deviceId = device.id;
    const list = await fx.client.send({
      path: "/v1/webapi/mfa/devices",
      headers: { authorization: `Bearer ${passwordSession}` },
    });
    expect(list.status).toBe(200);
    expect((list.json as { items: Array<{ id: string; name: string }> }).items).toEqual([
      expect.objectContaining({ id: deviceId, name: "yubikey-test" }),
    ]);
  });

  it("refuses unknown fields and a malformed credential", async () => {
    const res = await fx.client.send({
      method: "POST",
      path: "/v1/webapi/mfa/webauthn/register/finish",
      headers: { authorization: `Bearer ${passwordSession}` },
      body: { challenge_id: "x", device_name: "k", credential: { id: "not base64url!" } },
    });
    expect(res.status).toBe(400);
  });
});

describe("login with WebAuthn enrolled", () => {
  it("password alone answers 401 with the challenge and no session", async () => {
    const mfa = await passwordStep(fx);
    expect(mfa.mfa_token.length).toBeGreaterThan(16);
    expect(mfa.challenge_id.length).toBeGreaterThan(8);
    expect(mfa.webauthn.rpId).toBe("proxy.svc.test");
    expect(mfa.webauthn.allowCredentials?.map((c) => c.id)).toEqual([deviceId]);
  });

  it("a valid assertion issues the session and cookies", async () => {
    const res = await mfaLogin(fx, authenticator);
    expect(res.status, res.text).toBe(200);
    const sessionId = (res.json as { session_id: string }).session_id;
    expect(cookieAttributes(res.setCookies, "__Host-svc_session")?.get("value")).toBe(sessionId);
    const who = await fx.client.send({
      path: "/v1/webapi/session",
      headers: { authorization: `Bearer ${sessionId}` },
    });
    expect((who.json as { username: string }).username).toBe(USERS.mfa);
  });

  it("begin with the mfa token gives a fresh challenge that also works", async () => {
    const mfa = await passwordStep(fx);
    const begin = await fx.client.send({
      method: "POST",
      path: "/v1/webapi/mfa/webauthn/login/begin",
      body: { mfa_token: mfa.mfa_token },
    });
    expect(begin.status, begin.text).toBe(200);
    const fresh = begin.json as { challenge_id: string; webauthn: { challenge: string } };
    expect(fresh.webauthn.challenge).not.toBe(mfa.webauthn.challenge);
    const res = await finish(fx, fresh.challenge_id, authenticator.assert(fresh.webauthn as never));
    expect(res.status, res.text).toBe(200);
  });

  it("a bogus mfa token is refused", async () => {
    const res = await fx.client.send({
      method: "POST",
      path: "/v1/webapi/mfa/webauthn/login/begin",
      body: { mfa_token: "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA" },
    });
    expect(res.status).toBe(401);
  });

  it("refuses a tampered assertion", async () => {
    const res = await mfaLogin(fx, authenticator, { tamperSignature: true });
    expect(res.status).toBe(401);
    expect(codeOf(res)).toBe("not_authenticated");
    expect(res.setCookies).toEqual([]);
  });

  it("refuses a replayed challenge (the same answer twice)", async () => {
    const mfa = await passwordStep(fx);
    const assertion = authenticator.assert(mfa.webauthn);
    expect((await finish(fx, mfa.challenge_id, assertion)).status).toBe(200);
    const again = await finish(fx, mfa.challenge_id, assertion);
    expect(again.status).toBe(401);
    expect(again.setCookies).toEqual([]);
  });

  it("refuses an assertion made for another origin", async () => {
    const res = await mfaLogin(fx, authenticator, { origin: "https://evil.example.com" });
    expect(res.status).toBe(401);
  });

  it("refuses a signature counter that does not increase (cloned authenticator)", async () => {
    expect((await mfaLogin(fx, authenticator)).status).toBe(200);
    const accepted = authenticator.counter;
    for (const counter of [accepted, accepted - 1]) {
      const res = await mfaLogin(fx, authenticator, { counter });
      expect(res.status, `counter ${counter} after ${accepted}`).toBe(401);
    }
    // the genuine authenticator still works afterwards
    expect((await mfaLogin(fx, authenticator)).status).toBe(200);
  });

  it("removing the device makes password login issue a session again", async () => {
    const headers = { authorization: `Bearer ${passwordSession}` };
    const del = await fx.client.send({
      method: "DELETE",
      path: `/v1/webapi/mfa/devices/${deviceId}`,
      headers,
    });
    expect(del.status, del.text).toBe(200);
    expect(del.json).toEqual({ deleted: deviceId });
    const again = await fx.client.send({
      method: "DELETE",
      path: `/v1/webapi/mfa/devices/${deviceId}`,
      headers,
    });
    expect(again.status).toBe(404);
    const res = await fx.client.send({
      method: "POST",
      path: "/v1/webapi/login",
      body: { username: USERS.mfa, password: PASSWORD },
    });
    expect(res.status, res.text).toBe(200);
  });
});
