// Single sign-on attacked through the real proxy and auth with real identity providers
// (oidc-provider, SimpleSAMLphp, the GitHub stand-in): login CSRF, CLI flow abuse, connectors
// mixed up, answers altered on their way back, hostile user names and claims, connectors going
// away mid-login, hostile SAML bodies, anonymous callers against a signed-in user, and secrets in
// answers, audit events and logs. Each case asserts the exact refusal and that no session was
// issued. Weaknesses it found were fixed; each test names the bug it caught. The protocol rules of
// each provider are test/sso-oidc.test.ts, test/sso-saml.test.ts and test/sso-github.test.ts;
// the world these attacks run in (providers, connectors, roles) is test/sso-attack-kit.ts.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Connector } from "../core/resources/index.ts";
import { certPrincipals } from "../server/auth/user-cert-content.ts";
import { SSO_COOKIE } from "../server/proxy/sso-cookie.ts";
import { fetchTrusting } from "./harness/idp/fetch.ts";
import type { OidcTestUser } from "./harness/idp/oidc-types.ts";
import { loginAtIdp } from "./harness/saml-idp/saml-idp.ts";
import {
  AttackWorld,
  answers,
  type Browser,
  expectRefused,
  type HttpResponse,
  holdingRelay,
  issuedSession,
  LOOPBACK,
  logOnlySecrets,
  randomSecret,
  s256,
  secrets,
} from "./sso-attack-kit.ts";
import { connectorResource, PASSWORD } from "./sso-fixture.ts";

const oidcUser = (username: string, claims: OidcTestUser["claims"]): OidcTestUser => ({
  username,
  password: `${username}-pw`,
  claims,
});
const OIDC_USERS: OidcTestUser[] = [
  oidcUser("ada", { email: "ada@corp.test", email_verified: true, groups: ["devs"] }),
  oidcUser("mallory", { email: "mallory@corp.test", email_verified: true, groups: ["devs"] }),
  // Through "by-name" (username_claim preferred_username): names a provider account may carry.
  oidcUser("n-upper", { preferred_username: "ALICE", groups: ["devs"] }),
  oidcUser("n-space", { preferred_username: " alice ", groups: ["devs"] }),
  oidcUser("n-cyrillic", { preferred_username: "\u0430da@corp.test", groups: ["devs"] }),
  oidcUser("n-slash", { preferred_username: "ada/../root", groups: ["devs"] }),
  oidcUser("n-control", { preferred_username: "ada\u0000root", groups: ["devs"] }),
  oidcUser("n-newline", { preferred_username: "ada\nroot", groups: ["devs"] }),
  oidcUser("n-zero-width", { preferred_username: "ada\u200b@corp.test", groups: ["devs"] }),
  oidcUser("n-long", { preferred_username: "a".repeat(300), groups: ["devs"] }),
  oidcUser("n-trim", { preferred_username: "bob ", groups: ["devs"] }),
  oidcUser("n-squat", { preferred_username: "ada@corp.test", groups: ["devs"] }),
  oidcUser("eve", {
    preferred_username: "eve",
    email: "eve@corp.test",
    email_verified: false,
    groups: [],
  }),
  // Some providers send email_verified as a string (userinfo of several well-known ones).
  oidcUser("eve-string", {
    email: "eve-string@corp.test",
    email_verified: "false" as unknown as boolean,
    groups: ["devs"],
  }),
  oidcUser("globber", {
    preferred_username: "globber",
    email: "globber@corp.test.evil.example",
    email_verified: true,
    groups: ["xdevs", "devs-evil", "DEVS", "devs ", "*"],
  }),
  oidcUser("big", {
    email: "big@corp.test",
    email_verified: true,
    groups: ["devs", "x".repeat(5000), ...Array.from({ length: 1000 }, (_, i) => `group-${i}`)],
  }),
  oidcUser("ops", { email: "ops@corp.test", email_verified: true, groups: ["ops", "root@prod-1"] }),
];

let w: AttackWorld;
beforeAll(async () => {
  w = await AttackWorld.start(OIDC_USERS);
}, 240_000);
afterAll(async () => {
  await w?.close();
}, 60_000);

