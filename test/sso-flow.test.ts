// Single sign-on through the real auth gRPC server against a real OpenID provider (oidc-provider
// in its own process, test/harness/idp/): the provider's own login form is driven over HTTP (its
// cookies kept), so each rule of the flow is tried on genuine authorization codes and ID tokens.
// Covered: a login (roles from claims_to_roles, claims as traits in certificates), an identity
// mapping to no role, a local user's name, state reuse, a binding mismatch, an expired request,
// the CLI code exchange (a wrong verifier burns the code), the WebAuthn step (browser and CLI),
// a User resource taking an SSO name, connector deletion, auth.local_login false.
import { createHash, randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SqliteBackend } from "../core/backend/sqlite.ts";
import { formatSshPublicKey } from "../core/certs/ssh-keys.ts";
import { ManualClock } from "../core/clock.ts";
import { API_VERSION } from "../core/resources/index.ts";
import { MemorySource } from "../core/sources/memory.ts";
import type { AuthServiceClient } from "../proto/generated/svc/v1/AuthService.ts";
import { callUnary, createAuthClient, userMetadata } from "../server/auth/client.ts";
import { setPassword } from "../server/auth/passwords.ts";
import { type RunningAuthServer, startAuthServer } from "../server/auth/server.ts";
import { ConnectorSecretReader } from "../server/auth/sso/secrets.ts";
import { makePki, PASSWORD, silentLogger, statusOf, type TestPki, testResources } from "./auth-fixture.ts";
import { SoftKey } from "./auth-softkey.ts";
import { type RunningGithubStandIn, startGithubStandIn } from "./harness/idp/github.ts";
import { type RunningOidcProvider, startOidcProvider } from "./harness/idp/oidc.ts";
import { signInAtProvider as signInAt } from "./sso-provider-login.ts";

const CALLBACK = "https://proxy.test:3080/v1/webapi/sso/callback";
const RP = { rp_id: "proxy.test", rp_name: "svc", origin: "https://proxy.test:3080" };
const CLIENT_SECRET = `oidc-${randomBytes(12).toString("hex")}`;
const PW = "idp-password";

let idp: RunningOidcProvider;
let gh: RunningGithubStandIn;
let auth: RunningAuthServer;
let client: AuthServiceClient;
let source: MemorySource;
let backend: SqliteBackend;
let pki: TestPki;
let dir: string;
const clock = new ManualClock(Date.now());

