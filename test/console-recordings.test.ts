// The recordings pages in Chromium against the real platform: sessions recorded through the node
// agent are listed, filtered (user, node, start-time window), paged, and played in
// asciinema-player with play/pause, seek and speed; an ordinary user sees only their own.
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RecordingWriter } from "../server/auth/recordings.ts";
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
import { type RecordedSession, recordSession } from "./console-recording-session.ts";
import type { RunningChromium } from "./harness/chromium.ts";

let platform: ConsolePlatform;
let chrome: RunningChromium;
let daves: RecordedSession;
let alices: RecordedSession;
const OLD = 12;
const twoDaysAgo = Date.now() - 2 * 86_400_000;

/** Older recordings of a node "archive-1", written as auth stores them, so there are pages to turn. */
async function seedOld(): Promise<void> {
  for (let i = 0; i < OLD; i++) {
    const w = new RecordingWriter(platform.fx.env.backend, {
      id: `old-recording-${String(i).padStart(2, "0")}`,
      user_name: "alice",
      protocol: "ssh",
      node: "archive-1",
      login: "root",
      start_unix_ms: twoDaysAgo + i * 60_000,
      end_unix_ms: twoDaysAgo + i * 60_000 + 5000,
      format: "asciicast-v2",
    });
    await w.begin();
    await w.write(
      Buffer.from(`{"version": 2, "width": 80, "height": 24}\n[0.5, "o", "archived ${i}\\r\\n"]\n`),
    );
    await w.finish();
  }
}

beforeAll(async () => {
  platform = await startConsolePlatform();
  chrome = await launchConsoleBrowser();
  // Prints tick-1..tick-6 a second apart: about six seconds to seek through.
  daves = await recordSession(
    platform,
    "dave",
    "echo recorded-$((6*7)); for i in 1 2 3 4 5 6; do sleep 1; echo tick-$i; done",
    "tick-6",
  );
  alices = await recordSession(platform, "alice", "echo alice-was-here-$((1+1))", "alice-was-here-2");
  await seedOld();
}, 240_000);

afterAll(async () => {
  await chrome?.close();
  await platform?.close();
}, 60_000);

const rowIds = (page: Page): Promise<string[]> =>
  page
    .locator("#recordings tbody tr")
    .evaluateAll((rows) => rows.map((r) => r.getAttribute("data-key") ?? ""));

async function waitForRows(
  page: Page,
  predicate: (ids: string[]) => boolean,
  what: string,
): Promise<string[]> {
  for (let i = 0; i < 100; i++) {
    const ids = await rowIds(page);
    if (predicate(ids)) return ids;
    await page.waitForTimeout(100);
  }
  throw new Error(`recordings list never showed ${what}: ${(await rowIds(page)).join(", ")}`);
}

async function applyFilters(page: Page, values: Record<string, string>): Promise<void> {
  for (const [name, value] of Object.entries(values)) await page.fill(`.filter-bar [name="${name}"]`, value);
  await page.click('.filter-bar button[type="submit"]');
}

/** datetime-local text for a moment, in the browser's (and this process's) local time. */
function local(ms: number): string {
  const d = new Date(ms - new Date(ms).getTimezoneOffset() * 60_000);
  return d.toISOString().slice(0, 16);
}

/** The player's visible terminal text. */
const screenText = (page: Page): Promise<string> =>
  page.locator("#player .ap-line").evaluateAll((ls) => ls.map((l) => l.textContent ?? "").join("\n"));

const currentTime = (page: Page): Promise<number> =>
  page.evaluate(() =>
    (window as unknown as { svcPlayer: { getCurrentTime(): number } }).svcPlayer.getCurrentTime(),
  );