const browser = (): Browser => w.browser();
const start = (b: Browser, connector: string) => w.start(b, connector);
const atProvider = (authUrl: string, login: string) => w.atProvider(authUrl, login);
const browserLogin = (b: Browser, connector: string, login: string) => w.browserLogin(b, connector, login);
const sessionOf = async (b: Browser) => (await b.send("/v1/webapi/session")).status;

describe("login CSRF and session fixation", () => {
  it("an attacker's own completed callback replayed in a victim's browser is refused, with or without a login of the victim's in flight", async () => {
    const attacker = browser();
    const query = await atProvider(await start(attacker, "corp-oidc"), "mallory");
    const binding = attacker.cookies.get(SSO_COOKIE) ?? "";
    const fresh = browser();
    expectRefused(
      await fresh.send(`/v1/webapi/sso/callback?${query}`),
      403,
      "access_denied",
      /not started in this browser/,
    );
    const victim = browser();
    await start(victim, "corp-oidc");
    expectRefused(await victim.send(`/v1/webapi/sso/callback?${query}`), 403, "access_denied");
    expect(victim.session).toBeUndefined();
    // Control: the same answer in the attacker's own browser is a login (the refusals were the binding).
    const own = await attacker.send(`/v1/webapi/sso/callback?${query}`);
    expect(own.status, own.text).toBe(302);
    expect(issuedSession(own)).toBe(true);
    // Used once: the same answer again, even with that browser's binding cookie put back, is refused.
    attacker.cookies.set(SSO_COOKIE, binding);
    expectRefused(await attacker.send(`/v1/webapi/sso/callback?${query}`), 401, "not_authenticated");
  });

  it("a victim who opens an attacker's CLI login URL cannot be fed the attacker's own provider code for that state (PKCE, nonce)", async () => {
    const attackerVerifier = randomSecret();
    const started = await browser().send("/v1/webapi/sso/corp-oidc/cli", {
      json: { redirect_url: LOOPBACK, code_challenge: s256(attackerVerifier) },
    });
    const { request_id, login_url } = started.json as { request_id: string; login_url: string };
    const victim = browser();
    const bound = await victim.send(new URL(login_url).pathname);
    expect(bound.status).toBe(302);
    // The attacker asks the provider for a code with the request id as state and PKCE of its own.
    const meta = (await (
      await fetchTrusting(w.oidc.caPem)(`${w.oidc.issuer}/.well-known/openid-configuration`)
    ).json()) as { authorization_endpoint: string };
    const own = new URL(meta.authorization_endpoint);
    for (const [k, v] of Object.entries({
      client_id: "svc",
      redirect_uri: w.callback,
      response_type: "code",
      scope: "openid email profile groups",
      state: request_id,
      nonce: randomSecret(),
      code_challenge: s256(randomSecret()),
      code_challenge_method: "S256",
    }))
      own.searchParams.set(k, v);
    const query = await atProvider(own.toString(), "mallory");
    expect(new URLSearchParams(query).get("state")).toBe(request_id);
    expectRefused(await victim.send(`/v1/webapi/sso/callback?${query}`), 401, "not_authenticated");
    expect(victim.session).toBeUndefined();
  });

  it("the state of a browser login opened as a CLI request cannot be re-bound to another browser", async () => {
    const victim = browser();
    const providerUrl = await start(victim, "corp-oidc");
    const state = new URL(providerUrl).searchParams.get("state") ?? "";
    const attacker = browser();
    const res = await attacker.send(`/v1/webapi/sso/requests/${state}`);
    expectRefused(res, 403, "access_denied", /already opened/);
    // The victim's login is untouched by the attempt.
    const done = await victim.send(`/v1/webapi/sso/callback?${await atProvider(providerUrl, "ada")}`);
    expect(done.status, done.text).toBe(302);
    expect(issuedSession(done)).toBe(true);
  });
});

