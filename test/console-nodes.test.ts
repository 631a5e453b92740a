// The console's nodes page in Chromium against the real platform (auth, proxy, an agent): paging
// through 130 nodes, search, label chips, status, Connect with a login picked from the allowed
// ones (landing in a live terminal on the agent), what an ordinary user with a narrower role
// sees, screenshots at both sizes, axe and keyboard reach.
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { API_VERSION } from "../core/resources/index.ts";
import {
  type ConsolePlatform,
  expectAccessible,
  expectKeyboardReachable,
  launchConsoleBrowser,
  NODES,
  shoot,
  signIn,
  startConsolePlatform,
  watchPage,
} from "./console-kit.ts";
import type { RunningChromium } from "./harness/chromium.ts";

let platform: ConsolePlatform;
let chrome: RunningChromium;
const COUNT = 130;
const pad = (i: number) => String(i).padStart(3, "0");

beforeAll(async () => {
  platform = await startConsolePlatform();
  for (let i = 0; i < COUNT; i++) {
    await platform.addNode(`web-${pad(i)}`, { env: i % 2 ? "dev" : "prod", team: i % 3 ? "core" : "data" });
  }
  // vera sees only env=dev nodes and may log in there as deploy or as herself.
  await platform.fx.env.source.apply({
    apiVersion: API_VERSION,
    kind: "Role",
    metadata: { name: "dev-viewer" },
    spec: { allow: { logins: ["deploy", "{{internal.logins}}"], node_labels: { env: "dev" } } },
  } as never);
  await platform.fx.env.source.apply({
    apiVersion: API_VERSION,
    kind: "User",
    metadata: { name: "vera" },
    spec: { roles: ["dev-viewer"], traits: { logins: ["vera"] } },
  } as never);
  await platform.setPassword("vera");
  chrome = await launchConsoleBrowser();
}, 240_000);

afterAll(async () => {
  await chrome?.close();
  await platform?.close();
}, 60_000);

async function hostnames(page: Page): Promise<string[]> {
  return page.locator('#nodes-table tbody td[data-col="hostname"]').allTextContents();
}

/** Waits until the table settles (not busy) and its first row is `first`. */
async function waitFirstRow(page: Page, first: string): Promise<void> {
  await page.waitForFunction(
    (f) => {
      const busy = document.getElementById("nodes")?.getAttribute("aria-busy");
      const cell = document.querySelector('#nodes-table tbody td[data-col="hostname"]');
      return busy === "false" && cell?.textContent === f;
    },
    first,
    { timeout: 30_000 },
  );
}

async function count(page: Page): Promise<number> {
  const text = (await page.locator("#node-count").textContent()) ?? "";
  return Number(text.replace(/[^0-9]/g, ""));
}

