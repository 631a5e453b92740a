// A role's require_mfa, enforced through the real proxy and auth: a password alone gives a
// session that can only enrol a WebAuthn device; certificates, lists and terminals need a login
// that passed the device; a role that starts requiring MFA confines sessions made before it. Also
// here, because they bound what a session can do: auth.session_ttl (session, cookie and
// certificate lifetimes) and the relying party auth holds for WebAuthn, which callers cannot pick.
import { status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateSshKeyPair } from "../core/certs/ssh-keys.ts";
import { API_VERSION } from "../core/resources/index.ts";
import type { AuthServiceClient } from "../proto/generated/svc/v1/AuthService.ts";
import { callUnary, createAuthClient, userMetadata } from "../server/auth/client.ts";
import { setPassword } from "../server/auth/passwords.ts";
import { statusOf } from "./auth-fixture.ts";
import { PASSWORD, type ProxyFixture, PUBLIC_ORIGIN, startProxyFixture } from "./proxy-fixture.ts";
import { cookieAttributes } from "./proxy-https-client.ts";
import { SoftAuthenticator } from "./proxy-soft-authenticator.ts";
import { finish, passwordStep, register } from "./proxy-webauthn-steps.ts";

let fx: ProxyFixture;
let grpc: AuthServiceClient;

const role = (name: string, spec: Record<string, unknown>) =>
  fx.source.apply({ apiVersion: API_VERSION, kind: "Role", metadata: { name }, spec } as never);
const user = (name: string, roles: string[]) =>
  fx.source.apply({
    apiVersion: API_VERSION,
    kind: "User",
    metadata: { name },
    spec: { roles, traits: { logins: [name] } },
  } as never);

async function passwordLogin(username: string) {
  return fx.client.send({ method: "POST", path: "/v1/webapi/login", body: { username, password: PASSWORD } });
}

const bearer = (sessionId: string) => ({ authorization: `Bearer ${sessionId}` });

async function certs(sessionId: string) {
  return fx.client.send({
    method: "POST",
    path: "/v1/webapi/ssh/certs",
    headers: bearer(sessionId),
    body: { public_key: generateSshKeyPair("ed25519").publicLine },
  });
}

beforeAll(async () => {
  fx = await startProxyFixture({ rateLimit: { perAddress: 1000, perUsername: 1000, windowMs: 60_000 } });
  grpc = createAuthClient({ address: fx.auth.address, caPems: [fx.hostCaPem] });
  await role("mfa", {
    allow: { logins: ["{{internal.logins}}"], node_labels: { "*": "*" } },
    options: { require_mfa: true },
  });
  await user("mia", ["access", "mfa"]);
  await user("otto", ["access"]);
  for (const name of ["mia", "otto"]) await setPassword(fx.backend, name, PASSWORD);
}, 120_000);

afterAll(async () => {
  grpc?.close();
  await fx?.close();
});

