// Single sign-on end to end in headless Chromium against identity providers not written here:
// oidc-provider (its own process and login page), SimpleSAMLphp (Debian, its own login page) and
// the GitHub stand-in. Each test clicks the connector's button on our sign-in page, signs in at
// the provider, and ends on the console with a session whose roles come from the connector's
// mapping. A role requiring MFA leads to the WebAuthn step (Chromium's virtual authenticator).
import { randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium, type RunningChromium } from "./harness/chromium.ts";
import { authorizeAtGithub, type RunningGithubStandIn, startGithubStandIn } from "./harness/idp/github.ts";
import { loginAtOidcProvider, type RunningOidcProvider, startOidcProvider } from "./harness/idp/oidc.ts";
import { freePort } from "./harness/ports.ts";
import { type RunningSamlIdp, startSamlIdp } from "./harness/saml-idp/saml-idp.ts";
import {
  addVirtualAuthenticator,
  connectorResource,
  enrolSecurityKey,
  PASSWORD,
  PUBLIC_HOST,
  roleResource,
  type SsoPlatform,
  startSsoPlatform,
  userResource,
} from "./sso-fixture.ts";

let platform: SsoPlatform;
let oidc: RunningOidcProvider;
let github: RunningGithubStandIn;
let saml: RunningSamlIdp;
let chrome: RunningChromium;
let dir: string;
const pageErrors: string[] = [];
const OIDC_SECRET = randomBytes(16).toString("hex");
const GITHUB_SECRET = randomBytes(16).toString("hex");

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "svc-sso-browser-"));
  const port = await freePort();
  const origin = `https://${PUBLIC_HOST}:${port}`;
  const callback = `${origin}/v1/webapi/sso/callback`;
  const spEntityId = `${origin}/v1/webapi/sso/corp-saml/saml/metadata`;
  const acsUrl = `${origin}/v1/webapi/sso/saml/acs`;
  [oidc, github, saml] = await Promise.all([
    startOidcProvider({
      clients: [{ client_id: "svc", client_secret: OIDC_SECRET, redirect_uris: [callback] }],
      users: [
        {
          username: "ada",
          password: "ada-pw",
          claims: { email: "ada@corp.test", email_verified: true, groups: ["devs"] },
        },
        {
          username: "grace",
          password: "grace-pw",
          claims: { email: "grace@corp.test", email_verified: true, groups: ["devs", "secure"] },
        },
      ],
    }),
    startGithubStandIn({
      apps: [{ client_id: "svc-gh", client_secret: GITHUB_SECRET, callback_url: callback }],
      users: [
        {
          login: "octo",
          password: "octo-pw",
          id: 4242,
          email: "octo@corp.test",
          orgs: [{ login: "acme", teams: ["devs"] }],
        },
      ],
    }),
    startSamlIdp({
      spEntityId,
      acsUrl,
      users: [
        {
          username: "linus",
          password: "linus-pw",
          attributes: { uid: ["linus"], groups: ["engineering"], email: ["linus@corp.test"] },
        },
      ],
    }),
  ]);
  const oidcSecret = join(dir, "oidc-secret");
  const githubSecret = join(dir, "github-secret");
  await writeFile(oidcSecret, OIDC_SECRET, { mode: 0o600 });
  await writeFile(githubSecret, GITHUB_SECRET, { mode: 0o600 });
  platform = await startSsoPlatform({
    proxyPort: port,
    providersCaPem: `${oidc.caPem}\n${github.caPem}`,
    rateLimit: { perAddress: 1000, perUsername: 1000, windowMs: 60_000 },
    passwordUsers: ["mia"],
    resources: [
      userResource("mia", ["access", "mfa"]),
      roleResource("mfa", {
        allow: { logins: ["{{external.email}}"], node_labels: { "*": "*" } },
        options: { require_mfa: true },
      }),
      connectorResource("corp-oidc", {
        type: "oidc",
        display_name: "Corp OIDC",
        settings: {
          client_id: "svc",
          issuer_url: oidc.issuer,
          redirect_url: callback,
          scopes: ["openid", "email", "profile", "groups"],
        },
        client_secret_ref: { file: oidcSecret },
        claims_to_roles: [
          { claim: "groups", value: "devs", roles: ["access"] },
          { claim: "groups", value: "secure", roles: ["mfa"] },
        ],
      }),
      connectorResource("gh", {
        type: "github",
        display_name: "GitHub",
        settings: {
          client_id: "svc-gh",
          redirect_url: callback,
          endpoint_url: github.url,
          api_endpoint_url: github.apiUrl,
        },
        client_secret_ref: { file: githubSecret },
        claims_to_roles: [{ claim: "teams", value: "acme/*", roles: ["access"] }],
      }),
      connectorResource("corp-saml", {
        type: "saml",
        display_name: "Corp SAML",
        settings: {
          entity_id: spEntityId,
          acs_url: acsUrl,
          sso_url: saml.ssoUrl,
          idp_certificate: saml.certPem,
        },
        claims_to_roles: [{ claim: "groups", value: "engineering", roles: ["access"] }],
      }),
    ],
  });
  chrome = await launchChromium({ loopbackHosts: [PUBLIC_HOST], ignoreHTTPSErrors: true });
}, 240_000);

afterAll(async () => {
  await chrome?.close();
  await platform?.close();
  await Promise.all([oidc?.stop(), github?.stop(), saml?.stop()]);
  if (dir) await rm(dir, { recursive: true, force: true });
}, 60_000);

async function newPage(): Promise<Page> {
  const page = await chrome.context.newPage();
  page.on("pageerror", (e) => pageErrors.push(e.message));
  page.on("console", (m) => {
    // The session probe's 401 before login and a missing favicon are expected.
    if (m.type() === "error" && !m.text().startsWith("Failed to load resource")) pageErrors.push(m.text());
  });
  return page;
}

