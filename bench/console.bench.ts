// The web console with 10,000 nodes registered (`npm run bench -- console`): the time from the
// sign-in form's submit until the nodes list is on screen, in headless Chromium against the real
// auth, proxy and console build, with the browser cache off (a first visit) and on (a returning
// user); the baseline is the bare API work the same view needs (POST login + GET the first page
// of nodes over HTTPS), measured in the same run, interleaved. Also the JavaScript a first load
// ships (gzip bytes of every script the sign-in page, then the nodes page, fetch) against the
// bare HTML document that carries it.
// SVC_BENCH_CONSOLE_NODES / SVC_BENCH_CONSOLE_RUNS shrink it.
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import type { Page } from "playwright-core";
import { systemClock } from "../core/clock.ts";
import { NodeStore } from "../server/auth/nodes.ts";
import { launchChromium } from "../test/harness/chromium.ts";
import { PASSWORD, PUBLIC_HOST, startTerminalFixture } from "../test/terminal-fixture.ts";
import type { BenchReport, BenchRow } from "./report.ts";
import { percentile } from "./report.ts";

const NODES = Number(process.env["SVC_BENCH_CONSOLE_NODES"] ?? 10_000);
const RUNS = Number(process.env["SVC_BENCH_CONSOLE_RUNS"] ?? 12);
const WARMUP = 2;
const USER = "alice";

function row(name: string, xs: number[], note?: string): BenchRow {
  const p95 = percentile(xs, 95);
  return {
    name,
    p50Ms: percentile(xs, 50),
    p99Ms: percentile(xs, 99),
    note: `p95 ${p95.toFixed(1)} ms, n=${xs.length}${note ? `; ${note}` : ""}`,
  };
}

const gz = (b: Buffer): number => gzipSync(b, { level: 9 }).length;

/** Signs in on the console's form and waits for the first node row; ms from submit to visible. */
async function signInToNodes(page: Page, origin: string): Promise<number> {
  await page.goto(`${origin}/web/login?next=${encodeURIComponent("/web/nodes")}`);
  await page.fill("#username", USER);
  await page.fill("#password", PASSWORD);
  const t0 = performance.now();
  await page.click("#submit");
  await page.locator("#nodes-table tbody tr").first().waitFor({ state: "visible", timeout: 60_000 });
  return performance.now() - t0;
}

