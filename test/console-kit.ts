// The web console's test kit: the real platform (auth, proxy on its public origin, one agent),
// headless Chromium, sign-in, screenshots at two sizes, axe-core and keyboard checks. Every
// test/console-<page>.test.ts drives its page through these (docs/console.md, "Tests").
import { execFileSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import AxeBuilder from "@axe-core/playwright";
import type { FastifyPluginAsync } from "fastify";
import pino from "pino";
import type { Page } from "playwright-core";
import { expect } from "vitest";
import { systemClock } from "../core/clock.ts";
import { type RunningAgent, runAgent } from "../server/agent/main.ts";
import { PasswordResets } from "../server/auth/admin-password-reset.ts";
import { NodeStore } from "../server/auth/nodes.ts";
import { setPassword } from "../server/auth/passwords.ts";
import { GrpcCliAuthApi } from "../server/proxy/cli-auth-api.ts";
import type { ProxyConfig } from "../server/proxy/config.ts";
import { passwordResetRoutes } from "../server/proxy/routes/password-reset.ts";
import { userCertRoutes } from "../server/proxy/routes/user-certs.ts";
import { launchChromium, type RunningChromium } from "./harness/chromium.ts";
import {
  type FixtureGrpc,
  NODES,
  PASSWORD,
  PUBLIC_HOST,
  startTerminalFixture,
  type TerminalFixture,
} from "./terminal-fixture.ts";

export { NODES, PASSWORD, PUBLIC_HOST };

const root = join(import.meta.dirname, "..");
export const SCREENSHOT_DIR = join(root, ".tmp", "screenshots");
export const DESKTOP = { width: 1280, height: 800 } as const;
export const MOBILE = { width: 390, height: 844 } as const;

export interface ConsoleUser {
  username: string;
  password: string;
}

export interface ConsolePlatformOptions {
  /** More proxy routes, built with the proxy's gRPC settings towards auth (e.g. the admin routes). */
  routes?: (grpc: FixtureGrpc) => FastifyPluginAsync[];
  /** The proxy's login rate limit (default: lifted far above what a test sends). */
  rateLimit?: ProxyConfig["rateLimit"];
}

export interface ConsolePlatform {
  /** https://proxy.svc.test:<port>: the origin the browser uses (mapped to loopback). */
  origin: string;
  /** alice: the admin role (logins alice, root). */
  admin: ConsoleUser;
  /** dave: the access role (login root). */
  user: ConsoleUser;
  /** The underlying fixture: env (auth, backend, source, addToken), agent (NODES.agent), sshd, client. */
  fx: TerminalFixture;
  /** Records a node as heartbeating (fast; for lists). It cannot be connected to. */
  addNode(hostname: string, labels?: Record<string, string>): Promise<void>;
  /** Starts one more real agent that joins with a fresh token and heartbeats. */
  startAgent(hostname: string, labels?: Record<string, string>): Promise<RunningAgent>;
  /** Gives a user a password (users come from the fixture's resources: alice, bob, dave, erin). */
  setPassword(username: string, password?: string): Promise<void>;
  /** A one-time reset token for /web/reset?token=… (what `svcctl users reset` prints a link for). */
  issueResetToken(username: string): Promise<string>;
  close(): Promise<void>;
}

let builtOnce = false;

/** `make console` (a no-op when dist/console is newer than its sources). */
export function ensureConsoleBuilt(): void {
  if (builtOnce) return;
  execFileSync("make", ["--no-print-directory", "console"], { cwd: root, stdio: "inherit" });
  builtOnce = true;
}

let current: ConsolePlatform | undefined;

export async function startConsolePlatform(opts: ConsolePlatformOptions = {}): Promise<ConsolePlatform> {
  ensureConsoleBuilt();
  const fx = await startTerminalFixture({
    ...(opts.rateLimit ? { rateLimit: opts.rateLimit } : {}),
    routes: (grpc) => {
      const cli = new GrpcCliAuthApi(grpc);
      return [
        passwordResetRoutes({ api: cli }),
        userCertRoutes({ api: cli }),
        ...(opts.routes?.(grpc) ?? []),
      ];
    },
  });
  const agents: RunningAgent[] = [];
  const nodes = new NodeStore({ backend: fx.env.backend, clock: systemClock });
  let n = 0;
  const platform: ConsolePlatform = {
    origin: fx.publicOrigin,
    admin: { username: "alice", password: PASSWORD },
    user: { username: "dave", password: PASSWORD },
    fx,
    async addNode(hostname, labels = {}) {
      await nodes.heartbeat(`node-${hostname}`, {
        hostname,
        addresses: ["127.0.0.1:9"],
        labels,
        version: "0.1.0",
      });
    },
    async startAgent(hostname, labels = {}) {
      n += 1;
      const agent = await runAgent({
        authAddress: fx.env.address,
        authServerName: fx.env.serverName,
        caPin: fx.env.pin,
        token: await fx.env.addToken(`console-agent-${n}`),
        dataDir: join(fx.env.dir, `agent-${n}`),
        listen: "127.0.0.1:0",
        hostname,
        labels,
        logger: pino({ level: "silent" }),
        heartbeatIntervalSeconds: 3600,
      });
      agents.push(agent);
      return agent;
    },
    async setPassword(username, password = PASSWORD) {
      await setPassword(fx.env.backend, username, password);
    },
    async issueResetToken(username) {
      return (await new PasswordResets({ backend: fx.env.backend, clock: systemClock }).issue(username))
        .token;
    },
    async close() {
      for (const a of agents.splice(0)) await a.close().catch(() => undefined);
      await fx.close();
      if (current === platform) current = undefined;
    },
  };
  current = platform;
  return platform;
}

/** Headless Chromium as the other browser tests launch it, at 1280x800, the public name on loopback. */
export async function launchConsoleBrowser(): Promise<RunningChromium> {
  return launchChromium({ loopbackHosts: [PUBLIC_HOST], ignoreHTTPSErrors: true, viewport: { ...DESKTOP } });
}

/**
 * Collects what must never happen on a console page: uncaught errors and console errors (a CSP
 * violation is one). Refused requests the page expects (a 401 probe) are logged by Chromium as
 * "Failed to load resource" and left out.
 */
export function watchPage(page: Page): string[] {
  const problems: string[] = [];
  page.on("pageerror", (e) => problems.push(`pageerror: ${e.message}`));
  page.on("console", (m) => {
    if (m.type() === "error" && !m.text().startsWith("Failed to load resource")) {
      problems.push(`console: ${m.text()}`);
    }
  });
  return problems;
}

/** The origin of the platform started last (tests run one platform per file). */
function origin(): string {
  if (!current) throw new Error("startConsolePlatform() first");
  return current.origin;
}

/**
 * Signs in on /web/login with a password as a person would and waits until the console leaves the
 * sign-in page. `next` is the console page to land on (default: the console's start page).
 */
export async function signIn(
  page: Page,
  username: string,
  password: string = PASSWORD,
  o: { next?: string; origin?: string } = {},
): Promise<void> {
  const base = o.origin ?? origin();
  const query = o.next ? `?next=${encodeURIComponent(o.next)}` : "";
  await page.goto(`${base}/web/login${query}`);
  await page.fill("#username", username);
  await page.fill("#password", password);
  await page.click("#submit");
  await page.waitForURL((u) => u.pathname !== "/web/login", { timeout: 30_000 });
}

/**
 * Screenshots of the page at 1280x800 and 390x844 into .tmp/screenshots/<name>-<w>x<h>.png (full
 * page); the viewport is 1280x800 again afterwards.
 */
export async function shoot(page: Page, name: string): Promise<string[]> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const files: string[] = [];
  for (const size of [DESKTOP, MOBILE]) {
    await page.setViewportSize(size);
    // Layout settles after a resize (media queries, a terminal's fit): two frames are enough.
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    const file = join(SCREENSHOT_DIR, `${name}-${size.width}x${size.height}.png`);
    await page.screenshot({ path: file, fullPage: true });
    files.push(file);
  }
  await page.setViewportSize(DESKTOP);
  return files;
}