describe("require_mfa", () => {
  let enrolment = "";
  let key: SoftAuthenticator;

  it("a password alone gives a session that can only enrol a device", async () => {
    const res = await passwordLogin("mia");
    expect(res.status, res.text).toBe(200);
    const body = res.json as { session_id: string; scope: string };
    expect(body.scope).toBe("mfa_enrollment");
    enrolment = body.session_id;
    const view = await fx.client.send({
      method: "GET",
      path: "/v1/webapi/session",
      headers: bearer(enrolment),
    });
    expect(view.json).toMatchObject({ username: "mia", mfa_verified: false, scope: "mfa_enrollment" });

    const denied = await certs(enrolment);
    expect(denied.status, denied.text).toBe(403);
    expect(denied.text).toMatch(/require multi-factor authentication/);
    const nodes = await fx.client.send({
      method: "GET",
      path: "/v1/webapi/nodes",
      headers: bearer(enrolment),
    });
    expect(nodes.status).toBe(403);
    // Straight at auth, with the same session: the certificate RPC refuses too.
    const direct = await statusOf(
      callUnary(
        grpc,
        "IssueUserCerts",
        { ssh_public_key: generateSshKeyPair("ed25519").publicLine, ttl_seconds: 0, node: "" },
        userMetadata(enrolment),
      ),
    );
    expect(direct.code).toBe(status.PERMISSION_DENIED);
  });

  it("enrols a device with that session; the next login needs it, and then everything opens", async () => {
    key = new SoftAuthenticator(PUBLIC_ORIGIN);
    const reg = await register(fx, enrolment, key);
    expect(reg.status, reg.text).toBe(201);
    // The enrolment session does not grow into a full one.
    expect((await certs(enrolment)).status).toBe(403);

    const mfa = await passwordStep(fx, "mia");
    const done = await finish(fx, mfa.challenge_id, key.assert(mfa.webauthn));
    expect(done.status, done.text).toBe(200);
    const full = done.json as { session_id: string; scope: string };
    expect(full.scope).toBe("full");
    const view = await fx.client.send({
      method: "GET",
      path: "/v1/webapi/session",
      headers: bearer(full.session_id),
    });
    expect(view.json).toMatchObject({ mfa_verified: true, scope: "full" });
    const issued = await certs(full.session_id);
    expect(issued.status, issued.text).toBe(200);
    expect((issued.json as { principals: string[] }).principals).toContain("mia");
  });

  it("an enrolment session adds the first device only: a password cannot add a key next to the user's", async () => {
    await user("nina", ["access", "mfa"]);
    await setPassword(fx.backend, "nina", PASSWORD);
    // Someone with the password logs in first and keeps the enrolment session (and a challenge).
    const stolen = ((await passwordLogin("nina")).json as { session_id: string }).session_id;
    const early = await fx.client.send({
      method: "POST",
      path: "/v1/webapi/mfa/webauthn/register/begin",
      headers: bearer(stolen),
      body: {},
    });
    expect(early.status, early.text).toBe(200);
    // The user enrols with their own enrolment session.
    const own = ((await passwordLogin("nina")).json as { session_id: string }).session_id;
    const ninaKey = new SoftAuthenticator(PUBLIC_ORIGIN);
    expect((await register(fx, own, ninaKey)).status).toBe(201);

    const begin = await fx.client.send({
      method: "POST",
      path: "/v1/webapi/mfa/webauthn/register/begin",
      headers: bearer(stolen),
      body: {},
    });
    expect(begin.status, begin.text).toBe(403);
    expect(begin.text).toMatch(/enrols only the first WebAuthn device/);
    // Nor can the challenge taken before the user enrolled be finished now.
    const { challenge_id, webauthn } = early.json as { challenge_id: string; webauthn: never };
    const late = await fx.client.send({
      method: "POST",
      path: "/v1/webapi/mfa/webauthn/register/finish",
      headers: bearer(stolen),
      body: {
        challenge_id,
        device_name: "not theirs",
        credential: new SoftAuthenticator(PUBLIC_ORIGIN).register(webauthn),
      },
    });
    expect(late.status, late.text).toBe(403);
    // A fresh password login now goes through the device; that session may add more.
    const mfa = await passwordStep(fx, "nina");
    const done = await finish(fx, mfa.challenge_id, ninaKey.assert(mfa.webauthn));
    const full = (done.json as { session_id: string }).session_id;
    expect((await register(fx, full, new SoftAuthenticator(PUBLIC_ORIGIN), "spare")).status).toBe(201);
    const devices = await fx.client.send({
      method: "GET",
      path: "/v1/webapi/mfa/devices",
      headers: bearer(full),
    });
    expect((devices.json as { items: { name: string }[] }).items.map((d) => d.name).sort()).toEqual([
      "spare",
      "test key",
    ]);
  });

  it("two enrolment sessions finishing at once keep at most one device", async () => {
    await user("olga", ["access", "mfa"]);
    await setPassword(fx.backend, "olga", PASSWORD);
    const sessions = [];
    for (let i = 0; i < 2; i++)
      sessions.push(((await passwordLogin("olga")).json as { session_id: string }).session_id);
    const begun = [];
    for (const s of sessions) {
      const b = await fx.client.send({
        method: "POST",
        path: "/v1/webapi/mfa/webauthn/register/begin",
        headers: bearer(s),
        body: {},
      });
      expect(b.status, b.text).toBe(200);
      begun.push({ s, ...(b.json as { challenge_id: string; webauthn: never }) });
    }
    const results = await Promise.all(
      begun.map(({ s, challenge_id, webauthn }, i) =>
        fx.client.send({
          method: "POST",
          path: "/v1/webapi/mfa/webauthn/register/finish",
          headers: bearer(s),
          body: {
            challenge_id,
            device_name: `key ${i}`,
            credential: new SoftAuthenticator(PUBLIC_ORIGIN).register(webauthn),
          },
        }),
      ),
    );
    const added = results.filter((r) => r.status === 201).length;
    expect(results.every((r) => r.status === 201 || r.status === 403)).toBe(true);
    expect(added).toBeLessThanOrEqual(1);
    const list = await fx.client.send({
      method: "GET",
      path: "/v1/webapi/mfa/devices",
      headers: bearer(sessions[0] as string),
    });
    expect((list.json as { items: unknown[] }).items).toHaveLength(added);
  });

  it("a role that starts requiring MFA confines sessions made with a password before", async () => {
    const res = await passwordLogin("otto");
    const session = (res.json as { session_id: string }).session_id;
    expect((await certs(session)).status).toBe(200);
    await user("otto", ["access", "mfa"]);
    try {
      const after = await certs(session);
      expect(after.status, after.text).toBe(403);
      const view = await fx.client.send({
        method: "GET",
        path: "/v1/webapi/session",
        headers: bearer(session),
      });
      expect(view.json).toMatchObject({ scope: "mfa_enrollment", mfa_verified: false });
    } finally {
      await user("otto", ["access"]);
    }
    expect((await certs(session)).status).toBe(200);
  });
});