describe("nodes page", () => {
  it("an admin pages, searches, filters by label chips and status", async () => {
    const page = await chrome.context.newPage();
    const problems = watchPage(page);
    await signIn(page, platform.admin.username, platform.admin.password, { next: "/web/nodes" });
    await page.waitForURL((u) => u.pathname === "/web/nodes");
    await page.waitForSelector("#nodes-table");
    const total = COUNT + 3; // the fixture's agent, agentless sshd and offline node
    expect(await count(page)).toBe(total);
    const first = await hostnames(page);
    expect(first).toHaveLength(50);
    expect(first).toEqual([...first].sort());
    await shoot(page, "nodes");
    await expectAccessible(page);
    await expectKeyboardReachable(page, [
      "#node-search",
      "#node-status",
      ".label-chip",
      ".connect-login",
      ".pager-next",
    ]);

    // Paging: Next shows the following 50, Previous comes back.
    await page.click(".pager-next");
    await waitFirstRow(page, "web-047");
    expect(await page.locator(".pager-page").textContent()).toContain("2");
    await page.click(".pager-prev");
    await waitFirstRow(page, first[0] ?? "");

    // Search (on Enter), kept in the address.
    await page.fill("#node-search", "WEB-01");
    await page.press("#node-search", "Enter");
    await waitFirstRow(page, "web-010");
    expect(await hostnames(page)).toEqual(Array.from({ length: 10 }, (_, i) => `web-01${i}`));
    expect(new URL(page.url()).searchParams.get("search")).toBe("WEB-01");

    // A label in a row becomes a filter chip; a second one from the input narrows further.
    await page.click('#nodes-table tbody tr:first-child .label-chip:text-is("env=prod")');
    await page.waitForSelector('.chips .chip:has-text("env=prod")');
    await waitFirstRow(page, "web-010");
    expect(await hostnames(page)).toEqual(["web-010", "web-012", "web-014", "web-016", "web-018"]);
    await page.fill("#node-label", "team=data");
    await page.press("#node-label", "Enter");
    await page.waitForSelector('.chips .chip:has-text("team=data")');
    await waitFirstRow(page, "web-012");
    expect(await hostnames(page)).toEqual(["web-012", "web-018"]);
    expect(new URL(page.url()).searchParams.get("labels")).toBe("env=prod,team=data");
    await shoot(page, "nodes-filtered");
    await expectAccessible(page);

    // Removing the chips and the search brings everything back; status narrows to offline.
    await page.click('.chip:has-text("team=data") .chip-remove');
    await page.click('.chip:has-text("env=prod") .chip-remove');
    await page.fill("#node-search", "");
    await page.selectOption("#node-status", "offline");
    await page.press("#node-search", "Enter");
    await waitFirstRow(page, NODES.offline);
    expect(await hostnames(page)).toEqual([NODES.offline]);
    expect(await page.locator('#nodes-table tbody td[data-col="status"]').textContent()).toBe("offline");

    // A filter that matches nothing says so.
    await page.selectOption("#node-status", "");
    await page.fill("#node-search", "no-such-node");
    await page.press("#node-search", "Enter");
    await page.waitForSelector(".empty-state");
    expect(await page.locator(".empty-state").textContent()).toContain("No node matches");
    expect(problems).toEqual([]);
    await page.close();
  }, 180_000);

  it("Connect offers only the allowed logins and opens a terminal on the agent", async () => {
    const page = await chrome.context.newPage();
    const problems = watchPage(page);
    await signIn(page, platform.admin.username, platform.admin.password, { next: "/web/nodes" });
    await page.fill("#node-search", NODES.agent);
    await page.press("#node-search", "Enter");
    await waitFirstRow(page, NODES.agent);
    const row = page.locator("#nodes-table tbody tr").first();
    const select = row.locator("select.connect-login");
    // A choice among the admin's logins, not a text box.
    expect(await row.locator('input[type="text"]').count()).toBe(0);
    expect((await select.locator("option").allTextContents()).sort()).toEqual(["alice", "root"]);
    await select.selectOption("root");
    await row.locator(".connect-button").click();
    await page.waitForURL((u) => u.pathname === "/web/terminal");
    const url = new URL(page.url());
    expect(url.searchParams.get("node")).toBe(NODES.agent);
    expect(url.searchParams.get("login")).toBe("root");
    await page.waitForSelector('#status[data-state="connected"]', { timeout: 60_000 });
    await page.locator("#terminal").click();
    await page.keyboard.type("whoami");
    await page.keyboard.press("Enter");
    await page.waitForFunction(
      () => {
        type Line = { translateToString(trim: boolean): string };
        type Term = { buffer: { active: { length: number; getLine(i: number): Line | undefined } } };
        const t = (window as unknown as { svcTerminal?: { term: Term } }).svcTerminal?.term;
        if (!t) return false;
        const b = t.buffer.active;
        for (let i = 0; i < b.length; i++)
          if (b.getLine(i)?.translateToString(true).trim() === "root") return true;
        return false;
      },
      undefined,
      { timeout: 30_000 },
    );
    await page.click("#disconnect");
    await page.waitForSelector('#status[data-state="closed"]', { timeout: 30_000 });
    expect(problems).toEqual([]);
    await page.close();
  }, 180_000);

  it("an ordinary user sees only the nodes and logins their role allows", async () => {
    const page = await chrome.context.newPage();
    const problems = watchPage(page);
    await signIn(page, "vera", undefined, { next: "/web/nodes" });
    await page.waitForSelector("#nodes-table");
    expect(await count(page)).toBe(COUNT / 2);
    const names = await hostnames(page);
    expect(names[0]).toBe("web-001");
    const envs = await page.locator('#nodes-table tbody td[data-col="labels"]').allTextContents();
    expect(envs.every((t) => t.includes("env=dev"))).toBe(true);
    const options = await page.locator("select.connect-login").first().locator("option").allTextContents();
    expect(options).toEqual(["deploy", "vera"]);
    // Searching for nodes the role hides finds nothing (and counts nothing).
    await page.fill("#node-search", "env=prod");
    await page.press("#node-search", "Enter");
    await page.waitForSelector(".empty-state");
    expect(await count(page)).toBe(0);
    await shoot(page, "nodes-user-empty");
    await expectAccessible(page);
    expect(problems).toEqual([]);
    await page.close();
  }, 120_000);
});