function connector(
  name: string,
  extra: Record<string, unknown> = {},
  settings: Record<string, unknown> = {},
) {
  return {
    apiVersion: API_VERSION,
    kind: "Connector",
    metadata: { name },
    spec: {
      type: "oidc",
      display_name: name,
      settings: {
        client_id: "svc",
        issuer_url: idp.issuer,
        redirect_url: CALLBACK,
        scopes: ["email", "profile", "groups", "logins"],
        ...settings,
      },
      client_secret_ref: { file: "client-secret" },
      claims_to_roles: [
        { claim: "groups", value: "dev*", roles: ["access"] },
        { claim: "groups", value: "secure", roles: ["mfa-access"] },
      ],
      ...extra,
    },
  };
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "svc-sso-flow-"));
  await writeFile(join(dir, "client-secret"), `${CLIENT_SECRET}\n`, { mode: 0o600 });
  const user = (username: string, claims: Record<string, unknown>) => ({ username, password: PW, claims });
  idp = await startOidcProvider({
    clients: [{ client_id: "svc", client_secret: CLIENT_SECRET, redirect_uris: [CALLBACK] }],
    users: [
      user("alice", {
        email: "Alice@Example.com",
        groups: ["developers", "ops"],
        logins: ["alice", "deploy"],
      }),
      user("nobody", { email: "nobody@example.com", groups: ["sales"] }),
      user("bob", { email: "bob", groups: ["developers"] }),
      user("dave", { email: "dave@example.com", preferred_username: "dave", groups: ["developers"] }),
      user("sam", { email: "sam@example.com", groups: ["secure"], logins: ["sam"] }),
      user("unverified", { email: "u@example.com", email_verified: false, groups: ["developers"] }),
    ],
  });
  gh = await startGithubStandIn({
    apps: [{ client_id: "gh-app", client_secret: CLIENT_SECRET, callback_url: CALLBACK }],
    users: [
      {
        login: "Octo",
        password: PW,
        id: 42,
        email: "octo@example.com",
        orgs: [{ login: "acme", teams: ["admins", "devs"] }, { login: "other" }],
      },
      { login: "outsider", password: PW, id: 43, orgs: [{ login: "other", teams: ["devs"] }] },
    ],
  });
  pki = await makePki(clock);
  backend = new SqliteBackend({ path: ":memory:", clock, sweepIntervalMs: 0 });
  source = new MemorySource([
    ...testResources(),
    {
      apiVersion: API_VERSION,
      kind: "Role",
      metadata: { name: "mfa-access" },
      spec: { allow: { logins: ["{{external.logins}}"] }, options: { require_mfa: true } },
    },
    connector("corp"),
    connector("corp2"),
    connector("by-name", {}, { username_claim: "preferred_username" }),
    connector("short", {}, { max_session_ttl: "10m" }),
    {
      apiVersion: API_VERSION,
      kind: "Connector",
      metadata: { name: "github" },
      spec: {
        type: "github",
        display_name: "GitHub",
        settings: {
          client_id: "gh-app",
          redirect_url: CALLBACK,
          endpoint_url: gh.url,
          api_endpoint_url: gh.apiUrl,
          org: "acme",
        },
        client_secret_ref: { file: "client-secret" },
        claims_to_roles: [{ claim: "teams", value: "acme/dev*", roles: ["access"] }],
      },
    },
  ]);
  auth = await startAuthServer({
    backend,
    source,
    clock,
    logger: silentLogger,
    keys: pki.keys,
    cluster: { clusterName: "test", serverVersion: "0.1.0" },
    relyingParty: { rpId: RP.rp_id, rpName: RP.rp_name, origin: RP.origin },
    // Both test providers' CAs, as one PEM bundle (auth.sso.ca_file may hold several).
    sso: { secrets: new ConnectorSecretReader({ baseDir: dir }), caPem: `${idp.caPem}\n${gh.caPem}` },
    tls: { certPem: pki.serverCertPem, keyPem: pki.serverKeyPem, clientCaPems: [pki.hostCa.certPem] },
    port: 0,
  });
  client = createAuthClient({ address: auth.address, caPems: [pki.hostCa.certPem], serverName: "localhost" });
}, 60_000);

afterAll(async () => {
  client?.close();
  await auth?.close(2000);
  await backend?.close();
  await Promise.all([idp?.stop(), gh?.stop()]);
  if (dir) await rm(dir, { recursive: true, force: true });
});

const sha256hex = (s: string) => createHash("sha256").update(s).digest("hex");
const sha256b64 = (s: string) => createHash("sha256").update(s).digest("base64url");

/** The provider's login form driven over HTTP; returns the callback's query string. */
function signInAtProvider(authUrl: string, login: string): Promise<string> {
  return signInAt({ authUrl, login, password: PW, caPem: `${idp.caPem}\n${gh.caPem}`, callback: CALLBACK });
}

interface Browser {
  cookie: string;
  binding: string;
}
const browser = (): Browser => {
  const cookie = randomBytes(32).toString("base64url");
  return { cookie, binding: sha256hex(cookie) };
};

/** A browser login up to the provider's answer: the request and the callback query. */
async function browserLogin(conn: string, login: string, b = browser(), redirect = "/web/nodes") {
  const req = await callUnary(client, "CreateSSOAuthRequest", {
    connector: conn,
    browser_binding_hash: b.binding,
    client_redirect_url: redirect,
  });
  const query = await signInAtProvider(req.redirect_url, login);
  return { req, query, b };
}

function validate(query: string, binding: string, extra: Record<string, unknown> = {}) {
  return callUnary(client, "ValidateSSOResponse", {
    callback_query: query,
    browser_binding_hash: binding,
    ...extra,
  });
}

async function lastLoginAudit(user: string) {
  const r = await backend.searchAudit({ type: "user.login", user, limit: 500, offset: 0 });
  return r.items.at(-1);
}