/** axe-core (WCAG 2.1 A/AA rules) on the page as it is now: no serious or critical violation. */
export async function expectAccessible(page: Page, o: { exclude?: string[] } = {}): Promise<void> {
  let builder = new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]);
  for (const sel of o.exclude ?? []) builder = builder.exclude(sel);
  const result = await builder.analyze();
  const bad = result.violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${v.impact} ${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(" ")).join(", ")})`);
  expect(bad, `axe on ${page.url()}`).toEqual([]);
}

/** Tab from the top of the page reaches each selector (in any order) within `maxTabs` presses. */
export async function expectKeyboardReachable(page: Page, selectors: string[], maxTabs = 80): Promise<void> {
  await page.evaluate(() => {
    (document.activeElement as HTMLElement | null)?.blur();
    window.scrollTo(0, 0);
  });
  const missing = new Set(selectors);
  for (let i = 0; i < maxTabs && missing.size > 0; i++) {
    await page.keyboard.press("Tab");
    for (const sel of [...missing]) {
      const hit = await page.evaluate((s) => {
        const el = document.activeElement;
        return el !== null && el !== document.body && el.matches(s);
      }, sel);
      if (hit) missing.delete(sel);
    }
  }
  expect([...missing], `not reachable with Tab on ${page.url()}`).toEqual([]);
}