describe("CLI flow abuse", () => {
  it("a code is traded only with its own request's verifier; a wrong one burns it; the other request is unharmed", async () => {
    const a = await w.cliLogin("mallory");
    const b = await w.cliLogin("ada");
    const exchange = (code: string, code_verifier: string) =>
      browser().send("/v1/webapi/sso/exchange", { json: { code, code_verifier } });
    expectRefused(await exchange(a.code, b.verifier), 401, "not_authenticated");
    expectRefused(await exchange(a.code, a.verifier), 401, "not_authenticated");
    const ok = await exchange(b.code, b.verifier);
    expect(ok.status, ok.text).toBe(200);
    // The CLI's answer carries its session id by design; nowhere else may it appear.
    logOnlySecrets.push((ok.json as { session_id: string }).session_id);
    expectRefused(await exchange(b.code, b.verifier), 401, "not_authenticated");
  });

  // Was a bug: Fastify answered HEAD through the GET route, so a link checker bound the request.
  it("a HEAD of the CLI login URL (link checkers, previews) does not take it from the user who opens it", async () => {
    const started = await browser().send("/v1/webapi/sso/corp-oidc/cli", {
      json: { redirect_url: LOOPBACK, code_challenge: s256(randomSecret()) },
    });
    const path = new URL((started.json as { login_url: string }).login_url).pathname;
    const head = await browser().send(path, { method: "HEAD" });
    expect(head.status).not.toBe(302);
    const user = await browser().send(path);
    expect(user.status, user.text).toBe(302);
  });

  it("a CLI request no browser opened cannot be finished at the callback", async () => {
    const started = await browser().send("/v1/webapi/sso/corp-oidc/cli", {
      json: { redirect_url: LOOPBACK, code_challenge: s256(randomSecret()) },
    });
    const { request_id } = started.json as { request_id: string };
    const b = browser();
    await start(b, "corp-oidc"); // a binding cookie of its own
    expectRefused(
      await b.send(`/v1/webapi/sso/callback?code=${randomSecret()}&state=${request_id}`),
      403,
      "access_denied",
    );
  });

  it("the callback of a CLI request brought by another browser than the one that opened it is refused", async () => {
    const started = await browser().send("/v1/webapi/sso/corp-oidc/cli", {
      json: { redirect_url: LOOPBACK, code_challenge: s256(randomSecret()) },
    });
    const opener = browser();
    const opened = await opener.send(new URL((started.json as { login_url: string }).login_url).pathname);
    const query = await atProvider(String(opened.headers.location), "ada");
    const other = browser();
    await start(other, "corp-oidc");
    expectRefused(await other.send(`/v1/webapi/sso/callback?${query}`), 403, "access_denied");
  });

  const lookAlikes = [
    "http://localhost.:8080/callback",
    "http://127.0.0.1:0/callback",
    "http://127.0.0.1:65536/callback",
    "http://[::ffff:127.0.0.1]:8080/callback",
    "http://[0:0:0:0:0:0:0:1]:8080/callback",
    "http://127.0.0.1:8080/cb#",
    "HTTP://127.0.0.1:8080/callback",
    "http://127.0.0.1:+8080/callback",
    "http://127.0.0.1:8080\t/callback",
    "http://%31%32%37.0.0.1:8080/callback",
    "http://127.0.0.1%2F@evil.example:8080/",
    "http://127。0。0。1:8080/callback",
  ];
  it("refuses loopback look-alikes as the CLI's redirect (400)", async () => {
    for (const redirect_url of lookAlikes) {
      const res = await browser().send("/v1/webapi/sso/corp-oidc/cli", {
        json: { redirect_url, code_challenge: s256(randomSecret()) },
      });
      expect([res.status, redirect_url]).toEqual([400, redirect_url]);
      expect((res.json as { error: { code: string } }).error.code).toBe("bad_parameter");
    }
  });
});