describe("OIDC login through auth", () => {
  it("refuses a locked user's single sign-on and live SSO session, saying so (docs/locks.md)", async () => {
    const first = await browserLogin("corp", "alice");
    const ok = await validate(first.query, first.b.binding);
    const md = userMetadata(ok.login?.session?.session_id ?? "");
    await source.apply({
      apiVersion: API_VERSION,
      kind: "Lock",
      metadata: { name: "sso-lock" },
      spec: { target: { user: "alice@example.com" }, message: "sso locked" },
    });
    try {
      const locked = { code: status.PERMISSION_DENIED, details: "locked: sso locked" };
      expect(await statusOf(callUnary(client, "GetSession", {}, md))).toMatchObject(locked);
      const again = await browserLogin("corp", "alice");
      expect(await statusOf(validate(again.query, again.b.binding))).toMatchObject(locked);
    } finally {
      await source.remove("Lock", "sso-lock");
    }
    expect((await callUnary(client, "GetSession", {}, md)).username).toBe("alice@example.com");
  });

  it("maps the provider's identity to roles and issues a session like a password login", async () => {
    const { req, query, b } = await browserLogin("corp", "alice");
    const provider = new URL(req.redirect_url);
    expect(provider.origin).toBe(new URL(idp.issuer).origin);
    expect(provider.searchParams.get("state")).toBe(req.request_id);
    expect(provider.searchParams.get("code_challenge_method")).toBe("S256");
    expect(provider.searchParams.get("nonce")?.length).toBeGreaterThanOrEqual(43);
    expect(req.connector_type).toBe("oidc");
    const r = await validate(query, b.binding);
    expect(r.username).toBe("alice@example.com");
    expect(r.client_redirect_url).toBe("/web/nodes");
    expect(r.cli).toBe(false);
    const s = r.login?.session;
    expect(s?.roles).toEqual(["access"]);
    expect(s?.scope).toBe("full");
    const md = userMetadata(s?.session_id ?? "");
    const got = await callUnary(client, "GetSession", {}, md);
    expect(got.username).toBe("alice@example.com");
    // The provider's claims are the user's traits: the access role's {{internal.logins}}.
    const key = formatSshPublicKey((await import("node:crypto")).generateKeyPairSync("ed25519").publicKey);
    const cert = await callUnary(client, "IssueUserCerts", { ssh_public_key: key }, md);
    expect(cert.principals).toEqual(expect.arrayContaining(["alice", "deploy"]));
    const audit = await lastLoginAudit("alice@example.com");
    expect(audit?.success).toBe(true);
    expect(audit?.fields).toMatchObject({ method: "oidc", connector: "corp" });
    expect(JSON.stringify(audit)).not.toContain(CLIENT_SECRET);
    // A password login for the SSO name is refused like any unknown user.
    expect(
      (
        await statusOf(
          callUnary(client, "AuthenticateLocal", { username: "alice@example.com", password: PW }),
        )
      ).code,
    ).toBe(status.UNAUTHENTICATED);
  });

  it("refuses an identity no rule maps to a role, and audits which claims it saw", async () => {
    const { query, b } = await browserLogin("corp", "nobody");
    const st = await statusOf(validate(query, b.binding));
    expect(st.code).toBe(status.PERMISSION_DENIED);
    expect(st.details).toMatch(/no role maps to nobody@example.com/);
    const audit = await lastLoginAudit("nobody@example.com");
    expect(audit?.success).toBe(false);
    expect(audit?.fields["claims"]).toEqual(expect.arrayContaining(["email", "groups", "sub"]));
    expect(JSON.stringify(audit?.fields)).not.toContain("sales");
  });

  it("never logs in as a local user", async () => {
    const { query, b } = await browserLogin("corp", "bob");
    const st = await statusOf(validate(query, b.binding));
    expect(st.code).toBe(status.PERMISSION_DENIED);
    expect(st.details).toMatch(/bob is a local user/);
  });

  it("refuses an address the provider has not verified as the user name", async () => {
    const { query, b } = await browserLogin("corp", "unverified");
    expect((await statusOf(validate(query, b.binding))).code).toBe(status.PERMISSION_DENIED);
  });

  it("uses a request once: the same state again is refused", async () => {
    const { query, b } = await browserLogin("corp", "alice");
    expect((await validate(query, b.binding)).login?.session?.session_id).toBeTruthy();
    const again = await statusOf(validate(query, b.binding));
    expect(again.code).toBe(status.UNAUTHENTICATED);
    expect(again.details).toMatch(/unknown or expired single sign-on request/);
  });

  it("refuses an answer brought by another browser than the one that started", async () => {
    const { query } = await browserLogin("corp", "alice");
    const other = browser();
    const st = await statusOf(validate(query, other.binding));
    expect(st.code).toBe(status.PERMISSION_DENIED);
    expect((await statusOf(validate(query, ""))).code).toBe(status.PERMISSION_DENIED);
  });

  it("refuses a request older than 10 minutes", async () => {
    const b = browser();
    const req = await callUnary(client, "CreateSSOAuthRequest", {
      connector: "corp",
      browser_binding_hash: b.binding,
      client_redirect_url: "/web/",
    });
    expect(req.expires_unix_ms - clock.now().getTime()).toBe(10 * 60_000);
    clock.advance(10 * 60_000 + 1000);
    try {
      const st = await statusOf(validate(`code=abc&state=${req.request_id}`, b.binding));
      expect(st.code).toBe(status.UNAUTHENTICATED);
    } finally {
      clock.advance(-(10 * 60_000 + 1000));
    }
  });

  it("passes the provider's own error on as UNAUTHENTICATED with its code", async () => {
    const b = browser();
    const req = await callUnary(client, "CreateSSOAuthRequest", {
      connector: "corp",
      browser_binding_hash: b.binding,
      client_redirect_url: "/web/",
    });
    const st = await statusOf(
      validate(`error=access_denied&error_description=<script>&state=${req.request_id}`, b.binding),
    );
    expect(st.code).toBe(status.UNAUTHENTICATED);
    expect(st.details).toBe("the identity provider refused the login: access_denied");
  });

  it("refuses open redirects, unknown connectors and malformed starts", async () => {
    const b = browser();
    const start = (o: Record<string, string>) =>
      statusOf(
        callUnary(client, "CreateSSOAuthRequest", {
          connector: "corp",
          browser_binding_hash: b.binding,
          ...o,
        }),
      );
    for (const bad of ["//evil.example/", "https://evil.example/", "/\\evil", "/%2F/evil", "web/x", "/a\nb"])
      expect((await start({ client_redirect_url: bad })).code, bad).toBe(status.INVALID_ARGUMENT);
    expect((await start({ connector: "nope", client_redirect_url: "/web/" })).code).toBe(status.NOT_FOUND);
    expect((await start({ browser_binding_hash: "xyz" })).code).toBe(status.INVALID_ARGUMENT);
    const cli = (redirect: string) =>
      statusOf(
        callUnary(client, "CreateSSOAuthRequest", {
          connector: "corp",
          code_challenge: sha256b64("v".repeat(43)),
          client_redirect_url: redirect,
        }),
      );
    for (const bad of [
      "http://evil.example:8080/cb",
      "https://127.0.0.1:8080/cb",
      "http://127.0.0.1/cb",
      "http://user@127.0.0.1:80/",
    ])
      expect((await cli(bad)).code, bad).toBe(status.INVALID_ARGUMENT);
    expect((await cli("http://127.0.0.1:45678/callback")).code).toBe(0);
  });

  it("reads the client secret at each login: a changed file counts at once", async () => {
    const file = join(dir, "client-secret");
    await writeFile(file, "not-the-secret\n");
    try {
      const { query, b } = await browserLogin("corp", "alice");
      const st = await statusOf(validate(query, b.binding));
      expect(st.code).toBe(status.UNAUTHENTICATED);
      expect(st.details).toMatch(/invalid_client/);
      expect(st.details).not.toContain("not-the-secret");
    } finally {
      await writeFile(file, `${CLIENT_SECRET}\n`);
    }
    const { query, b } = await browserLogin("corp", "alice");
    expect((await validate(query, b.binding)).username).toBe("alice@example.com");
  });

  it("caps the session at the connector's max_session_ttl", async () => {
    const { query, b } = await browserLogin("short", "dave");
    const s = (await validate(query, b.binding)).login?.session;
    expect((s?.expires_unix_ms ?? 0) - (s?.created_unix_ms ?? 0)).toBe(10 * 60_000);
  });
});

