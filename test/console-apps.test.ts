// The console's Apps and launch pages in headless Chromium against the real embedded platform
// (`svcd start` in this process) with two Apps in its manifests folder, one of them go-httpbin:
// each user sees only the apps their roles reach (a user with none sees how an admin adds one);
// Launch opens the app's host in a new tab and lands on the app, which sees the user's
// Svc-Jwt-Assertion; a signed-out visit to the app host goes through sign-in and back to the
// path; the launch page's errors (no such app, no state); the roles page reads app_labels out.
// Screenshots at both sizes, axe, keyboard reach.
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml, stringify as stringifyYaml } from "yaml";
import { openBackend } from "../core/backend/index.ts";
import { systemClock } from "../core/clock.ts";
import { API_VERSION } from "../core/resources/index.ts";
import { setPassword } from "../server/auth/passwords.ts";
import { type RunningPlatform, startEmbedded } from "../server/embedded/start.ts";
import {
  DESKTOP,
  ensureConsoleBuilt,
  expectAccessible,
  expectKeyboardReachable,
  PUBLIC_HOST,
  shoot,
  signIn,
  watchPage,
} from "./console-kit.ts";
import { launchChromium, type RunningChromium } from "./harness/chromium.ts";
import { type Httpbin, startHttpbin } from "./harness/httpbin.ts";
import { freePort } from "./harness/ports.ts";

const ADMIN_PASSWORD = "console-apps-admin-password-1";
const USER_PASSWORD = "console-apps-user-password-1";
const APP_HOST = `httpbin.${PUBLIC_HOST}`;

let dir: string;
let platform: RunningPlatform | undefined;
let origin: string;
let appOrigin: string;
let httpbin: Httpbin | undefined;
const browsers: RunningChromium[] = [];

const start = (dataDir: string, env: NodeJS.ProcessEnv) =>
  startEmbedded(
    { dataDir, authListen: "127.0.0.1:0", diagListen: "127.0.0.1:0" },
    { env, logger: pino({ level: process.env["SVC_TEST_LOG_LEVEL"] ?? "silent" }) },
  );

/**
 * The Apps and who reaches them: ana (role dev-apps) the env=dev app only, vera (role nodes-only)
 * none, the admin (preset admin role) both.
 */
function manifests(httpbinPort: number): unknown[] {
  return [
    {
      apiVersion: API_VERSION,
      kind: "App",
      metadata: { name: "httpbin", labels: { env: "dev", team: "web" } },
      spec: { uri: `http://127.0.0.1:${httpbinPort}`, description: "Echoes requests back (go-httpbin)" },
    },
    {
      apiVersion: API_VERSION,
      kind: "App",
      metadata: { name: "billing", labels: { env: "prod" } },
      spec: { uri: "http://127.0.0.1:9", description: "Invoices" },
    },
    {
      apiVersion: API_VERSION,
      kind: "Role",
      metadata: { name: "dev-apps" },
      spec: { allow: { app_labels: { env: "dev" } } },
    },
    {
      apiVersion: API_VERSION,
      kind: "Role",
      metadata: { name: "nodes-only" },
      spec: { allow: { logins: ["vera"], node_labels: { "*": "*" } } },
    },
    { apiVersion: API_VERSION, kind: "User", metadata: { name: "ana" }, spec: { roles: ["dev-apps"] } },
    { apiVersion: API_VERSION, kind: "User", metadata: { name: "vera" }, spec: { roles: ["nodes-only"] } },
  ];
}

beforeAll(async () => {
  ensureConsoleBuilt();
  dir = await mkdtemp(join(tmpdir(), "svc-console-apps-"));
  const dataDir = join(dir, "data");
  const passwordFile = join(dir, "admin-password");
  await writeFile(passwordFile, ADMIN_PASSWORD);
  // go-httpbin on loopback: the internal app (it echoes the request's headers at /headers).
  httpbin = await startHttpbin();
  // The first start makes the data folder and the first admin. Between the starts: the test's
  // manifests, the users' passwords (in the state file, as `svcctl` would set them) and the
  // public name the browser uses on a free port.
  const first = await start(dataDir, { SVC_ADMIN_PASSWORD_FILE: passwordFile });
  const manifestsDir = first.data.paths.manifests;
  const sqlite = first.data.paths.sqlite ?? "";
  await first.close();
  await mkdir(manifestsDir, { recursive: true });
  await writeFile(
    join(manifestsDir, "console-apps.yaml"),
    manifests(httpbin.port)
      .map((m) => stringifyYaml(m))
      .join("---\n"),
  );
  const backend = await openBackend({ type: "sqlite", path: sqlite }, { clock: systemClock });
  try {
    for (const user of ["ana", "vera"]) await setPassword(backend, user, USER_PASSWORD);
  } finally {
    await backend.close();
  }
  const port = await freePort();
  const configPath = join(dataDir, "svc.yaml");
  const config = parseYaml(await readFile(configPath, "utf8")) as { proxy: Record<string, unknown> };
  config.proxy["listen_addr"] = `127.0.0.1:${port}`;
  config.proxy["public_addr"] = `${PUBLIC_HOST}:${port}`;
  config.proxy["oidc_issuer_url"] = `https://${PUBLIC_HOST}:${port}`;
  await writeFile(configPath, stringifyYaml(config));
  platform = await start(dataDir, {});
  origin = `https://${PUBLIC_HOST}:${port}`;
  appOrigin = `https://${APP_HOST}:${port}`;
}, 180_000);