describe("the relying party is auth's", () => {
  it("refuses a WebAuthn step that names another relying party", async () => {
    const mfa = await passwordStep(fx, "mia");
    const evil = { rp_id: "evil.test", rp_name: "evil", origin: "https://evil.test" };
    const begin = await statusOf(
      callUnary(grpc, "BeginWebAuthnLogin", { mfa_token: mfa.mfa_token, relying_party: evil }),
    );
    expect(begin.code).toBe(status.INVALID_ARGUMENT);
    expect(begin.details).toMatch(/not this cluster's/);
    // A phishing page's assertion (its own origin and RP ID) fails whatever the request says.
    const phished = new SoftAuthenticator("https://evil.test");
    const fin = await statusOf(
      callUnary(grpc, "FinishWebAuthnLogin", {
        challenge_id: mfa.challenge_id,
        credential_json: JSON.stringify(phished.assert(mfa.webauthn)),
        client_address: "",
        relying_party: evil,
      }),
    );
    expect(fin.code).toBe(status.INVALID_ARGUMENT);
    const silent = await statusOf(
      callUnary(grpc, "FinishWebAuthnLogin", {
        challenge_id: mfa.challenge_id,
        credential_json: JSON.stringify(phished.assert(mfa.webauthn)),
        client_address: "",
      }),
    );
    expect(silent.code).not.toBe(status.OK);
  });

  it("refuses another relying party in AuthenticateLocal's webauthn field and in enrolment", async () => {
    for (const rp of [
      { rp_id: "evil.test", rp_name: "evil", origin: "https://evil.test" },
      // The right RP ID with a phishing origin is no better.
      { rp_id: PUBLIC_ORIGIN.slice("https://".length), rp_name: "x", origin: "https://evil.test" },
    ]) {
      const r = await statusOf(
        callUnary(grpc, "AuthenticateLocal", {
          username: "mia",
          password: PASSWORD,
          client_address: "",
          webauthn: rp,
        }),
      );
      expect(r.code).toBe(status.INVALID_ARGUMENT);
      expect(r.details).toMatch(/not this cluster's/);
    }
    // This cluster's own relying party, named or not, still gets its challenge.
    const ok = await callUnary(grpc, "AuthenticateLocal", {
      username: "mia",
      password: PASSWORD,
      client_address: "",
      webauthn: { rp_id: PUBLIC_ORIGIN.slice("https://".length), rp_name: "", origin: PUBLIC_ORIGIN },
    });
    expect(JSON.parse(ok.mfa_required?.challenge?.options_json ?? "{}").rpId).toBe(
      PUBLIC_ORIGIN.slice("https://".length),
    );
    const otto = await callUnary(grpc, "AuthenticateLocal", {
      username: "otto",
      password: PASSWORD,
      client_address: "",
    });
    const reg = await statusOf(
      callUnary(
        grpc,
        "BeginWebAuthnRegistration",
        { relying_party: { rp_id: "evil.test", rp_name: "evil", origin: "https://evil.test" } },
        userMetadata(otto.session?.session_id ?? ""),
      ),
    );
    expect(reg.code).toBe(status.INVALID_ARGUMENT);
  });
});

describe("session lifetime", () => {
  let short: ProxyFixture;

  beforeAll(async () => {
    short = await startProxyFixture({}, { sessionTtlMs: 30 * 60_000 });
  }, 120_000);
  afterAll(async () => {
    await short?.close();
  });

  it("auth.session_ttl sets the session, its cookies and caps its certificates", async () => {
    const res = await short.client.send({
      method: "POST",
      path: "/v1/webapi/login",
      body: { username: "alice", password: PASSWORD },
    });
    expect(res.status, res.text).toBe(200);
    const body = res.json as { session_id: string; expires_at: string };
    const left = Date.parse(body.expires_at) - Date.now();
    expect(left).toBeGreaterThan(29 * 60_000);
    expect(left).toBeLessThanOrEqual(30 * 60_000);
    expect(cookieAttributes(res.setCookies, "__Host-svc_session")?.get("max-age")).toBe("1800");
    // The access role allows 12 h certificates; this session lives 30 min, and so do they.
    const issued = await short.client.send({
      method: "POST",
      path: "/v1/webapi/ssh/certs",
      headers: bearer(body.session_id),
      body: { public_key: generateSshKeyPair("ed25519").publicLine, ttl_seconds: 8 * 3600 },
    });
    expect(issued.status, issued.text).toBe(200);
    expect(Date.parse((issued.json as { valid_before: string }).valid_before)).toBeLessThanOrEqual(
      Date.parse(body.expires_at),
    );
  });
});