describe("recordings list", () => {
  it("an admin lists everyone's, filters by user, node and time, and turns pages", async () => {
    const page = await chrome.context.newPage();
    const problems = watchPage(page);
    await signIn(page, platform.admin.username, platform.admin.password, { next: "/web/recordings" });
    expect(new URL(page.url()).pathname).toBe("/web/recordings");
    expect(await page.textContent("h1")).toBe("Recordings");

    // Newest first: the two real sessions, then the archive (25 a page: all 14 on one).
    let ids = await waitForRows(page, (r) => r.length === OLD + 2, "every recording");
    expect(ids.slice(0, 2)).toEqual([alices.id, daves.id]);
    expect(await page.textContent("nav.pager .pager-page")).toBe(`1–${OLD + 2} of ${OLD + 2}`);
    const daveRow = page.locator(`#recordings tr[data-key="${daves.id}"]`);
    expect(await daveRow.locator('[data-col="user"]').textContent()).toBe("dave");
    expect(await daveRow.locator('[data-col="node"]').textContent()).toBe(NODES.agent);
    await shoot(page, "recordings");
    await expectAccessible(page);
    await expectKeyboardReachable(page, [
      "#filter-user",
      "#filter-node",
      "#filter-from",
      "#filter-to",
      "a.play-link",
    ]);

    // Ten a page: two pages, Next and Previous.
    await page.selectOption("select.page-size", "10");
    ids = await waitForRows(page, (r) => r.length === 10, "a page of ten");
    expect(page.url()).toContain("limit=10");
    await page.click("button.pager-next");
    ids = await waitForRows(page, (r) => r.length === OLD + 2 - 10, "the second page");
    expect(ids.every((id) => id.startsWith("old-recording-"))).toBe(true);
    expect(await page.textContent("nav.pager .pager-page")).toBe(`11–${OLD + 2} of ${OLD + 2}`);
    expect(await page.isDisabled("button.pager-next")).toBe(true);
    await page.click("button.pager-prev");
    await waitForRows(page, (r) => r[0] === alices.id, "the first page again");

    // By user, by node, by time window; the filters are in the URL, so a reload keeps them.
    await applyFilters(page, { user: "dave" });
    expect(await waitForRows(page, (r) => r.length === 1, "dave's only")).toEqual([daves.id]);
    await page.reload();
    expect(await waitForRows(page, (r) => r.length === 1, "dave's after a reload")).toEqual([daves.id]);
    expect(await page.inputValue("#filter-user")).toBe("dave");
    await applyFilters(page, { user: "", node: "archive-1" });
    await waitForRows(page, (r) => r.length === 10 && r.every((id) => id.startsWith("old-")), "the archive");
    await applyFilters(page, { node: "", from: local(Date.now() - 3600_000) });
    expect((await waitForRows(page, (r) => r.length === 2, "the last hour's")).sort()).toEqual(
      [alices.id, daves.id].sort(),
    );
    await applyFilters(page, { from: local(twoDaysAgo), to: local(twoDaysAgo + 3 * 60_000) });
    expect(await waitForRows(page, (r) => r.length === 3, "three minutes two days ago")).toEqual([
      "old-recording-02",
      "old-recording-01",
      "old-recording-00",
    ]);
    await applyFilters(page, { from: "", to: "", user: "nobody" });
    await page.waitForSelector(".empty-state");
    expect(await page.textContent(".empty-state")).toContain("No recording matches");
    await page.click('.filter-bar button[type="reset"]');
    await waitForRows(page, (r) => r.length === 10, "everything again");
    expect(problems).toEqual([]);
    await page.close();
  }, 120_000);

  it("an ordinary user sees only their own recordings and cannot open someone else's", async () => {
    const page = await chrome.context.newPage();
    const problems = watchPage(page);
    await signIn(page, platform.user.username, platform.user.password, { next: "/web/recordings" });
    expect(await waitForRows(page, (r) => r.length === 1, "dave's own")).toEqual([daves.id]);
    await applyFilters(page, { user: "alice" });
    await page.waitForSelector(".empty-state");
    await page.goto(`${platform.origin}/web/recordings/${alices.id}`);
    await page.waitForSelector('#status[data-state="error"]');
    expect(await page.textContent("[role=alert]")).toContain("No such recording");
    expect(problems).toEqual([]);
    await page.close();
  }, 60_000);
});

describe("recording player", () => {
  it("plays a real session; pause, seek and speed work; the page keeps to the CSP", async () => {
    const page = await chrome.context.newPage();
    const problems = watchPage(page);
    // Signed out: the player page sends us to sign-in and back.
    await chrome.context.clearCookies();
    await page.goto(`${platform.origin}/web/recordings/${daves.id}`);
    await page.waitForURL(/\/web\/login\?next=/);
    await signIn(page, platform.user.username, platform.user.password, {
      next: `/web/recordings/${daves.id}`,
    });
    expect(new URL(page.url()).pathname).toBe(`/web/recordings/${daves.id}`);

    // It starts playing on its own, also when the speed changes before it has started; the
    // output shows up as recorded.
    // Pause right away: the whole session lasts a few seconds at 2x, and on a loaded machine
    // waiting for output first could let it end, when the button means Replay, not Pause.
    await page.selectOption("#speed", "2");
    await page.waitForSelector('#status[data-state="playing"]', { timeout: 30_000 });
    await page.click("#play");
    await page.waitForSelector('#status[data-state="paused"]');
    const pausedAt = await currentTime(page);
    await page.waitForTimeout(700);
    expect(await currentTime(page)).toBe(pausedAt);
    await page.click("#play");
    await expect.poll(() => screenText(page), { timeout: 30_000 }).toContain("recorded-42");
    await page.waitForSelector('#status[data-state="ended"]', { timeout: 30_000 });

    // Seek to the end: every tick is on screen; back to the start: none.
    const duration = Number(await page.getAttribute("#seek", "max"));
    expect(duration).toBeGreaterThan(4);
    await page.fill("#seek", String(duration));
    await expect.poll(() => screenText(page)).toContain("tick-6");
    await page.fill("#seek", "0");
    await expect.poll(() => screenText(page)).not.toContain("tick-1");
    expect(await currentTime(page)).toBeLessThan(0.5);
    await page.click("#forward");
    await expect.poll(() => currentTime(page)).toBeGreaterThanOrEqual(4.9);

    // At 8x the rest of the session plays in well under its recorded time.
    await page.fill("#seek", "0");
    await page.selectOption("#speed", "8");
    await page.click("#play");
    const t0 = Date.now();
    await page.waitForSelector('#status[data-state="ended"]', { timeout: 30_000 });
    const took = Date.now() - t0;
    expect(took).toBeLessThan((duration * 1000) / 2);
    expect(await screenText(page)).toContain("tick-6");

    await shoot(page, "recording");
    await expectAccessible(page);
    await expectKeyboardReachable(page, ["#play", "#back", "#seek", "#forward", "#speed"]);
    expect(problems).toEqual([]);
    await page.close();
  }, 120_000);
});