afterAll(async () => {
  for (const b of browsers.splice(0)) await b.close();
  await platform?.close();
  await httpbin?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
}, 60_000);

/** A person's browser: a fresh profile, the public name and every app host under it on loopback. */
async function browser(): Promise<RunningChromium> {
  const b = await launchChromium({
    loopbackHosts: [PUBLIC_HOST, `*.${PUBLIC_HOST}`],
    ignoreHTTPSErrors: true,
    viewport: { ...DESKTOP },
  });
  browsers.push(b);
  return b;
}

/** The names in the Apps table once it has loaded. */
async function appNames(page: Page): Promise<string[]> {
  await page.waitForSelector('#apps[aria-busy="false"]');
  return page.locator('#apps-table tbody td[data-col="name"] .mono').allTextContents();
}

/** The JSON body of the page (go-httpbin's /headers), as Chromium shows it. */
async function pageJson(page: Page): Promise<{ headers: Record<string, string[]> }> {
  return JSON.parse((await page.locator("body").textContent()) ?? "") as {
    headers: Record<string, string[]>;
  };
}

describe("the Apps page", () => {
  it("lists only the apps the user's roles reach, with search, address and Launch", async () => {
    const b = await browser();
    const page = await b.context.newPage();
    const problems = watchPage(page);
    await signIn(page, "admin", ADMIN_PASSWORD, { origin, next: "/web/apps" });
    await page.waitForURL((u) => u.pathname === "/web/apps");
    // The admin's preset role reaches every app.
    expect(await appNames(page)).toEqual(["billing", "httpbin"]);
    expect(await page.locator("#app-count").textContent()).toBe("2 apps");
    const row = page.locator('#apps-table tr[data-key="httpbin"]');
    expect(await row.locator('td[data-col="address"]').textContent()).toBe(APP_HOST);
    expect(await row.locator('td[data-col="name"]').textContent()).toContain("Echoes requests back");
    const launch = row.locator("a.launch");
    expect(await launch.getAttribute("href")).toBe(`${appOrigin}/`);
    expect(await launch.getAttribute("target")).toBe("_blank");
    expect((await launch.getAttribute("rel"))?.split(" ").sort()).toEqual(["noopener", "noreferrer"]);
    expect(await page.locator('nav[aria-label="Console"] a[aria-current="page"]').textContent()).toBe("Apps");
    await shoot(page, "apps");
    await expectAccessible(page);
    await expectKeyboardReachable(page, ["#app-search", ".label-chip", "a.launch"]);

    // A label searches for itself; the search lives in the address.
    await row.locator('.label-chip:text-is("env=dev")').click();
    await page.waitForURL((u) => u.searchParams.get("search") === "env=dev");
    expect(await appNames(page)).toEqual(["httpbin"]);
    await page.fill("#app-search", "invoices");
    await page.press("#app-search", "Enter");
    await page.waitForURL((u) => u.searchParams.get("search") === "invoices");
    expect(await appNames(page)).toEqual(["billing"]);
    await page.fill("#app-search", "no-such-app");
    await page.press("#app-search", "Enter");
    await page.waitForSelector(".empty-state");
    expect(await page.locator(".empty-state").textContent()).toContain("No app matches");

    // The roles page reads a role's app_labels out.
    await page.goto(`${origin}/web/roles`);
    const role = page.locator('details[data-role="dev-apps"]');
    await role.locator("summary").click();
    await expect.poll(() => role.textContent()).toContain("Apps labelledenv=dev");
    const preset = page.locator('details[data-role="access"]');
    await preset.locator("summary").click();
    await expect.poll(() => preset.textContent()).toContain("Apps labelledany app");
    expect(problems).toEqual([]);
    await page.close();
  }, 120_000);

  it("shows a user their own apps, and a user with none how an admin adds one", async () => {
    const ana = await (await browser()).context.newPage();
    await signIn(ana, "ana", USER_PASSWORD, { origin, next: "/web/apps" });
    expect(await appNames(ana)).toEqual(["httpbin"]);

    const vera = await (await browser()).context.newPage();
    const problems = watchPage(vera);
    await signIn(vera, "vera", USER_PASSWORD, { origin, next: "/web/apps" });
    await vera.waitForSelector(".empty-state");
    expect(await vera.locator("#apps-table").count()).toBe(0);
    const empty = (await vera.locator(".empty-state").textContent()) ?? "";
    expect(empty).toContain("No apps for you yet");
    expect(empty).toContain("kubectl apply");
    expect(empty).toContain("app_labels");
    expect(empty).toContain("kind: App");
    await shoot(vera, "apps-empty");
    await expectAccessible(vera);
    expect(problems).toEqual([]);
  }, 120_000);
});