describe("races", () => {
  it("of two browsers opening the same CLI login URL at once, exactly one goes on to the provider", async () => {
    const started = await browser().send("/v1/webapi/sso/corp-oidc/cli", {
      json: { redirect_url: LOOPBACK, code_challenge: s256(randomSecret()) },
    });
    const path = new URL((started.json as { login_url: string }).login_url).pathname;
    const opened = await Promise.all(Array.from({ length: 6 }, () => browser().send(path)));
    expect(opened.filter((r) => r.status === 302)).toHaveLength(1);
    // The others: "already opened" (403), or the compare-and-swap lost to the winner (401).
    for (const r of opened.filter((r) => r.status !== 302)) {
      expect([401, 403]).toContain(r.status);
      expectRefused(r, r.status, r.status === 401 ? "not_authenticated" : "access_denied", /already opened/);
    }
  });

  it("the same answer brought twice at once by its own browser makes one session", async () => {
    const b = browser();
    const query = await atProvider(await start(b, "corp-oidc"), "ada");
    const cookie = b.cookies.get(SSO_COOKIE) ?? "";
    const twin = browser();
    twin.cookies.set(SSO_COOKIE, cookie);
    const [x, y] = await Promise.all([
      b.send(`/v1/webapi/sso/callback?${query}`),
      twin.send(`/v1/webapi/sso/callback?${query}`),
    ]);
    expect([x, y].filter(issuedSession)).toHaveLength(1);
    const loser = issuedSession(x) ? y : x;
    expectRefused(loser, 401, "not_authenticated");
  });

  it("one code traded twice at once makes one session", async () => {
    const { code, verifier } = await w.cliLogin("mallory");
    const trades = await Promise.all(
      Array.from({ length: 4 }, () =>
        browser().send("/v1/webapi/sso/exchange", { json: { code, code_verifier: verifier } }),
      ),
    );
    const ok = trades.filter((r) => r.status === 200);
    expect(ok).toHaveLength(1);
    logOnlySecrets.push((ok[0]?.json as { session_id?: string } | undefined)?.session_id ?? "");
    for (const r of trades.filter((r) => r.status !== 200)) expectRefused(r, 401, "not_authenticated");
  });
});

describe("connectors mixed up", () => {
  it("an OIDC request's state at the SAML ACS, with a genuine SAML response, is refused; that response still works for its own request", async () => {
    const o = browser();
    const oState = new URL(await start(o, "corp-oidc")).searchParams.get("state") ?? "";
    const s = browser();
    const posted = await loginAtIdp(await start(s, "corp-saml"), "linus", "linus-pw");
    secrets.add(posted.samlResponse.slice(200, 260));
    // The OIDC browser's cookie with the OIDC state, the SAML provider's answer.
    const mixed = await o.send("/v1/webapi/sso/saml/acs", {
      form: { SAMLResponse: posted.samlResponse, RelayState: oState },
    });
    expectRefused(mixed, 400, "bad_parameter");
    const own = await s.send("/v1/webapi/sso/saml/acs", {
      form: { SAMLResponse: posted.samlResponse, RelayState: posted.relayState },
    });
    expect(own.status, own.text).toBe(302);
    expect(issuedSession(own)).toBe(true);
  });

  it("a SAML request's RelayState at the OIDC callback with a genuine OIDC code is refused", async () => {
    const s = browser();
    const relay = new URL(await start(s, "corp-saml")).searchParams.get("RelayState") ?? "";
    const query = new URLSearchParams(await atProvider(await start(browser(), "corp-oidc"), "mallory"));
    query.set("state", relay);
    const res = await s.send(`/v1/webapi/sso/callback?${query}`);
    expect([400, 401]).toContain(res.status);
    expectRefused(res, res.status, res.status === 400 ? "bad_parameter" : "not_authenticated");
  });

  it("a GitHub request's state with the OpenID provider's code, and the reverse, are refused", async () => {
    const g = browser();
    const gState = new URL(await start(g, "gh")).searchParams.get("state") ?? "";
    const oidcQuery = new URLSearchParams(await atProvider(await start(browser(), "corp-oidc"), "mallory"));
    oidcQuery.set("state", gState);
    oidcQuery.delete("iss");
    expectRefused(await g.send(`/v1/webapi/sso/callback?${oidcQuery}`), 401, "not_authenticated");

    const o = browser();
    const oState = new URL(await start(o, "corp-oidc")).searchParams.get("state") ?? "";
    const ghQuery = new URLSearchParams(await atProvider(await start(browser(), "gh"), "octo"));
    ghQuery.set("state", oState);
    expectRefused(await o.send(`/v1/webapi/sso/callback?${ghQuery}`), 401, "not_authenticated");
  });
});

