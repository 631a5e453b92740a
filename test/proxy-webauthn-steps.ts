// WebAuthn steps through the proxy's routes, shared by the tests: enrol a software authenticator
// for a logged-in user, and log in with password + assertion.
import type {
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
} from "@simplewebauthn/server";
import { expect } from "vitest";
import { PASSWORD, type ProxyFixture, PUBLIC_ORIGIN, USERS } from "./proxy-fixture.ts";
import type { HttpResponse } from "./proxy-https-client.ts";
import { type AssertOptions, SoftAuthenticator } from "./proxy-soft-authenticator.ts";

export interface MfaChallenge {
  mfa_token: string;
  challenge_id: string;
  webauthn: PublicKeyCredentialRequestOptionsJSON;
}

/** Registers a new software authenticator for the session's user; answers the device id. */
export async function register(
  fx: ProxyFixture,
  sessionId: string,
  authenticator: SoftAuthenticator,
  name = "test key",
): Promise<HttpResponse> {
  const headers = { authorization: `Bearer ${sessionId}` };
  const begin = await fx.client.send({
    method: "POST",
    path: "/v1/webapi/mfa/webauthn/register/begin",
    headers,
    body: {},
  });
  expect(begin.status, begin.text).toBe(200);
  const { challenge_id, webauthn } = begin.json as {
    challenge_id: string;
    webauthn: PublicKeyCredentialCreationOptionsJSON;
  };
  return fx.client.send({
    method: "POST",
    path: "/v1/webapi/mfa/webauthn/register/finish",
    headers,
    body: { challenge_id, device_name: name, credential: authenticator.register(webauthn) },
  });
}

/** Password step for a user with WebAuthn: must be the 401 with the challenge. */
export async function passwordStep(fx: ProxyFixture, username: string = USERS.mfa): Promise<MfaChallenge> {
  const res = await fx.client.send({
    method: "POST",
    path: "/v1/webapi/login",
    body: { username, password: PASSWORD },
  });
  expect(res.status, res.text).toBe(401);
  expect(res.setCookies).toEqual([]);
  const body = res.json as { error: { code: string }; mfa: MfaChallenge };
  expect(body.error.code).toBe("mfa_required");
  return body.mfa;
}

export function finish(
  fx: ProxyFixture,
  challengeId: string,
  credential: unknown,
  headers: Record<string, string> = {},
): Promise<HttpResponse> {
  return fx.client.send({
    method: "POST",
    path: "/v1/webapi/mfa/webauthn/login/finish",
    headers,
    body: { challenge_id: challengeId, credential },
  });
}

/** Password + assertion; answers the finish response. */
export async function mfaLogin(
  fx: ProxyFixture,
  authenticator: SoftAuthenticator,
  o: AssertOptions = {},
): Promise<HttpResponse> {
  const mfa = await passwordStep(fx);
  return finish(fx, mfa.challenge_id, authenticator.assert(mfa.webauthn, o));
}

/** Enrols a device for the session's user and logs in again through the WebAuthn step. */
export async function enrolDevice(
  fx: ProxyFixture,
  sessionId: string,
): Promise<{ authenticator: SoftAuthenticator; deviceId: string; mfaSession: string }> {
  const authenticator = new SoftAuthenticator(PUBLIC_ORIGIN);
  const reg = await register(fx, sessionId, authenticator);
  expect(reg.status, reg.text).toBe(201);
  const deviceId = (reg.json as { id: string }).id;
  const res = await mfaLogin(fx, authenticator);
  expect(res.status, res.text).toBe(200);
  return { authenticator, deviceId, mfaSession: (res.json as { session_id: string }).session_id };
}