export default async function bench(): Promise<BenchReport> {
  execFileSync("make", ["--no-print-directory", "console"], {
    cwd: join(import.meta.dirname, ".."),
    stdio: "ignore",
  });
  const fx = await startTerminalFixture();
  const chrome = await launchChromium({ loopbackHosts: [PUBLIC_HOST], ignoreHTTPSErrors: true });
  try {
    const store = new NodeStore({ backend: fx.env.backend, clock: systemClock });
    const batch = 200;
    for (let i = 0; i < NODES; i += batch) {
      const puts: Promise<void>[] = [];
      for (let j = i; j < Math.min(NODES, i + batch); j++) {
        puts.push(
          store.heartbeat(`bench-${j}`, {
            hostname: `host-${String(j).padStart(5, "0")}`,
            addresses: ["10.0.0.1:3022"],
            labels: { env: ["prod", "dev", "staging"][j % 3] ?? "prod", rack: `r${j % 40}` },
            version: "1.0.0",
          }),
        );
      }
      await Promise.all(puts);
    }

    // JavaScript on a first load: what the sign-in page fetches, then what the nodes page adds.
    const page = await chrome.context.newPage();
    const cdp = await chrome.context.newCDPSession(page);
    const scripts = new Map<string, number>();
    let phase: "signin" | "nodes" = "signin";
    const perPhase = { signin: 0, nodes: 0 };
    page.on("response", async (res) => {
      const url = res.url();
      if (!url.endsWith(".js") || scripts.has(url)) return;
      const size = gz(await res.body());
      scripts.set(url, size);
      perPhase[phase] += size;
    });
    await cdp.send("Network.setCacheDisabled", { cacheDisabled: true });
    await page.goto(`${fx.publicOrigin}/web/login?next=${encodeURIComponent("/web/nodes")}`);
    await page.waitForSelector("#submit");
    phase = "nodes";
    await page.fill("#username", USER);
    await page.fill("#password", PASSWORD);
    await page.click("#submit");
    await page.locator("#nodes-table tbody tr").first().waitFor({ state: "visible", timeout: 60_000 });
    await page.waitForLoadState("networkidle");
    const html = await fx.client.send({ path: "/web/login" });
    const htmlGzip = gz(Buffer.from(html.text));

    // Sign-in to visible nodes (cache off, then on) against the bare API calls, interleaved.
    const cold: number[] = [];
    const warm: number[] = [];
    const rest: number[] = [];
    const list: number[] = [];
    const search: number[] = [];
    for (let i = 0; i < RUNS + WARMUP; i++) {
      const keep = i >= WARMUP;
      await chrome.context.clearCookies();
      await cdp.send("Network.setCacheDisabled", { cacheDisabled: true });
      const c = await signInToNodes(page, fx.publicOrigin);
      await chrome.context.clearCookies();
      await cdp.send("Network.setCacheDisabled", { cacheDisabled: false });
      const w = await signInToNodes(page, fx.publicOrigin);

      const t0 = performance.now();
      const { sessionId } = await fx.login(USER);
      const t1 = performance.now();
      const res = await fx.client.send({
        path: "/v1/webapi/nodes?limit=50",
        headers: { authorization: `Bearer ${sessionId}` },
      });
      const t2 = performance.now();
      if (res.status !== 200) throw new Error(`GET nodes: ${res.status} ${res.text}`);
      const total = (res.json as { total_count: number }).total_count;
      if (total < NODES) throw new Error(`expected ${NODES} nodes, the API counts ${total}`);
      const s0 = performance.now();
      const found = await fx.client.send({
        path: "/v1/webapi/nodes?limit=50&search=host-099&labels=env%3Dprod",
        headers: { authorization: `Bearer ${sessionId}` },
      });
      const s1 = performance.now();
      if (found.status !== 200) throw new Error(`GET nodes?search: ${found.status}`);
      if (keep) {
        cold.push(c);
        warm.push(w);
        rest.push(t2 - t0);
        list.push(t2 - t1);
        search.push(s1 - s0);
      }
    }
    await page.close();

    const p50 = (xs: number[]) => percentile(xs, 50);
    const signinJs = perPhase.signin;
    const firstLoadJs = perPhase.signin + perPhase.nodes;
    return {
      title: `console: sign-in to a visible nodes list with ${NODES.toLocaleString("en")} nodes (Chromium, real auth+proxy)`,
      rows: [
        row("sign-in submit -> nodes visible (cache off)", cold),
        row("sign-in submit -> nodes visible (cache on)", warm),
        row("baseline: POST login + GET nodes (limit 50)", rest, "HTTPS from Node, no browser"),
        row(`GET nodes, first page of ${NODES}`, list),
        row("GET nodes, search + label filter", search),
        {
          name: "JS on first load (sign-in page), gzip",
          note: `${signinJs} B over ${[...scripts.keys()].length} scripts in all`,
        },
        { name: "JS on first load (sign-in + nodes), gzip", note: `${firstLoadJs} B` },
        { name: "baseline: bare HTML document, gzip", note: `${htmlGzip} B` },
      ],
      ratios: [
        {
          name: "visible (cache off) / bare API calls, p50",
          ratio: p50(cold) / p50(rest),
          lowerIsBetter: true,
        },
        {
          name: "visible (cache on) / bare API calls, p50",
          ratio: p50(warm) / p50(rest),
          lowerIsBetter: true,
        },
        {
          name: "first-load JS / bare HTML document (gzip)",
          ratio: firstLoadJs / htmlGzip,
          lowerIsBetter: true,
        },
      ],
    };
  } finally {
    await chrome.close();
    await fx.close();
  }
}