describe("a genuine answer altered on its way back", () => {
  const altered: Array<[string, (q: URLSearchParams, other: string) => void]> = [
    ["another issuer (mix-up)", (q) => q.set("iss", "https://idp.evil.example")],
    ["no issuer although the provider sends one", (q) => q.delete("iss")],
    ["a second state", (q, other) => q.append("state", other)],
    ["a second code", (q) => q.append("code", randomSecret())],
    ["an error next to the code", (q) => q.set("error", "access_denied")],
  ];
  for (const [what, alter] of altered) {
    it(`${what}: refused, nothing issued`, async () => {
      const b = browser();
      const query = new URLSearchParams(await atProvider(await start(b, "corp-oidc"), "ada"));
      const other = new URL(await start(browser(), "corp-oidc")).searchParams.get("state") ?? "";
      alter(query, other);
      const res = await b.send(`/v1/webapi/sso/callback?${query}`);
      expect([400, 401], res.text).toContain(res.status);
      expectRefused(res, res.status, res.status === 400 ? "bad_parameter" : "not_authenticated");
    });
  }
});

describe("user names from the provider", () => {
  const cases: Array<[string, RegExp]> = [
    ["n-upper", /alice is a local user/],
    // White space is refused, never trimmed into the local name.
    ["n-space", /not usable/],
    ["n-cyrillic", /not usable/],
    ["n-slash", /not usable/],
    ["n-control", /not usable/],
    ["n-newline", /not usable/],
    ["n-zero-width", /not usable/],
    ["n-long", /not usable/],
  ];
  for (const [login, why] of cases) {
    it(`refuses ${login}'s name (403), issues nothing and audits the refusal`, async () => {
      const res = await browserLogin(browser(), "by-name", login);
      expectRefused(res, 403, "access_denied", why);
      // The refusal does not echo the hostile name back.
      expect(res.text).not.toMatch(/\u0430|\u200b|\\u0000|root|aaaaaaaa/);
    });
  }

  // Was a bug: ssoUserName trimmed the provider's value, so "bob " and "bob" became one user.
  it("refuses a name with surrounding white space rather than rewriting it", async () => {
    expectRefused(await browserLogin(browser(), "by-name", "n-trim"), 403, "access_denied", /not usable/);
  });

  it("refusals naming a local user neither throttle nor lock that user's password login", async () => {
    // More than auth's 5 failures per name (login throttling): SSO refusals are not password failures.
    for (let i = 0; i < 6; i++)
      expectRefused(await browserLogin(browser(), "by-name", "n-upper"), 403, "access_denied");
    // Not through a recorded Browser: this answer carries its session id by design.
    const res = await w.platform.client.send({
      method: "POST",
      path: "/v1/webapi/login",
      body: { username: "alice", password: PASSWORD },
    });
    expect(res.status, res.text).toBe(200);
  });
});

describe("claims and mapping", () => {
  it("a glob or exact rule matches only what it says: near-misses of 'devs' and '*@corp.test' map to no role", async () => {
    expectRefused(await browserLogin(browser(), "by-name", "globber"), 403, "access_denied", /no role maps/);
  });

  // Was a bug: an unverified email granted roles through an email rule when the name came from another claim.
  it("an address the provider has not verified maps to no role, whatever names the user", async () => {
    expectRefused(await browserLogin(browser(), "by-name", "eve"), 403, "access_denied");
  });

  // Was a bug: email_verified "false" (a string) passed as verified.
  it('an address marked unverified with the string "false" is not a user name', async () => {
    const res = await browserLogin(browser(), "corp-oidc", "eve-string");
    if (res.status === 302) {
      // The provider did send the string: it is among the user's traits now.
      const record = await w.platform.backend.get("sso-users/eve-string@corp.test");
      expect((record.value as { traits: Record<string, string[]> }).traits["email_verified"]).toEqual([
        "false",
      ]);
    }
    expectRefused(res, 403, "access_denied", /not verified/);
  });

  // Was a bug: a templated login "root@prod-1" from a group became a plain principal an agentless node accepted.
  it("a group value cannot smuggle an agentless node's principal through {{external.groups}}", async () => {
    const res = await browserLogin(browser(), "corp-oidc", "ops");
    expect(res.status, res.text).toBe(302);
    const checker = w.platform.auth.service.checkerFor("ops@corp.test");
    expect(checker).toBeDefined();
    const nodes = [
      { id: "prod-1", hostname: "prod", labels: { env: "prod" }, agentless: true },
      { id: "dev-1", hostname: "dev", labels: { env: "dev" }, agentless: true },
    ];
    const principals = certPrincipals(checker as NonNullable<typeof checker>, nodes);
    expect(principals).toContain("ops@dev-1");
    expect(principals).not.toContain("root@prod-1");
  });
});