describe("launching an app", () => {
  it("Launch opens the app's host in a new tab, signed in as the user", async () => {
    const b = await browser();
    const page = await b.context.newPage();
    const problems = watchPage(page);
    await signIn(page, "ana", USER_PASSWORD, { origin, next: "/web/apps" });
    expect(await appNames(page)).toEqual(["httpbin"]);
    const [tab] = await Promise.all([
      b.context.waitForEvent("page"),
      page.click('#apps-table tr[data-key="httpbin"] a.launch'),
    ]);
    // The app's own pages are not the console's: only a CSP refusal (on the launch page) counts.
    const csp: string[] = [];
    tab.on("console", (m) => {
      if (/Content Security Policy/i.test(m.text())) csp.push(m.text());
    });
    // Through the launch page and the app host's login path, to the app's own start page.
    await tab.waitForURL((u) => u.host === new URL(appOrigin).host && u.pathname === "/", {
      timeout: 30_000,
    });
    expect(await tab.evaluate(() => window.opener)).toBeNull();
    expect(new URL(tab.url()).search).toBe("");
    // The same tab reaches any path of the app now, with the user's assertion.
    await tab.goto(`${appOrigin}/headers`);
    const { headers } = await pageJson(tab);
    const assertion = headers["Svc-Jwt-Assertion"]?.[0] ?? "";
    expect(assertion.split(".")).toHaveLength(3);
    const claims = JSON.parse(Buffer.from(assertion.split(".")[1] ?? "", "base64url").toString()) as {
      sub?: string;
    };
    expect(claims.sub).toBe("ana");
    // The proxy's cookies never reach the app.
    expect(JSON.stringify(headers["Cookie"] ?? [])).not.toContain("svc_app");
    expect(csp).toEqual([]);
    expect(problems).toEqual([]);
  }, 120_000);

  it("a signed-out visit to the app host signs in and comes back to the path", async () => {
    const b = await browser();
    const page = await b.context.newPage();
    const problems = watchPage(page);
    const csp: string[] = [];
    page.on("console", (m) => {
      if (/Content Security Policy/i.test(m.text())) csp.push(m.text());
    });
    await page.goto(`${appOrigin}/headers?from=bookmark`);
    // The proxy sends the browser to the launch page, which sends it to sign-in, keeping itself.
    await page.waitForURL((u) => u.pathname === "/web/login", { timeout: 30_000 });
    const next = new URL(page.url()).searchParams.get("next") ?? "";
    expect(next).toMatch(new RegExp(`^/web/launch/${APP_HOST.replaceAll(".", "\\.")}\\?`));
    const launchQuery = new URL(next, origin).searchParams;
    expect(launchQuery.get("path")).toBe("/headers?from=bookmark");
    expect(launchQuery.get("state")).toMatch(/^[\w-]{43}$/);
    await page.fill("#username", "ana");
    await page.fill("#password", USER_PASSWORD);
    await page.click("#submit");
    await page.waitForURL((u) => u.host === new URL(appOrigin).host && u.pathname === "/headers", {
      timeout: 30_000,
    });
    expect(new URL(page.url()).search).toBe("?from=bookmark");
    const { headers } = await pageJson(page);
    expect(headers["Svc-Jwt-Assertion"]?.[0]).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(csp).toEqual([]);
    expect(problems).toEqual([]);
  }, 120_000);

  it("the launch page says when the app is unknown or not the user's, and when the link is incomplete", async () => {
    const b = await browser();
    const page = await b.context.newPage();
    const problems = watchPage(page);
    await signIn(page, "ana", USER_PASSWORD, { origin, next: "/web/apps" });
    // billing exists, but ana's roles do not reach it: the same answer as for no app at all.
    for (const host of [`billing.${PUBLIC_HOST}`, `nope.${PUBLIC_HOST}`]) {
      await page.goto(`${origin}/web/launch/${host}?path=%2F&state=abc`);
      await page.waitForSelector("#launch-error");
      expect(await page.locator("h1").textContent()).toBe("No such app, or you may not use it");
      expect(new URL(page.url()).host).toBe(new URL(origin).host);
    }
    await shoot(page, "apps-launch-refused");
    await expectAccessible(page);

    // No state: nothing is asked of the server (no code is spent), and the page says why.
    const asked: string[] = [];
    page.on("request", (r) => {
      if (r.url().includes("/v1/webapi/apps/sessions")) asked.push(r.url());
    });
    await page.goto(`${origin}/web/launch/${APP_HOST}?path=%2Fheaders`);
    await page.waitForSelector("#launch-error");
    expect(await page.locator("h1").textContent()).toBe("This app link is incomplete");
    expect(asked).toEqual([]);
    expect(new URL(page.url()).host).toBe(new URL(origin).host);
    await expectAccessible(page);
    expect(problems).toEqual([]);
  }, 120_000);
});
