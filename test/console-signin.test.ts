// Sign-in on the console as a person does it in Chromium, against the real platform: a password,
// the WebAuthn step through Chromium's virtual authenticator (DevTools WebAuthn domain), a first
// key enrolled when the roles require MFA, the throttling message, an SSO refusal coming back,
// the session's end sending the user to sign-in and back to the same page, a session whose roles
// grant nothing, and the one-time reset page. Screenshots at both sizes and axe on each page.
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { API_VERSION } from "../core/resources/index.ts";
import {
  type ConsolePlatform,
  expectAccessible,
  expectKeyboardReachable,
  launchConsoleBrowser,
  PASSWORD,
  shoot,
  signIn,
  startConsolePlatform,
  watchPage,
} from "./console-kit.ts";
import type { RunningChromium } from "./harness/chromium.ts";
import { addVirtualAuthenticator, enrolSecurityKey } from "./sso-fixture.ts";

let platform: ConsolePlatform;
let chrome: RunningChromium;

beforeAll(async () => {
  [platform, chrome] = await Promise.all([startConsolePlatform(), launchConsoleBrowser()]);
  const source = platform.fx.env.source;
  await source.apply({
    apiVersion: API_VERSION,
    kind: "Role",
    metadata: { name: "mfa" },
    spec: {
      allow: { logins: ["{{internal.logins}}"], node_labels: { "*": "*" } },
      options: { require_mfa: true },
    },
  } as never);
  for (const [name, roles] of [
    ["mia", ["access", "mfa"]],
    ["kim", ["access"]],
    ["nora", []],
  ] as const) {
    await source.apply({
      apiVersion: API_VERSION,
      kind: "User",
      metadata: { name },
      spec: { roles: [...roles], traits: { logins: [name] } },
    } as never);
    await platform.setPassword(name);
  }
}, 240_000);

afterAll(async () => {
  await chrome?.close();
  await platform?.close();
}, 60_000);

async function freshPage(): Promise<{ page: Page; problems: string[] }> {
  await chrome.context.clearCookies();
  const page = await chrome.context.newPage();
  return { page, problems: watchPage(page) };
}

