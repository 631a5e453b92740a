// The console's terminal in Chromium against the real platform: reached from the nodes page's
// Connect, a shell on the real agent runs commands; font size, selection copy, Ctrl+Shift+V and
// the Paste button; the proxy drops the WebSocket (its TCP connection destroyed) and the page
// reconnects showing that it does; the shell's end links its recording. Screenshots and axe.
import type { Socket } from "node:net";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
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
/** The TCP connections of terminal WebSockets, as the proxy accepted them. */
const terminalSockets: Socket[] = [];

beforeAll(async () => {
  platform = await startConsolePlatform();
  platform.fx.proxy.app.server.on("upgrade", (req: { url?: string }, socket: Socket) => {
    if (req.url?.startsWith("/v1/webapi/ssh/connect")) terminalSockets.push(socket);
  });
  chrome = await launchConsoleBrowser();
  await chrome.context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: platform.origin });
}, 240_000);

afterAll(async () => {
  await chrome?.close();
  await platform?.close();
}, 60_000);

interface XtermLike {
  buffer: {
    active: { length: number; getLine(i: number): { translateToString(trim: boolean): string } | undefined };
  };
  cols: number;
  rows: number;
  options: { fontSize?: number };
  select(column: number, row: number, length: number): void;
}
type Handles = { svcTerminal?: { term: XtermLike } };

async function lines(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const t = (window as unknown as Handles).svcTerminal?.term;
    if (!t) return [];
    const out: string[] = [];
    for (let i = 0; i < t.buffer.active.length; i++)
      out.push(t.buffer.active.getLine(i)?.translateToString(true) ?? "");
    return out;
  });
}

async function waitForLine(page: Page, re: RegExp, timeoutMs = 30_000): Promise<number> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const all = await lines(page);
    const i = all.findIndex((l) => re.test(l));
    if (i >= 0) return i;
    if (Date.now() > end) throw new Error(`no line matching ${re} in:\n${all.filter((l) => l).join("\n")}`);
    await page.waitForTimeout(100);
  }
}

async function run(page: Page, command: string): Promise<void> {
  await page.locator("#terminal").click();
  await page.keyboard.type(command);
  await page.keyboard.press("Enter");
}

async function termState(page: Page): Promise<{ cols: number; rows: number; fontSize: number }> {
  return page.evaluate(() => {
    const t = (window as unknown as Handles).svcTerminal?.term;
    return { cols: t?.cols ?? 0, rows: t?.rows ?? 0, fontSize: t?.options.fontSize ?? 0 };
  });
}

/** Signs dave in and connects to the agent as root from the nodes page, as a person would. */
async function openTerminal(page: Page): Promise<void> {
  await signIn(page, platform.user.username, platform.user.password, {
    next: `/web/nodes?search=${NODES.agent}`,
  });
  const row = page.locator("#nodes-table tbody tr").first();
  await row.locator(".connect-button").waitFor({ timeout: 30_000 });
  expect(await row.locator("select.connect-login option").allTextContents()).toEqual(["root"]);
  await row.locator(".connect-button").click();
  await page.waitForURL((u) => u.pathname === "/web/terminal");
  await page.waitForSelector('#status[data-state="connected"]', { timeout: 60_000 });
}