describe("very large claims", () => {
  it("signs in with 1,000 groups and a 5,000-character value, keeping at most 256 values of at most 1,024 characters", async () => {
    const res = await browserLogin(browser(), "corp-oidc", "big");
    expect(res.status, res.text).toBe(302);
    expect(issuedSession(res)).toBe(true);
    const record = (await w.platform.backend.get("sso-users/big@corp.test")).value as {
      traits: Record<string, string[]>;
    };
    const groups = record.traits["groups"] ?? [];
    expect(groups.length).toBeLessThanOrEqual(256);
    expect(groups).toContain("devs");
    expect(Math.max(...groups.map((g) => g.length))).toBeLessThanOrEqual(1024);
    expect(JSON.stringify(record).length).toBeLessThan(64 * 1024);
  });
});

describe("anonymous callers against a signed-in user", () => {
  it("cannot sign out or lock out an SSO user through the SSO routes", async () => {
    const ada = browser();
    const first = await browserLogin(ada, "corp-oidc", "ada");
    expect(first.status, first.text).toBe(302);
    expect(await sessionOf(ada)).toBe(200);
    const anon = browser();
    for (let i = 0; i < 5; i++) {
      await anon.send(`/v1/webapi/sso/callback?code=${randomSecret()}&state=${randomSecret()}`);
      await anon.send(`/v1/webapi/sso/callback?error=access_denied&state=${randomSecret()}`);
      await anon.send("/v1/webapi/sso/exchange", {
        json: { code: randomSecret(), code_verifier: randomSecret() },
      });
      await anon.send(`/v1/webapi/sso/requests/${randomSecret()}`);
      await anon.send("/v1/webapi/sso/saml/acs", {
        form: { SAMLResponse: "PHg+", RelayState: randomSecret() },
      });
      await anon.send("/v1/webapi/logout", { json: {} });
    }
    expect(anon.session).toBeUndefined();
    // Someone at the provider naming themselves ada@corp.test through another connector is refused
    // while ada's sessions live, and ends none of them.
    const squat = await browserLogin(browser(), "by-name", "n-squat");
    expectRefused(squat, 403, "access_denied", /another connector/);
    expect(await sessionOf(ada)).toBe(200);
    // And ada signs in again.
    const again = await browserLogin(browser(), "corp-oidc", "ada");
    expect(again.status, again.text).toBe(302);
    expect(issuedSession(again)).toBe(true);
  });
});

describe("a connector that stops being usable mid-login", () => {
  const withReady = (status: "True" | "False"): Connector => ({
    ...w.tmpConnector,
    status: {
      conditions: [
        {
          type: "Ready",
          status,
          reason: status === "True" ? "Ready" : "SecretMissing",
          message: "",
          lastTransitionTime: new Date().toISOString(),
        },
      ],
    },
  });

  it("not Ready: the start is 412; a login already at the provider is refused at the callback (412)", async () => {
    await w.platform.source.apply(withReady("False"));
    expectRefused(await browser().send("/v1/webapi/sso/tmp-oidc/login"), 412, "precondition_failed");
    await w.platform.source.apply(withReady("True"));
    const b = browser();
    const url = await start(b, "tmp-oidc");
    const query = await atProvider(url, "ada");
    await w.platform.source.apply(withReady("False"));
    expectRefused(await b.send(`/v1/webapi/sso/callback?${query}`), 412, "precondition_failed");
    await w.platform.source.apply(withReady("True"));
  });

  it("deleted: a login already at the provider is refused at the callback (404)", async () => {
    const b = browser();
    const query = await atProvider(await start(b, "tmp-oidc"), "mallory");
    await w.platform.source.remove("Connector", "tmp-oidc");
    expectRefused(await b.send(`/v1/webapi/sso/callback?${query}`), 404, "not_found");
    expectRefused(await browser().send("/v1/webapi/sso/tmp-oidc/login"), 404, "not_found");
  });
});

