// The audit log page in Chromium against the real platform: an admin searches by event type, user
// and time window, turns pages and opens an event's detail (also from a link); the session events
// of a real recorded session link to its recording; an ordinary user is told the log is not theirs.
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type ConsolePlatform,
  expectAccessible,
  expectKeyboardReachable,
  launchConsoleBrowser,
  shoot,
  signIn,
  startConsolePlatform,
  watchPage,
} from "./console-kit.ts";
import { type RecordedSession, recordSession } from "./console-recording-session.ts";
import type { RunningChromium } from "./harness/chromium.ts";

let platform: ConsolePlatform;
let chrome: RunningChromium;
let session: RecordedSession;
const BATCH = 12;
const dayAgo = Date.now() - 86_400_000;

beforeAll(async () => {
  platform = await startConsolePlatform();
  chrome = await launchConsoleBrowser();
  session = await recordSession(platform, "dave", "echo audited-$((2*3))", "audited-6");
  // A batch of one type a day ago, a minute apart, so there are pages and a window to pick.
  for (let i = 0; i < BATCH; i++) {
    await platform.fx.env.backend.appendAudit({
      event_type: "test.batch",
      user_name: i % 2 === 0 ? "erin" : "bob",
      success: i % 3 !== 0,
      fields: { n: i, note: `batch event ${i}`, nested: { ok: true } },
      time: new Date(dayAgo + i * 60_000),
    });
  }
}, 240_000);

afterAll(async () => {
  await chrome?.close();
  await platform?.close();
}, 60_000);

interface Row {
  id: string;
  type: string;
  user: string;
}

const rows = (page: Page): Promise<Row[]> =>
  page.locator("#audit tbody tr").evaluateAll((trs) =>
    trs.map((tr) => ({
      id: tr.getAttribute("data-key") ?? "",
      type: tr.querySelector('[data-col="type"]')?.textContent ?? "",
      user: tr.querySelector('[data-col="user"]')?.textContent ?? "",
    })),
  );

async function waitForRows(page: Page, predicate: (r: Row[]) => boolean, what: string): Promise<Row[]> {
  for (let i = 0; i < 100; i++) {
    const r = await rows(page);
    if (predicate(r)) return r;
    await page.waitForTimeout(100);
  }
  throw new Error(`audit log never showed ${what}: ${JSON.stringify(await rows(page))}`);
}

async function search(page: Page, values: Record<string, string>): Promise<void> {
  for (const [name, value] of Object.entries(values)) await page.fill(`.filter-bar [name="${name}"]`, value);
  await page.click('.filter-bar button[type="submit"]');
}

