// The account page in Chromium against the real platform: a security key added with Chromium's
// virtual authenticator, renamed (PATCH /v1/webapi/mfa/devices/:id, RenameWebAuthnDevice in auth),
// removed, and signing out; the rename route's refusals (another user's device, a bad name, no
// CSRF proof) through the real proxy and auth. Screenshots at both sizes, axe, keyboard.
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
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
import { addVirtualAuthenticator } from "./sso-fixture.ts";

let platform: ConsolePlatform;
let chrome: RunningChromium;

beforeAll(async () => {
  [platform, chrome] = await Promise.all([startConsolePlatform(), launchConsoleBrowser()]);
}, 240_000);

afterAll(async () => {
  await chrome?.close();
  await platform?.close();
}, 60_000);

const rows = (page: Page) => page.locator("#devices tbody tr");

describe("account page", () => {
  let deviceId = "";
  // One page through the three steps: its virtual authenticator holds bob's key.
  let page: Page;
  let problems: string[] = [];

  it("adds a security key with the browser's WebAuthn prompt, renames it, and lists it", async () => {
    await chrome.context.clearCookies();
    page = await chrome.context.newPage();
    problems = watchPage(page);
    await addVirtualAuthenticator(page);
    await signIn(page, "bob", PASSWORD, { next: "/web/account" });
    await page.waitForSelector(".empty-state");
    expect(await page.textContent("#account-user")).toBe("bob");
    await expectAccessible(page);
    await expectKeyboardReachable(page, ["#device-name", "#enrol", "#account-logout"]);
    await shoot(page, "account-empty");

    await page.fill("#device-name", "Desk key");
    await page.click("#enrol");
    await expect.poll(() => page.textContent("#account-status")).toBe("Added Desk key.");
    await expect.poll(() => rows(page).count()).toBe(1);
    deviceId = (await rows(page).first().getAttribute("data-key")) ?? "";
    expect(deviceId).toMatch(/^[A-Za-z0-9_-]+$/);

    // Rename by keyboard: the row's button opens the dialog, Enter saves.
    await page.focus(`#devices tr[data-key="${deviceId}"] button.rename`);
    await page.keyboard.press("Enter");
    await page.waitForSelector("#rename-dialog[open]");
    await expectAccessible(page);
    await shoot(page, "account-rename");
    await page.fill("#rename-name", "Travel key");
    await page.keyboard.press("Enter");
    await expect.poll(() => page.textContent("#account-status")).toBe("Renamed to Travel key.");
    expect(await page.isVisible("#rename-dialog")).toBe(false);
    // The status is set before the list is read again: the row catches up.
    await expect.poll(() => rows(page).first().locator(".device-name").textContent()).toBe("Travel key");
    await shoot(page, "account");

    // The name is auth's: a fresh load shows it too.
    await page.reload();
    await page.waitForSelector("#devices");
    expect(await page.textContent("#devices")).toContain("Travel key");
    expect(problems).toEqual([]);
  }, 120_000);

  it("refuses renaming another user's device, a name with control characters, and a request without CSRF proof", async () => {
    const dave = await platform.fx.login("dave");
    const bearer = { authorization: `Bearer ${dave.sessionId}` };
    const other = await platform.fx.client.send({
      method: "PATCH",
      path: `/v1/webapi/mfa/devices/${deviceId}`,
      headers: bearer,
      body: { name: "mine now" },
    });
    expect(other.status).toBe(404);
    // bob has a key now, so a password alone is not a session: the browser's is used.
    const cookie = (await chrome.context.cookies(platform.origin)).find(
      (c) => c.name === "__Host-svc_session",
    );
    const bob = { sessionId: cookie?.value ?? "" };
    const bad = await platform.fx.client.send({
      method: "PATCH",
      path: `/v1/webapi/mfa/devices/${deviceId}`,
      headers: { authorization: `Bearer ${bob.sessionId}` },
      body: { name: "bell\u0007" },
    });
    expect(bad.status).toBe(400);
    const tooLong = await platform.fx.client.send({
      method: "PATCH",
      path: `/v1/webapi/mfa/devices/${deviceId}`,
      headers: { authorization: `Bearer ${bob.sessionId}` },
      body: { name: "x".repeat(65) },
    });
    expect(tooLong.status).toBe(400);
    // A cookie without the CSRF token (what a cross-site form could send).
    const noCsrf = await platform.fx.client.send({
      method: "PATCH",
      path: `/v1/webapi/mfa/devices/${deviceId}`,
      headers: { cookie: `__Host-svc_session=${bob.sessionId}`, origin: platform.origin },
      body: { name: "csrf" },
    });
    expect(noCsrf.status).toBe(403);
  }, 60_000);

  it("removes the key after a confirmation, then signs out", async () => {
    await page.click(`#devices tr[data-key="${deviceId}"] button.remove`);
    await page.waitForSelector("#remove-dialog[open]");
    await shoot(page, "account-remove");
    // Cancel keeps it; the confirmation removes it.
    await page.keyboard.press("Escape");
    expect(await rows(page).count()).toBe(1);
    await page.click(`#devices tr[data-key="${deviceId}"] button.remove`);
    await page.click("#remove-confirm");
    await expect.poll(() => page.textContent("#account-status")).toBe("Removed Travel key.");
    await page.waitForSelector(".empty-state");
    const listed = await page.evaluate(async () => (await fetch("/v1/webapi/mfa/devices")).json());
    expect(listed).toEqual({ items: [] });

    await page.click("#account-logout");
    await page.waitForURL((u) => u.pathname === "/web/login", { timeout: 30_000 });
    expect(await page.evaluate(async () => (await fetch("/v1/webapi/session")).status)).toBe(401);
    // Without a key, bob signs in with the password alone again.
    await page.fill("#username", "bob");
    await page.fill("#password", PASSWORD);
    await page.click("#submit");
    await page.waitForURL((u) => u.pathname === "/web/nodes", { timeout: 30_000 });
    expect(problems).toEqual([]);
    await page.close();
  }, 60_000);
});