describe("a connector deleted while auth waits on its provider", () => {
  // Was a bug: the flow used the Connector read before the provider round trip, so a deletion meanwhile still yielded a session.
  it("issues no session once the connector is gone", async () => {
    const relay = await holdingRelay(Number(new URL(w.github.apiUrl).port));
    try {
      await w.platform.source.apply(
        connectorResource("gh-slow", {
          type: "github",
          display_name: "GitHub (slow API)",
          settings: {
            client_id: "svc-gh",
            redirect_url: w.callback,
            endpoint_url: w.github.url,
            api_endpoint_url: `https://127.0.0.1:${relay.port}/api/v3`,
          },
          client_secret_ref: { file: w.githubSecretFile },
          claims_to_roles: [{ claim: "orgs", value: "acme", roles: ["access"] }],
        }) as Connector,
      );
      const b = browser();
      const query = await atProvider(await start(b, "gh-slow"), "octo");
      relay.hold();
      const answer = b.send(`/v1/webapi/sso/callback?${query}`);
      await relay.held();
      await w.platform.source.remove("Connector", "gh-slow");
      await new Promise((r) => setTimeout(r, 300));
      relay.release();
      const res = await answer;
      expect(issuedSession(res), res.text).toBe(false);
      expect([401, 403, 404]).toContain(res.status);
      expect(await sessionOf(b)).toBe(401);
    } finally {
      await relay.close();
    }
  });
});

describe("hostile bodies at the SAML ACS", () => {
  const laughs = [
    '<?xml version="1.0"?><!DOCTYPE r [<!ENTITY l0 "lol">',
    ...Array.from({ length: 9 }, (_, i) => `<!ENTITY l${i + 1} "${`&l${i};`.repeat(10)}">`),
    ']><samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" ID="_x" Version="2.0">&l9;</samlp:Response>',
  ].join("");
  const bodies: Array<[string, string]> = [
    ["entity expansion (billion laughs)", Buffer.from(laughs).toString("base64")],
    [
      "25,000 nested elements",
      Buffer.from(`${"<a>".repeat(25_000)}${"</a>".repeat(25_000)}`).toString("base64"),
    ],
    ["not base64", "%%%%not-base64%%%%"],
    ["base64 of no XML", Buffer.from("\u0000\u0001 plain text, not XML \uffff").toString("base64")],
    [
      "an external entity",
      Buffer.from('<!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]><r>&x;</r>').toString("base64"),
    ],
  ];
  for (const [what, SAMLResponse] of bodies) {
    it(`${what}: a clear 4xx within 5 s, nothing issued`, async () => {
      const b = browser();
      const relay = new URL(await start(b, "corp-saml")).searchParams.get("RelayState") ?? "";
      const t0 = performance.now();
      const res = await b.send("/v1/webapi/sso/saml/acs", { form: { SAMLResponse, RelayState: relay } });
      expect(performance.now() - t0).toBeLessThan(5_000);
      expect([400, 401], res.text).toContain(res.status);
      expectRefused(res, res.status, res.status === 400 ? "bad_parameter" : "not_authenticated");
      expect(res.text).not.toContain("root:");
    });
  }

  it("the proxy and auth still answer, and a genuine SAML login works", async () => {
    expect((await browser().send("/v1/webapi/ping")).status).toBe(200);
    const s = browser();
    const posted = await loginAtIdp(await start(s, "corp-saml"), "linus", "linus-pw");
    const res = await s.send("/v1/webapi/sso/saml/acs", {
      form: { SAMLResponse: posted.samlResponse, RelayState: posted.relayState },
    });
    expect(res.status, res.text).toBe(302);
  });
});