/** datetime-local text for a moment, in the browser's (and this process's) local time. */
function local(ms: number): string {
  return new Date(ms - new Date(ms).getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
}

describe("audit log", () => {
  it("an admin searches by type, user and time, pages, and reads an event's detail", async () => {
    const page = await chrome.context.newPage();
    const problems = watchPage(page);
    await signIn(page, platform.admin.username, platform.admin.password, { next: "/web/audit" });
    expect(await page.textContent("h1")).toBe("Audit log");
    await waitForRows(page, (r) => r.length > 0, "any event");
    await shoot(page, "audit");
    await expectAccessible(page);
    await expectKeyboardReachable(page, [
      "#filter-type",
      "#filter-user",
      "#filter-from",
      "#filter-to",
      ".detail-button",
    ]);

    // By type: only that type, newest first; the page size and pages.
    await search(page, { type: "test.batch" });
    let r = await waitForRows(page, (x) => x.length === BATCH, "the batch");
    expect(r.every((e) => e.type === "test.batch")).toBe(true);
    await page.selectOption("select.page-size", "10");
    r = await waitForRows(page, (x) => x.length === 10, "ten a page");
    expect(await page.textContent("nav.pager .pager-page")).toBe(`1–10 of ${BATCH}`);
    await page.click("button.pager-next");
    r = await waitForRows(page, (x) => x.length === BATCH - 10, "the second page");
    expect(await page.textContent("nav.pager .pager-page")).toBe(`11–${BATCH} of ${BATCH}`);

    // By type and user; by user alone across types.
    await search(page, { type: "test.batch", user: "erin" });
    r = await waitForRows(page, (x) => x.length === BATCH / 2, "erin's batch events");
    expect(r.every((e) => e.user === "erin")).toBe(true);
    await search(page, { type: "", user: "dave" });
    r = await waitForRows(page, (x) => x.length > 0 && x.every((e) => e.user === "dave"), "dave's events");
    const types = new Set(r.map((e) => e.type));
    for (const t of ["user.login", "session.start", "session.end"]) expect(types, t).toContain(t);

    // A time window: three minutes of the batch, start inclusive and end exclusive.
    await search(page, { user: "", type: "", from: local(dayAgo), to: local(dayAgo + 3 * 60_000) });
    r = await waitForRows(page, (x) => x.length === 3, "a three-minute window");
    expect(r.every((e) => e.type === "test.batch")).toBe(true);
    await search(page, { from: local(Date.now() + 3600_000), to: "" });
    await page.waitForSelector(".empty-state");
    expect(await page.textContent(".empty-state")).toContain("No event matches");

    // An event's detail: every field, in a dialog; Escape closes it, the link opens it again.
    await search(page, { from: "", type: "test.batch", user: "bob" });
    r = await waitForRows(page, (x) => x.length === BATCH / 2, "bob's batch events");
    const first = r[0];
    if (!first) throw new Error("no row");
    await page.click(`#audit tr[data-key="${first.id}"] .detail-button`);
    const dialog = page.locator("#event-dialog");
    await dialog.waitFor({ state: "visible" });
    expect(await dialog.locator("h2").textContent()).toBe("Event test.batch");
    const text = (await dialog.textContent()) ?? "";
    expect(text).toContain("batch event 11");
    expect(text).toContain('"ok": true');
    expect(text).toContain(first.id);
    expect(page.url()).toContain(`event=${encodeURIComponent(first.id)}`);
    await shoot(page, "audit-detail");
    await expectAccessible(page);
    await page.keyboard.press("Escape");
    await dialog.waitFor({ state: "hidden" });
    // The page drops event= from the URL as the dialog closes; the two may land in either order.
    await page.waitForURL((u) => !u.search.includes("event="), { timeout: 5_000 });
    await page.goto(`${page.url()}&event=${encodeURIComponent(first.id)}`);
    await dialog.waitFor({ state: "visible" });
    await page.click("#event-dialog .dialog-actions button");
    await dialog.waitFor({ state: "hidden" });
    // A linked event that is not among the results shown says so instead of opening nothing.
    await page.goto(`${platform.origin}/web/audit?type=user.login&event=${encodeURIComponent(first.id)}`);
    await page.waitForSelector("#event-missing");
    expect(await dialog.isVisible()).toBe(false);
    expect(problems).toEqual([]);
    await page.close();
  }, 120_000);

  it("a session's end links to its recording", async () => {
    const page = await chrome.context.newPage();
    const problems = watchPage(page);
    await signIn(page, platform.admin.username, platform.admin.password, {
      next: "/web/audit?type=session.end&user=dave",
    });
    const r = await waitForRows(page, (x) => x.length === 1, "dave's session end");
    await page.click(`#audit tr[data-key="${r[0]?.id}"] .detail-button`);
    const link = page.locator("#event-dialog a", { hasText: "recording" });
    expect(await link.getAttribute("href")).toBe(`/web/recordings/${session.id}`);
    await link.click();
    await page.waitForURL((u) => u.pathname === `/web/recordings/${session.id}`);
    expect(problems).toEqual([]);
    await page.close();
  }, 60_000);

  it("an ordinary user is told the audit log is for administrators", async () => {
    const page = await chrome.context.newPage();
    const problems = watchPage(page);
    await signIn(page, platform.user.username, platform.user.password, { next: "/web/audit" });
    await page.waitForSelector("[role=alert]:not(:empty)");
    expect(await page.textContent("[role=alert]")).toContain("for administrators");
    expect(await page.locator("#audit").count()).toBe(0);
    expect(await page.locator(".filter-bar").count()).toBe(0);
    await shoot(page, "audit-refused");
    await expectAccessible(page);
    expect(problems).toEqual([]);
    await page.close();
  }, 60_000);
});