describe("GitHub login through auth", () => {
  it("logs in an org member by login, with orgs and teams as claims", async () => {
    const { req, query, b } = await browserLogin("github", "Octo");
    expect(req.redirect_url.startsWith(`${gh.url}/login/oauth/authorize?`)).toBe(true);
    const r = await validate(query, b.binding);
    expect(r.username).toBe("octo");
    expect(r.login?.session?.roles).toEqual(["access"]);
    const audit = await lastLoginAudit("octo");
    expect(audit?.fields).toMatchObject({ method: "github", connector: "github" });
    const record = await auth.service.ssoUsers.load("octo");
    expect(record?.traits).toMatchObject({
      login: ["Octo"],
      orgs: ["acme", "other"],
      teams: ["acme/admins", "acme/devs"],
    });
  });

  it("refuses a user outside settings.org", async () => {
    const { query, b } = await browserLogin("github", "outsider");
    const st = await statusOf(validate(query, b.binding));
    expect(st.code).toBe(status.PERMISSION_DENIED);
    expect(st.details).toMatch(/not a member of the GitHub organization acme/);
  });
});

describe("CLI login", () => {
  async function cliLogin(login: string) {
    const verifier = randomBytes(32).toString("base64url");
    const req = await callUnary(client, "CreateSSOAuthRequest", {
      connector: "corp",
      code_challenge: sha256b64(verifier),
      client_redirect_url: "http://127.0.0.1:45678/callback",
    });
    expect(req.redirect_url).toBe("");
    const b = browser();
    const bound = await callUnary(client, "BindSSOAuthRequest", {
      request_id: req.request_id,
      browser_binding_hash: b.binding,
    });
    // Only the first browser that opens the link binds it.
    const second = await statusOf(
      callUnary(client, "BindSSOAuthRequest", {
        request_id: req.request_id,
        browser_binding_hash: browser().binding,
      }),
    );
    expect(second.code).toBe(status.PERMISSION_DENIED);
    const query = await signInAtProvider(bound.redirect_url, login);
    return { verifier, req, query, b };
  }

  it("parks the session under a one-time code the verifier trades; a wrong verifier burns it", async () => {
    const first = await cliLogin("alice");
    const r = await validate(first.query, first.b.binding);
    expect(r.cli).toBe(true);
    expect(r.login).toBeFalsy();
    expect(r.client_redirect_url).toBe("http://127.0.0.1:45678/callback");
    expect(r.cli_code).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const wrong = await statusOf(
      callUnary(client, "ExchangeSSOCode", {
        code: r.cli_code,
        code_verifier: randomBytes(32).toString("base64url"),
      }),
    );
    expect(wrong.code).toBe(status.UNAUTHENTICATED);
    const burnt = await statusOf(
      callUnary(client, "ExchangeSSOCode", { code: r.cli_code, code_verifier: first.verifier }),
    );
    expect(burnt.code).toBe(status.UNAUTHENTICATED);

    const next = await cliLogin("alice");
    const r2 = await validate(next.query, next.b.binding);
    const got = await callUnary(client, "ExchangeSSOCode", {
      code: r2.cli_code,
      code_verifier: next.verifier,
    });
    expect(got.session?.username).toBe("alice@example.com");
    expect(got.session?.session_id).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(
      (await callUnary(client, "GetSession", {}, userMetadata(got.session?.session_id ?? ""))).username,
    ).toBe("alice@example.com");
    const again = await statusOf(
      callUnary(client, "ExchangeSSOCode", { code: r2.cli_code, code_verifier: next.verifier }),
    );
    expect(again.code).toBe(status.UNAUTHENTICATED);
  });
});

