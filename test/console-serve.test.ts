// How the proxy serves the built console (web/serve.ts, docs/console.md): index.html for every
// console route, revalidated; content-hashed assets cached for a year; the strict CSP on
// everything, and nothing inline for it to allow. Then Chromium loads a page with no session and
// lands on sign-in with the page kept in `next`, without a single CSP report or page error.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CONSOLE_ROUTES } from "../web/serve.ts";
import { ensureConsoleBuilt, launchConsoleBrowser, watchPage } from "./console-kit.ts";
import type { RunningChromium } from "./harness/chromium.ts";
import { type SsoPlatform, startSsoPlatform } from "./sso-fixture.ts";

let platform: SsoPlatform;
let chrome: RunningChromium;

beforeAll(async () => {
  ensureConsoleBuilt();
  platform = await startSsoPlatform();
  chrome = await launchConsoleBrowser();
}, 240_000);

afterAll(async () => {
  await chrome?.close();
  await platform?.close();
}, 60_000);

const EXPECTED_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
];

describe("serving the console", () => {
  it("answers index.html on every console route with no-cache, the strict CSP and no inline code", async () => {
    const first = await platform.client.send({ path: "/web/nodes" });
    expect(first.status).toBe(200);
    expect(first.headers["content-type"]).toBe("text/html; charset=utf-8");
    expect(first.headers["cache-control"]).toBe("no-cache");
    const csp = String(first.headers["content-security-policy"]);
    for (const directive of EXPECTED_CSP) expect(csp.split(";").map((d) => d.trim())).toContain(directive);
    expect(csp).not.toContain("unsafe");
    expect(csp).toMatch(/connect-src 'self'( wss:\/\/[^;]+)?(;|$)/);
    // Every script has a src (ours), nothing inline: no <style>, no style= or on*= attributes.
    const scripts = [...first.text.matchAll(/<script\b([^>]*)>/g)].map((m) => m[1] ?? "");
    expect(scripts.length).toBeGreaterThan(0);
    for (const attrs of scripts) expect(attrs).toMatch(/\ssrc="\/web\/assets\/[^"]+"/);
    expect(first.text).not.toMatch(/<style\b|\sstyle=|\son[a-z]+=/i);
    expect(first.text).not.toMatch(/https?:\/\//);

    for (const route of CONSOLE_ROUTES) {
      const res = await platform.client.send({ path: route });
      expect(res.status, route).toBe(200);
      expect(res.text, route).toBe(first.text);
    }
  });

  it("allows WebAssembly (never eval, inline script or inline style) only on the recording player", async () => {
    const player = await platform.client.send({ path: "/web/recordings/x" });
    expect(player.status).toBe(200);
    expect(player.text).toBe((await platform.client.send({ path: "/web/nodes" })).text);
    const csp = String(player.headers["content-security-policy"]);
    expect(csp).toContain("script-src 'self' 'wasm-unsafe-eval';");
    expect(csp).toContain("style-src 'self';");
    expect(csp).toContain("default-src 'self';");
    expect(csp.replace("'wasm-unsafe-eval'", "")).not.toContain("unsafe");
    // The console's terminal turns xterm's styles into CSSOM: the strict policy holds there too.
    for (const path of ["/web/account", "/web/terminal?node=x", "/web/recordings"]) {
      const other = String((await platform.client.send({ path })).headers["content-security-policy"]);
      expect(other, path).not.toContain("unsafe");
    }
  });

  it("serves the hashed assets immutable and refuses anything else under /web/assets", async () => {
    const index = (await platform.client.send({ path: "/web/nodes" })).text;
    const assets = [...index.matchAll(/(?:src|href)="(\/web\/assets\/[^"]+)"/g)].map((m) => m[1] ?? "");
    expect(assets.some((a) => a.endsWith(".js"))).toBe(true);
    expect(assets.some((a) => a.endsWith(".css"))).toBe(true);
    for (const path of assets) {
      // Vite names each file after its content: <name>-<hash>.<ext>
      expect(path).toMatch(/^\/web\/assets\/[\w.-]+-[\w-]{8}\.(js|css)$/);
      const res = await platform.client.send({ path });
      expect(res.status, path).toBe(200);
      expect(res.headers["cache-control"]).toBe("public, max-age=31536000, immutable");
      expect(res.headers["content-type"]).toMatch(path.endsWith(".js") ? /^text\/javascript/ : /^text\/css/);
      expect(res.headers["content-security-policy"]).toBeDefined();
    }
    for (const path of [
      "/web/assets/nope-12345678.js",
      "/web/assets/..%2Fserve.ts",
      "/web/assets/serve.ts",
    ]) {
      expect((await platform.client.send({ path })).status, path).toBe(404);
    }
  });

  it("sends a visitor without a session to sign-in, keeping the page, with no CSP violation", async () => {
    const page = await chrome.context.newPage();
    const problems = watchPage(page);
    const csp: string[] = [];
    page.on("console", (m) => {
      if (/Content Security Policy/i.test(m.text())) csp.push(m.text());
    });
    await page.goto(`${platform.publicOrigin}/web/audit?type=session.start`);
    await page.waitForURL(/\/web\/login\?/, { timeout: 30_000 });
    const next = new URL(page.url()).searchParams.get("next");
    expect(next).toBe("/web/audit?type=session.start");
    expect(csp).toEqual([]);
    expect(problems).toEqual([]);
    await page.close();
  });
});
