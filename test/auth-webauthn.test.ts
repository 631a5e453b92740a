// WebAuthn through the real gRPC API with a software authenticator: enrolment, then a login that
// needs the second factor; tampered, replayed, wrong-origin and stale-counter assertions fail.
import { status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { callUnary, userMetadata } from "../server/auth/client.ts";
import { type AuthTestEnv, PASSWORD, startAuthEnv, statusOf } from "./auth-fixture.ts";
import { SoftKey } from "./auth-softkey.ts";

const rp = { rp_id: "localhost", rp_name: "svc test", origin: "https://localhost:3080" };
let env: AuthTestEnv;
const key = new SoftKey();

beforeAll(async () => {
  env = await startAuthEnv();
});
afterAll(async () => {
  await env?.close();
});

const login = (webauthn = false) =>
  callUnary(env.client, "AuthenticateLocal", {
    username: "bob",
    password: PASSWORD,
    client_address: "",
    ...(webauthn ? { webauthn: rp } : {}),
  });

describe("WebAuthn", () => {
  it("enrols a device for a logged-in user", async () => {
    const sid = (await login()).session?.session_id ?? "";
    const begin = await callUnary(
      env.client,
      "BeginWebAuthnRegistration",
      { relying_party: rp },
      userMetadata(sid),
    );
    const finish = await callUnary(
      env.client,
      "FinishWebAuthnRegistration",
      {
        challenge_id: begin.challenge_id,
        credential_json: key.register(begin.options_json, rp.origin),
        relying_party: rp,
        device_name: "yubikey",
      },
      userMetadata(sid),
    );
    expect(finish.name).toBe("yubikey");
    const list = await callUnary(env.client, "ListWebAuthnDevices", {}, userMetadata(sid));
    expect(list.devices.map((d) => d.name)).toEqual(["yubikey"]);
    expect(JSON.stringify(list)).not.toContain("publicKey");
  });

  it("then requires the second factor before a session is issued", async () => {
    const first = await login(true);
    expect(first.result).toBe("mfa_required");
    expect(first.session).toBeFalsy();
    const challenge = first.mfa_required?.challenge;
    expect(JSON.parse(challenge?.options_json ?? "{}")).toMatchObject({ rpId: "localhost" });

    // A tampered signature and a wrong origin are refused; each consumes its challenge.
    const tampered = await statusOf(
      callUnary(env.client, "FinishWebAuthnLogin", {
        challenge_id: challenge?.challenge_id ?? "",
        credential_json: key.assert(challenge?.options_json ?? "", rp.origin, { tamper: true }),
        relying_party: rp,
        client_address: "",
      }),
    );
    expect(tampered.code).toBe(status.UNAUTHENTICATED);

    const mfaToken = first.mfa_required?.mfa_token ?? "";
    const c2 = await callUnary(env.client, "BeginWebAuthnLogin", { mfa_token: mfaToken, relying_party: rp });
    const wrongOrigin = await statusOf(
      callUnary(env.client, "FinishWebAuthnLogin", {
        challenge_id: c2.challenge_id,
        credential_json: key.assert(c2.options_json, "https://evil.example"),
        relying_party: rp,
        client_address: "",
      }),
    );
    expect(wrongOrigin.code).toBe(status.UNAUTHENTICATED);

    const c3 = await callUnary(env.client, "BeginWebAuthnLogin", { mfa_token: mfaToken, relying_party: rp });
    const good = key.assert(c3.options_json, rp.origin);
    const done = await callUnary(env.client, "FinishWebAuthnLogin", {
      challenge_id: c3.challenge_id,
      credential_json: good,
      relying_party: rp,
      client_address: "",
    });
    expect(done.session?.username).toBe("bob");
    const view = await callUnary(env.client, "GetSession", {}, userMetadata(done.session?.session_id ?? ""));
    expect(view.username).toBe("bob");

    // Replaying the same answer: the challenge is gone.
    const replay = await statusOf(
      callUnary(env.client, "FinishWebAuthnLogin", {
        challenge_id: c3.challenge_id,
        credential_json: good,
        relying_party: rp,
        client_address: "",
      }),
    );
    expect(replay.code).toBe(status.UNAUTHENTICATED);
    // The mfa token was consumed by the successful login.
    const reuse = await statusOf(
      callUnary(env.client, "BeginWebAuthnLogin", { mfa_token: mfaToken, relying_party: rp }),
    );
    expect(reuse.code).toBe(status.UNAUTHENTICATED);
  });

  it("refuses a signature counter that does not increase", async () => {
    const first = await login(true);
    const c = first.mfa_required?.challenge;
    key.counter = 0; // a cloned authenticator restarts its counter
    const stale = await statusOf(
      callUnary(env.client, "FinishWebAuthnLogin", {
        challenge_id: c?.challenge_id ?? "",
        credential_json: key.assert(c?.options_json ?? "", rp.origin),
        relying_party: rp,
        client_address: "",
      }),
    );
    expect(stale.code).toBe(status.UNAUTHENTICATED);
  });
});