describe("MFA after single sign-on", () => {
  it("enrols a device with an enrolment session, then requires it (browser and CLI)", async () => {
    const first = await browserLogin("corp", "sam");
    const s = (await validate(first.query, first.b.binding)).login?.session;
    expect(s?.scope).toBe("mfa_enrollment");
    const md = userMetadata(s?.session_id ?? "");
    const key = new SoftKey();
    const reg = await callUnary(client, "BeginWebAuthnRegistration", { relying_party: RP }, md);
    await callUnary(
      client,
      "FinishWebAuthnRegistration",
      {
        challenge_id: reg.challenge_id,
        credential_json: key.register(reg.options_json, RP.origin),
        relying_party: RP,
        device_name: "soft",
      },
      md,
    );

    // Browser: mfa_required with the challenge, then the session.
    const second = await browserLogin("corp", "sam");
    const r = await validate(second.query, second.b.binding, { relying_party: RP });
    const mfa = r.login?.mfa_required;
    expect(mfa?.challenge?.challenge_id).toBeTruthy();
    const done = await callUnary(client, "FinishWebAuthnLogin", {
      challenge_id: mfa?.challenge?.challenge_id ?? "",
      credential_json: key.assert(mfa?.challenge?.options_json ?? "", RP.origin),
      relying_party: RP,
      sso_request_id: r.request_id,
    });
    expect(done.session?.scope).toBe("full");
    expect(done.session?.mfa_verified).toBe(true);
    expect(done.session?.username).toBe("sam@example.com");

    // CLI: the WebAuthn step parks the session under a code for the loopback URL.
    const verifier = randomBytes(32).toString("base64url");
    const req = await callUnary(client, "CreateSSOAuthRequest", {
      connector: "corp",
      code_challenge: sha256b64(verifier),
      client_redirect_url: "http://[::1]:40000/cb",
    });
    const b = browser();
    const bound = await callUnary(client, "BindSSOAuthRequest", {
      request_id: req.request_id,
      browser_binding_hash: b.binding,
    });
    const cr = await validate(await signInAtProvider(bound.redirect_url, "sam"), b.binding, {
      relying_party: RP,
    });
    const cm = cr.login?.mfa_required;
    const fin = await callUnary(client, "FinishWebAuthnLogin", {
      challenge_id: cm?.challenge?.challenge_id ?? "",
      credential_json: key.assert(cm?.challenge?.options_json ?? "", RP.origin),
      relying_party: RP,
      sso_request_id: cr.request_id,
    });
    expect(fin.session).toBeFalsy();
    expect(fin.sso_cli_redirect_url).toBe(`http://[::1]:40000/cb?code=${fin.sso_cli_code}`);
    const got = await callUnary(client, "ExchangeSSOCode", {
      code: fin.sso_cli_code,
      code_verifier: verifier,
    });
    expect(got.session?.mfa_verified).toBe(true);
  });
});