describe("malformed input anywhere", () => {
  it("every SSO route answers malformed input with a 4xx, never a 5xx, and issues nothing", async () => {
    const b = browser();
    await start(b, "corp-oidc");
    const state = randomSecret();
    const hostile = [
      "",
      "%00",
      "%ff%fe",
      "..%2f..%2f",
      "a".repeat(600),
      "\u202e",
      "<x>",
      "' OR 1=1",
      "__proto__",
    ];
    const tries: Array<() => Promise<HttpResponse>> = [];
    for (const v of hostile) {
      const e = encodeURIComponent(v);
      tries.push(
        () => b.send(`/v1/webapi/sso/callback?state=${e}&code=${e}`),
        () => b.send(`/v1/webapi/sso/callback?state=${state}&code=${e}&iss=${e}`),
        () => b.send(`/v1/webapi/sso/callback?state=${e}&error=${e}&error_description=${e}`),
        () => b.send(`/v1/webapi/sso/callback?${e}`),
        () => b.send(`/v1/webapi/sso/requests/${e}`),
        () => b.send(`/v1/webapi/sso/corp-oidc/login?redirect_url=${e}`),
        () => b.send(`/v1/webapi/sso/${e}/login`),
        () => b.send("/v1/webapi/sso/saml/acs", { form: { SAMLResponse: v || "x", RelayState: v || "x" } }),
        () => b.send("/v1/webapi/sso/exchange", { json: { code: v, code_verifier: v } }),
        () => b.send("/v1/webapi/sso/corp-oidc/cli", { json: { redirect_url: v, code_challenge: v } }),
      );
    }
    for (const body of ["{", "[]", "null", '{"code":1,"code_verifier":{}}', '{"__proto__":{"x":1}}']) {
      tries.push(() =>
        w.platform.client.send({
          method: "POST",
          path: "/v1/webapi/sso/exchange",
          headers: { "content-type": "application/json" },
          raw: body,
        }),
      );
    }
    for (const attempt of tries) {
      const res = await attempt();
      expect(res.status, res.text).toBeGreaterThanOrEqual(400);
      expect(res.status, res.text).toBeLessThan(500);
      expect(issuedSession(res)).toBe(false);
    }
  });
});

describe("secrets", () => {
  it("the public connector view names connectors and nothing of their settings or secrets", async () => {
    const res = await browser().send("/v1/webapi/connectors/public");
    expect(res.status).toBe(200);
    for (const c of (res.json as { items: Record<string, unknown>[] }).items)
      expect(Object.keys(c).sort()).toEqual(["display_name", "name", "type"]);
    expect(res.text).not.toMatch(/secret|client_id|issuer|sso_url|BEGIN/);
  });

  it("no answer body, audit event or log line of this whole run holds a secret, code, session or cookie value", async () => {
    const audit = await w.platform.backend.searchAudit({ type: "user.login", limit: 500, offset: 0 });
    const events = JSON.stringify(audit);
    expect(audit.items.length).toBeGreaterThan(10);
    // The capture works: the refusals of this run were logged.
    expect(w.logs.lines.some((l) => l.includes('"code":"access_denied"'))).toBe(true);
    // No token or assertion of any provider, whatever its value.
    const jwt = /eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}/;
    const assertion = /Assertion|PHNhbWw|SAMLResponse=/;
    for (const text of [events, ...w.logs.lines, ...answers.map((a) => a.text)]) {
      expect(text).not.toMatch(jwt);
      expect(text).not.toMatch(assertion);
    }
    // Bodies only: the binding and session cookies travel in Set-Cookie, a CLI's code in the
    // Location to its loopback listener, by design.
    const bodies = answers.map((a) => a.text);
    for (const secret of [...secrets, ...logOnlySecrets]) {
      if (secret.length < 16) continue;
      expect(events.includes(secret), "an audit event holds a secret").toBe(false);
      expect(
        w.logs.lines.some((l) => l.includes(secret)),
        "a log line holds a secret",
      ).toBe(false);
    }
    for (const secret of secrets) {
      if (secret.length < 16) continue;
      expect(
        bodies.some((b) => b.includes(secret)),
        "an answer body holds a secret",
      ).toBe(false);
    }
  });
});