/** From the console's address to our sign-in page, then a click on the connector's button. */
async function startAt(page: Page, connector: string, next?: string): Promise<void> {
  await page.context().clearCookies();
  if (next !== undefined)
    await page.goto(`${platform.publicOrigin}/web/login?next=${encodeURIComponent(next)}`);
  else {
    await page.goto(`${platform.publicOrigin}/web/`);
    await page.waitForURL(/\/web\/login\?next=/, { timeout: 30_000 });
  }
  const button = page.locator(`a.connector[data-connector="${connector}"]`);
  await button.waitFor({ timeout: 15_000 });
  await button.click();
}

/** Signed in on the console: the page shows the user, and the session cookie works for the API. */
async function expectConsole(page: Page, user: string, roles: string[]): Promise<void> {
  await page.waitForURL((u) => u.origin === platform.publicOrigin && u.pathname === "/web/nodes", {
    timeout: 30_000,
  });
  await page.waitForSelector("#user:not(:empty)", { timeout: 30_000 });
  expect(await page.textContent("#user")).toContain(user);
  const session = await page.evaluate(async () => (await fetch("/v1/webapi/session")).json());
  expect(session).toMatchObject({ username: user, scope: "full" });
  expect([...(session as { roles: string[] }).roles].sort()).toEqual([...roles].sort());
}

describe("single sign-on in Chromium", () => {
  it("shows a button per connector and signs in through OIDC on the provider's own page", async () => {
    const page = await newPage();
    await startAt(page, "corp-oidc");
    expect(new URL(page.url()).origin).toBe(new URL(oidc.issuer).origin);
    await loginAtOidcProvider(page, "ada", "ada-pw");
    await expectConsole(page, "ada@corp.test", ["access"]);
    // The binding cookie is gone; the session cookies are the password login's.
    const cookies = await page.context().cookies(platform.publicOrigin);
    expect(cookies.map((c) => c.name).sort()).toEqual(["__Host-svc_csrf", "__Host-svc_session"]);
    await page.close();
  }, 120_000);

  it("signs in through SAML on SimpleSAMLphp's own page", async () => {
    const page = await newPage();
    await startAt(page, "corp-saml");
    await page.waitForSelector("#username", { timeout: 15_000 });
    await page.fill("#username", "linus");
    await page.fill("#password", "linus-pw");
    await page.click("#submit_button");
    await expectConsole(page, "linus", ["access"]);
    await page.close();
  }, 120_000);

  it("signs in through GitHub (the stand-in's authorize page)", async () => {
    const page = await newPage();
    await startAt(page, "gh");
    await authorizeAtGithub(page, "octo", "octo-pw");
    await expectConsole(page, "octo", ["access"]);
    await page.close();
  }, 120_000);

  it("a refusal at the provider comes back as a page that says so, with the way back to sign in", async () => {
    const page = await newPage();
    await startAt(page, "corp-oidc");
    await page.locator("form#abort button").click();
    await page.waitForSelector("#sso-error", { timeout: 30_000 });
    expect(await page.textContent("#sso-error")).toMatch(/access_denied/);
    await page.click("#back");
    await page.waitForURL(/\/web\/login/, { timeout: 15_000 });
    expect(await page.textContent("#error")).toMatch(/Single sign-on failed: .*access_denied/);
    await page.close();
  }, 120_000);

  it("a role requiring MFA: enrol a key, then the next SSO sign-in asks for it on our page", async () => {
    const page = await newPage();
    await addVirtualAuthenticator(page);
    // First sign-in: no device yet, so a session that may only enrol one.
    await startAt(page, "corp-oidc");
    await loginAtOidcProvider(page, "grace", "grace-pw");
    await page.waitForURL((u) => u.origin === platform.publicOrigin, { timeout: 30_000 });
    const enrolled = await enrolSecurityKey(page);
    expect(enrolled).toEqual({ scope: "mfa_enrollment", status: 201 });

    // Next sign-in (startAt cleared the provider's cookies too): our page runs the WebAuthn step,
    // then goes on to the page the sign-in started from.
    await startAt(page, "corp-oidc", "/web/?from=sso");
    await loginAtOidcProvider(page, "grace", "grace-pw");
    await expectConsole(page, "grace@corp.test", ["access", "mfa"]);
    const view = await page.evaluate(async () => (await fetch("/v1/webapi/session")).json());
    expect(view).toMatchObject({ mfa_verified: true });
    // The MFA token travelled in the fragment only and was taken off the address bar.
    expect(page.url()).not.toContain("sso_mfa");
    expect(new URL(page.url()).search).toBe("?from=sso");
    await page.close();
  }, 180_000);

  it("a password user with a security key: the page now runs the WebAuthn step itself", async () => {
    const page = await newPage();
    await addVirtualAuthenticator(page);
    const signIn = async () => {
      await page.context().clearCookies();
      await page.goto(`${platform.publicOrigin}/web/login`);
      await page.fill("#username", "mia");
      await page.fill("#password", PASSWORD);
      await page.click("#submit");
    };
    await signIn();
    // Roles requiring MFA and no key yet: the console's account page, where the key is added.
    await page.waitForURL((u) => u.pathname === "/web/account", { timeout: 30_000 });
    expect(await enrolSecurityKey(page)).toEqual({ scope: "mfa_enrollment", status: 201 });
    await signIn();
    await expectConsole(page, "mia", ["access", "mfa"]);
    expect(await page.evaluate(async () => (await fetch("/v1/webapi/session")).json())).toMatchObject({
      mfa_verified: true,
    });
    await page.close();
  }, 120_000);

  it("the pages raised no script errors", () => {
    expect(pageErrors).toEqual([]);
  });
});