describe("console sign-in", () => {
  it("a password: from a page without a session to sign-in and back to that page, the shell shows who", async () => {
    const { page, problems } = await freshPage();
    await page.goto(`${platform.origin}/web/audit?type=session.start`);
    await page.waitForURL(/\/web\/login\?next=/, { timeout: 30_000 });
    expect(new URL(page.url()).searchParams.get("next")).toBe("/web/audit?type=session.start");
    // A first visit is not an ended session.
    expect(await page.isVisible("#expired")).toBe(false);
    await page.waitForSelector("#username");
    await expectAccessible(page);
    await expectKeyboardReachable(page, ["#username", "#password", "#submit"]);
    await shoot(page, "signin");

    await page.fill("#username", "dave");
    await page.fill("#password", "not the password");
    await page.click("#submit");
    await expect.poll(() => page.textContent("#error")).toMatch(/invalid username or password/);
    expect(new URL(page.url()).pathname).toBe("/web/login");
    await shoot(page, "signin-wrong-password");

    await page.fill("#password", PASSWORD);
    await page.press("#password", "Enter");
    await page.waitForURL((u) => u.pathname === "/web/audit", { timeout: 30_000 });
    expect(new URL(page.url()).search).toBe("?type=session.start");
    await page.waitForSelector("#user:not(:empty)");
    expect(await page.textContent("#user")).toBe("dave");
    expect(await page.textContent("#roles")).toContain("access");
    expect(await page.textContent(".session-expiry")).toMatch(/Session ends in (11|12) hours/);
    await shoot(page, "shell");
    expect(problems).toEqual([]);
    await page.close();
  }, 120_000);

  it("says how long to wait when sign-in is throttled (429 with Retry-After)", async () => {
    const { page, problems } = await freshPage();
    await page.goto(`${platform.origin}/web/login`);
    // auth's throttling: the 5th failure for one name starts a wait (docs/auth.md).
    for (let i = 0; i < 6; i++) {
      await page.fill("#username", "nobody-here");
      await page.fill("#password", `wrong-${i}`);
      await page.click("#submit");
      await page.waitForSelector("#submit:not([disabled])");
      const text = (await page.textContent("#error")) ?? "";
      if (/Too many attempts/.test(text)) break;
    }
    expect(await page.textContent("#error")).toMatch(/^Too many attempts\. Try again in \d+ s\.$/);
    await shoot(page, "signin-throttled");
    expect(problems).toEqual([]);
    await page.close();
  }, 60_000);

  it("a single sign-on refusal comes back in the fragment, shown once and taken out of the address", async () => {
    const { page, problems } = await freshPage();
    await page.goto(`${platform.origin}/web/login?next=%2Fweb%2Fnodes#sso_error=access_denied`);
    await expect.poll(() => page.textContent("#error")).toBe("Single sign-on failed: access_denied");
    expect(new URL(page.url()).hash).toBe("");
    expect(new URL(page.url()).searchParams.get("next")).toBe("/web/nodes");
    expect(problems).toEqual([]);
    await page.close();
  });

  it("a revoked session: the next API call answers 401 and the user goes to sign-in with the page kept", async () => {
    const { page, problems } = await freshPage();
    await signIn(page, "dave", PASSWORD, { next: "/web/account" });
    await page.waitForSelector("#devices, .empty-state");
    const cookie = (await chrome.context.cookies(platform.origin)).find(
      (c) => c.name === "__Host-svc_session",
    );
    expect(cookie).toBeDefined();
    const out = await platform.fx.client.send({
      method: "POST",
      path: "/v1/webapi/logout",
      headers: { authorization: `Bearer ${cookie?.value}` },
    });
    expect(out.status).toBe(200);
    // Any call now: the account page's rename of nothing, or simply a reload of its list.
    await page.evaluate(() => fetch("/v1/webapi/session").then((r) => r.status));
    await page.reload();
    await page.waitForURL(/\/web\/login\?next=%2Fweb%2Faccount/, { timeout: 30_000 });
    expect(problems).toEqual([]);
    await page.close();
  }, 60_000);

  it("a user with a security key: the password, then the WebAuthn step in the browser", async () => {
    const { page, problems } = await freshPage();
    await addVirtualAuthenticator(page);
    await signIn(page, "kim", PASSWORD, { next: "/web/account" });
    expect((await enrolSecurityKey(page)).status).toBe(201);
    await page.click("#logout");
    await page.waitForURL((u) => u.pathname === "/web/login", { timeout: 30_000 });

    await page.goto(`${platform.origin}/web/login?next=%2Fweb%2Faccount`);
    await page.fill("#username", "kim");
    await page.fill("#password", PASSWORD);
    await page.click("#submit");
    // The virtual authenticator answers at once; the page goes on to `next`.
    await page.waitForURL((u) => u.pathname === "/web/account", { timeout: 30_000 });
    await page.waitForSelector("#user:not(:empty)");
    const session = await page.evaluate(async () => (await fetch("/v1/webapi/session")).json());
    expect(session).toMatchObject({ username: "kim", mfa_verified: true, scope: "full" });
    expect(problems).toEqual([]);
    await page.close();
  }, 90_000);

  it("roles that require MFA and no key yet: the account page enrols one, then sign-in asks for it", async () => {
    const { page, problems } = await freshPage();
    await addVirtualAuthenticator(page);
    await page.goto(`${platform.origin}/web/login?next=%2Fweb%2Fnodes`);
    await page.fill("#username", "mia");
    await page.fill("#password", PASSWORD);
    await page.click("#submit");
    await page.waitForURL((u) => u.pathname === "/web/account", { timeout: 30_000 });
    await page.waitForSelector("#enrol-notice");
    await expectAccessible(page);
    await shoot(page, "signin-enrol-required");
    await page.fill("#device-name", "Mia's key");
    await page.click("#enrol");
    await page.waitForSelector("#enrolled", { timeout: 30_000 });
    expect(await page.textContent("#devices")).toContain("Mia's key");
    await page.click("#signin-again");
    await page.waitForURL(/\/web\/login\?next=%2Fweb%2Fnodes/, { timeout: 30_000 });
    await page.fill("#username", "mia");
    await page.fill("#password", PASSWORD);
    await page.click("#submit");
    await page.waitForURL((u) => u.pathname === "/web/nodes", { timeout: 30_000 });
    const session = await page.evaluate(async () => (await fetch("/v1/webapi/session")).json());
    expect(session).toMatchObject({ username: "mia", mfa_verified: true, scope: "full" });
    expect(problems).toEqual([]);
    await page.close();
  }, 90_000);

  it("a session whose roles grant nothing says so instead of showing empty pages", async () => {
    const { page, problems } = await freshPage();
    await signIn(page, "nora", PASSWORD, { next: "/web/account" });
    await page.waitForSelector("#no-roles");
    expect(await page.textContent("#no-roles")).toMatch(/no roles/);
    await shoot(page, "signin-no-roles");
    expect(problems).toEqual([]);
    await page.close();
  }, 60_000);

  it("the one-time reset page sets a first password from the link, which then signs in", async () => {
    const { page, problems } = await freshPage();
    const reset = await platform.fx.client.send({ path: "/web/reset?token=abc" });
    expect(reset.headers["referrer-policy"]).toBe("no-referrer");
    expect(reset.headers["cache-control"]).toBe("no-store");
    const token = await platform.issueResetToken("nora");
    await page.goto(`${platform.origin}/web/reset?token=${encodeURIComponent(token)}`);
    expect(page.url()).not.toContain("token=");
    await page.waitForSelector("#reset");
    await expectAccessible(page);
    await shoot(page, "reset");
    await page.fill("#password", "short");
    await page.fill("#again", "different");
    await page.click("#submit");
    // The browser's own check (minlength) keeps a too-short password from being sent.
    expect(
      await page.evaluate(() => (document.getElementById("password") as HTMLInputElement).validity.tooShort),
    ).toBe(true);
    await page.fill("#password", "a new password for nora");
    await page.fill("#again", "a new password, different");
    await page.click("#submit");
    await expect.poll(() => page.textContent("#error")).toBe("The two passwords differ.");
    await page.fill("#again", "a new password for nora");
    await page.click("#submit");
    await page.waitForSelector("#done:not([hidden])", { timeout: 30_000 });
    expect(await page.textContent("#user")).toBe("nora");
    await shoot(page, "reset-done");
    await page.click("#done a");
    await page.waitForURL((u) => u.pathname === "/web/login");
    await page.fill("#username", "nora");
    await page.fill("#password", "a new password for nora");
    await page.click("#submit");
    await page.waitForURL((u) => u.pathname === "/web/nodes", { timeout: 30_000 });
    expect(problems).toEqual([]);
    await page.close();
  }, 60_000);
  it("the session's end sends the user to sign-in, keeping the page, and back after signing in", async () => {
    const { page, problems } = await freshPage();
    // Playwright's clock belongs to the browser context: this test runs last.
    await page.clock.install();
    await signIn(page, "dave", PASSWORD, { next: "/web/account?tab=keys" });
    await page.waitForSelector("#user:not(:empty)");
    // 12 hours later, with the page still open: the shell's timer fires at expires_at.
    await page.clock.fastForward("12:00:01");
    await page.waitForURL(/\/web\/login\?/, { timeout: 30_000 });
    const url = new URL(page.url());
    expect(url.searchParams.get("next")).toBe("/web/account?tab=keys");
    await page.waitForSelector("#expired");
    expect(await page.textContent("#expired")).toMatch(/session ended/);
    await shoot(page, "signin-expired");
    await page.fill("#username", "dave");
    await page.fill("#password", PASSWORD);
    await page.click("#submit");
    await page.waitForURL((u) => u.pathname === "/web/account" && u.search === "?tab=keys", {
      timeout: 30_000,
    });
    expect(problems).toEqual([]);
    await page.close();
  }, 60_000);
});
