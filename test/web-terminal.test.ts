// The browser UI end to end in headless Chromium (Debian package, playwright-core): sign in on
// /web/login, land on /web/terminal, type `echo hello` into xterm.js and read `hello` back from
// its buffer, resize the window (the shell sees the new size), disconnect, then follow the
// terminal's link to the recording and play it back on /web/recordings/:id.
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium, type RunningChromium } from "./harness/chromium.ts";
import {
  NODES,
  PASSWORD,
  PUBLIC_HOST,
  startTerminalFixture,
  type TerminalFixture,
} from "./terminal-fixture.ts";

let fx: TerminalFixture;
let chrome: RunningChromium;
const pageErrors: string[] = [];

beforeAll(async () => {
  fx = await startTerminalFixture();
  chrome = await launchChromium({ loopbackHosts: [PUBLIC_HOST], ignoreHTTPSErrors: true });
}, 240_000);

afterAll(async () => {
  await chrome?.close();
  await fx?.close();
}, 60_000);

/** The visible text of the page's xterm buffer (scrollback included), one string per line. */
async function bufferLines(page: Page, handle: "svcTerminal"): Promise<string[]> {
  return page.evaluate((h) => {
    const w = window as unknown as Record<string, { term: XtermLike } | undefined>;
    const term = w[h]?.term;
    if (!term) return [];
    const b = term.buffer.active;
    const out: string[] = [];
    for (let i = 0; i < b.length; i++) out.push(b.getLine(i)?.translateToString(true) ?? "");
    return out;
  }, handle);
}
interface XtermLike {
  buffer: {
    active: { length: number; getLine(i: number): { translateToString(trim: boolean): string } | undefined };
  };
  cols: number;
  rows: number;
}

async function waitForLine(page: Page, handle: "svcTerminal", re: RegExp, timeoutMs = 30_000) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const lines = await bufferLines(page, handle);
    const hit = lines.find((l) => re.test(l));
    if (hit !== undefined) return hit;
    if (Date.now() > end) throw new Error(`no line matching ${re} in:\n${lines.filter((l) => l).join("\n")}`);
    await page.waitForTimeout(100);
  }
}

async function termSize(page: Page): Promise<{ cols: number; rows: number }> {
  return page.evaluate(() => {
    const t = (window as unknown as { svcTerminal: { term: XtermLike } }).svcTerminal.term;
    return { cols: t.cols, rows: t.rows };
  });
}

describe("web terminal in Chromium", () => {
  it("logs in, runs echo hello, resizes, disconnects, and plays the recording back", async () => {
    const page = await chrome.context.newPage();
    page.on("pageerror", (e) => pageErrors.push(e.message));
    page.on("console", (m) => {
      // Refused requests (the 401 of the session probe before login, no favicon) are expected.
      if (m.type() === "error" && !m.text().startsWith("Failed to load resource")) pageErrors.push(m.text());
    });
    const target = `/web/terminal?node=${NODES.agent}&login=root`;

    // No session yet: the terminal page sends us to the login page, which sends us back.
    await page.goto(`${fx.publicOrigin}${target}`);
    await page.waitForURL(/\/web\/login\?next=/, { timeout: 30_000 });
    await page.fill("#username", "dave");
    await page.fill("#password", PASSWORD);
    await page.click("#submit");
    await page.waitForURL((u) => u.pathname === "/web/terminal", { timeout: 30_000 });
    await page.waitForSelector('#status[data-state="connected"]', { timeout: 60_000 });
    if (process.env["SVC_WEB_SCREENSHOTS"])
      await page.screenshot({ path: `${process.env["SVC_WEB_SCREENSHOTS"]}/terminal-connected.png` });

    await page.click("#terminal");
    await page.keyboard.type("echo hel''lo");
    await page.keyboard.press("Enter");
    expect(await waitForLine(page, "svcTerminal", /^hello$/)).toBe("hello");

    // Fit follows the window; the shell gets the new size over the resize message.
    const before = await termSize(page);
    await page.setViewportSize({ width: 640, height: 420 });
    for (let i = 0; i < 50 && (await termSize(page)).cols === before.cols; i++)
      await page.waitForTimeout(100);
    const after = await termSize(page);
    expect(after.cols).toBeLessThan(before.cols);
    expect(after.rows).toBeLessThan(before.rows);
    await page.keyboard.type("stty size");
    await page.keyboard.press("Enter");
    await waitForLine(page, "svcTerminal", new RegExp(`^${after.rows} ${after.cols}$`));
    if (process.env["SVC_WEB_SCREENSHOTS"])
      await page.screenshot({ path: `${process.env["SVC_WEB_SCREENSHOTS"]}/terminal-resized.png` });

    // Disconnect ends the session; reconnecting is offered as a button, not done behind our back.
    await page.click("#disconnect");
    await page.waitForSelector('#status[data-state="closed"]', { timeout: 30_000 });
    expect(await page.isVisible("#reconnect")).toBe(true);

    // The terminal links the session's recording once the shell has ended; it plays in
    // asciinema-player (its terminal lines are .ap-line elements).
    const link = await page.locator("#recording-link").getAttribute("href", { timeout: 60_000 });
    if (link === null) throw new Error("the terminal did not link the recording");
    expect(link).toMatch(/^\/web\/recordings\/[A-Za-z0-9_.-]+$/);
    await page.goto(`${fx.publicOrigin}${link}`);
    await page.selectOption("#speed", "8");
    await page.waitForSelector('#status[data-state="ended"]', { timeout: 60_000 });
    const played = await page.locator("#player .ap-line").allTextContents();
    expect(played.map((l) => l.trimEnd())).toContain("hello");
    if (process.env["SVC_WEB_SCREENSHOTS"])
      await page.screenshot({ path: `${process.env["SVC_WEB_SCREENSHOTS"]}/recording.png` });

    expect(pageErrors).toEqual([]);
    await page.close();
  }, 240_000);

  it("serves the pages with a strict CSP and no inline script", async () => {
    const res = await fx.client.send({ path: "/web/terminal?node=x" });
    expect(res.status).toBe(200);
    const csp = String(res.headers["content-security-policy"]);
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toMatch(/script-src[^;]*unsafe/);
    expect(res.text).not.toMatch(/<script(?![^>]*\ssrc=)[^>]*>/);
    const vendor = await fx.client.send({ path: "/web/vendor/xterm.mjs" });
    expect(vendor.status).toBe(200);
    expect(vendor.headers["content-type"]).toContain("text/javascript");
    expect((await fx.client.send({ path: "/web/vendor/..%2Fpackage.json" })).status).toBe(404);
    expect((await fx.client.send({ path: "/web/assets/serve.ts" })).status).toBe(404);
  });
});