describe("what ends an SSO user", () => {
  it("a User resource taking the name: the SSO session no longer passes", async () => {
    const { query, b } = await browserLogin("by-name", "dave");
    const s = (await validate(query, b.binding)).login?.session;
    expect(s?.username).toBe("dave");
    const md = userMetadata(s?.session_id ?? "");
    expect((await callUnary(client, "GetSession", {}, md)).username).toBe("dave");
    await source.apply({
      apiVersion: API_VERSION,
      kind: "User",
      metadata: { name: "dave" },
      spec: { roles: ["admin"] },
    } as never);
    try {
      expect((await statusOf(callUnary(client, "GetSession", {}, md))).code).toBe(status.UNAUTHENTICATED);
    } finally {
      await source.remove("User", "dave");
    }
  });

  it("deleting the connector revokes its users' sessions", async () => {
    const { query, b } = await browserLogin("corp2", "alice");
    // alice@example.com is corp's while corp's sessions live: another connector is refused.
    expect((await statusOf(validate(query, b.binding))).code).toBe(status.PERMISSION_DENIED);
    const { query: q2, b: b2 } = await browserLogin("by-name", "dave");
    const md = userMetadata((await validate(q2, b2.binding)).login?.session?.session_id ?? "");
    expect((await callUnary(client, "GetSession", {}, md)).username).toBe("dave");
    await source.remove("Connector", "by-name");
    let code = 0;
    for (let i = 0; i < 50 && code === 0; i++) {
      code = (await statusOf(callUnary(client, "GetSession", {}, md))).code;
      if (code === 0) await new Promise((r) => setTimeout(r, 50));
    }
    expect(code).toBe(status.UNAUTHENTICATED);
    expect(await auth.service.ssoUsers.load("dave")).toBeUndefined();
  });
});

describe("auth.local_login false", () => {
  it("refuses password logins (but the first admin's) and says so in ClusterInfo", async () => {
    const other = await startAuthServer({
      backend,
      source,
      clock,
      logger: silentLogger,
      keys: pki.keys,
      cluster: {
        clusterName: "test",
        serverVersion: "0.1.0",
        localLogin: false,
        defaultConnector: "corp",
        localLoginExempt: "alice",
      },
      tls: { certPem: pki.serverCertPem, keyPem: pki.serverKeyPem, clientCaPems: [pki.hostCa.certPem] },
      port: 0,
    });
    const c = createAuthClient({
      address: other.address,
      caPems: [pki.hostCa.certPem],
      serverName: "localhost",
    });
    try {
      await setPassword(backend, "alice", PASSWORD);
      await setPassword(backend, "bob", PASSWORD);
      const st = await statusOf(callUnary(c, "AuthenticateLocal", { username: "bob", password: PASSWORD }));
      expect(st).toEqual({ code: status.PERMISSION_DENIED, details: "password login is disabled" });
      // The first admin (auth.first_admin.user) keeps its password login.
      const admin = await callUnary(c, "AuthenticateLocal", { username: "alice", password: PASSWORD });
      expect(admin.session?.username).toBe("alice");
      const info = await callUnary(c, "GetClusterInfo", {});
      expect(info.local_login).toBe(false);
      expect(info.default_connector).toBe("corp");
      expect((await callUnary(client, "GetClusterInfo", {})).local_login).toBe(true);
    } finally {
      c.close();
      await other.close(2000);
    }
  });
});