describe("terminal page", () => {
  it("runs commands on the agent; font size; selection copy, Ctrl+Shift+V and the Paste button", async () => {
    const page = await chrome.context.newPage();
    const problems = watchPage(page);
    await openTerminal(page);
    await run(page, "echo hel''lo");
    await waitForLine(page, /^hello$/);
    await shoot(page, "terminal");
    await expectAccessible(page, { exclude: [".xterm-accessibility", ".xterm-helper-textarea"] });
    // Tab inside the terminal goes to the shell (completion), so the walk starts at the heading.
    await page.locator("h1").click();
    await expectKeyboardReachable(page, ["#font-smaller", "#font-larger", "#paste", "#disconnect"]);

    // Larger text: fewer columns and rows, and the shell is told the new size.
    const before = await termState(page);
    await page.click("#font-larger");
    await page.click("#font-larger");
    expect(await page.locator("#font-size").textContent()).toBe(`${before.fontSize + 2} px`);
    await page.waitForFunction((b) => {
      const t = (window as unknown as Handles).svcTerminal?.term;
      return t !== undefined && t.options.fontSize === b.fontSize + 2 && t.cols < b.cols;
    }, before);
    const larger = await termState(page);
    expect(larger.fontSize).toBe(before.fontSize + 2);
    expect(larger.rows).toBeLessThan(before.rows);
    await run(page, "stty size");
    await waitForLine(page, new RegExp(`^${larger.rows} ${larger.cols}$`));

    // Selecting copies to the clipboard.
    const row = await waitForLine(page, /^hello$/);
    await page.evaluate((r) => (window as unknown as Handles).svcTerminal?.term.select(0, r, 5), row);
    await page.waitForFunction(async () => (await navigator.clipboard.readText()) === "hello");
    expect(await page.isEnabled("#copy")).toBe(true);

    // Ctrl+Shift+V pastes into the shell; so does the Paste button.
    await page.evaluate(() => navigator.clipboard.writeText("echo pas''ted-by-keys"));
    await page.locator("#terminal").click();
    await page.keyboard.press("Control+Shift+V");
    // The clipboard is read asynchronously: Enter once the text is on the command line.
    await waitForLine(page, /# echo pas''ted-by-keys$/);
    await page.keyboard.press("Enter");
    await waitForLine(page, /^pasted-by-keys$/);
    await page.evaluate(() => navigator.clipboard.writeText("echo via''-button"));
    await page.click("#paste");
    await waitForLine(page, /# echo via''-button$/);
    await page.keyboard.press("Enter");
    await waitForLine(page, /^via-button$/);

    // The font size is remembered for the next terminal.
    await page.click("#disconnect");
    await page.waitForSelector('#status[data-state="closed"]', { timeout: 30_000 });
    expect(await page.isVisible("#reconnect")).toBe(true);
    await page.click("#reconnect");
    await page.waitForSelector('#status[data-state="connected"]', { timeout: 60_000 });
    await page.goBack();
    await page.waitForURL((u) => u.pathname === "/web/nodes");
    await page.goForward();
    await page.waitForSelector('#status[data-state="connected"]', { timeout: 60_000 });
    expect((await termState(page)).fontSize).toBe(before.fontSize + 2);
    await page.click("#font-smaller");
    await page.click("#font-smaller");
    await page.click("#disconnect");
    await page.waitForSelector('#status[data-state="closed"]', { timeout: 30_000 });
    expect(problems).toEqual([]);
    await page.close();
  }, 240_000);

  it("reconnects by itself when the WebSocket drops, and says so", async () => {
    const page = await chrome.context.newPage();
    const problems = watchPage(page);
    await openTerminal(page);
    await run(page, "echo be''fore");
    await waitForLine(page, /^before$/);

    // The proxy side of the connection goes away (as when a proxy restarts or a network drops).
    for (const s of terminalSockets.splice(0)) s.destroy();
    await page.waitForSelector('#status[data-state="reconnecting"]', { timeout: 10_000 });
    expect(await page.locator("#status").textContent()).toMatch(/reconnecting in \d+ s \(attempt 1 of \d+\)/);
    await shoot(page, "terminal-reconnecting");
    await page.waitForSelector('#status[data-state="connected"]', { timeout: 60_000 });
    await waitForLine(page, /\[reconnected: a new shell session\]/);
    await run(page, "echo after''wards");
    await waitForLine(page, /^afterwards$/);
    await page.click("#disconnect");
    await page.waitForSelector('#status[data-state="closed"]', { timeout: 30_000 });
    expect(problems).toEqual([]);
    await page.close();
  }, 180_000);

  it("links the session's recording when the shell ends", async () => {
    const page = await chrome.context.newPage();
    const problems = watchPage(page);
    await openTerminal(page);
    await run(page, "echo to-be-re''corded");
    await waitForLine(page, /^to-be-recorded$/);
    await run(page, "exit");
    await page.waitForSelector('#status[data-state="closed"]', { timeout: 30_000 });
    expect(await page.locator("#status").textContent()).toContain("session ended");
    const link = page.locator("#recording-link");
    await link.waitFor({ timeout: 60_000 });
    const href = (await link.getAttribute("href")) ?? "";
    expect(href).toMatch(/^\/web\/recordings\/[A-Za-z0-9_.%-]+$/);
    await shoot(page, "terminal-ended");
    await expectAccessible(page, { exclude: [".xterm-accessibility", ".xterm-helper-textarea"] });
    // The link is the recording of this very session (the API lists it as dave's, on the agent).
    const id = decodeURIComponent(href.split("/").pop() ?? "");
    const listed = await page.evaluate(async (node) => {
      const res = await fetch(`/v1/webapi/sessions?node=${node}&limit=50`);
      return ((await res.json()) as { items: Array<{ id: string; user: string }> }).items;
    }, NODES.agent);
    expect(listed.find((r) => r.id === id)?.user).toBe(platform.user.username);
    expect(problems).toEqual([]);
    await link.click();
    await page.waitForURL((u) => u.pathname === href, { timeout: 30_000 });
    await page.close();
  }, 180_000);

  it("a login the role does not grant is refused on the page, without reconnect attempts", async () => {
    const page = await chrome.context.newPage();
    const problems = watchPage(page);
    await signIn(page, platform.user.username, platform.user.password, {
      next: `/web/terminal?node=${NODES.agent}&login=nobody`,
    });
    await page.waitForSelector('#status[data-state="error"]', { timeout: 60_000 });
    expect(await page.locator("#status").textContent()).toContain("not allowed");
    expect(await page.isVisible("#reconnect")).toBe(true);
    await page.waitForTimeout(1500);
    expect(await page.getAttribute("#status", "data-state")).toBe("error");
    await shoot(page, "terminal-refused");
    await expectAccessible(page, { exclude: [".xterm-accessibility", ".xterm-helper-textarea"] });
    expect(problems).toEqual([]);
    await page.close();
  }, 120_000);
});
