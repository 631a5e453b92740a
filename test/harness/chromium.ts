// Headless Chromium from the Debian package, driven by playwright-core (never a browser download).
// A fresh profile folder per launch, no background networking, and host names mapped to loopback
// so a page can be opened under the proxy's public name (its certificate and cookies use it).
import { execFileSync } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BrowserContext, chromium, type Page } from "playwright-core";

export interface ChromiumOptions {
  /** host names resolved to 127.0.0.1 inside the browser (e.g. the proxy's public name) */
  loopbackHosts?: string[];
  /** host names resolved to the given address inside the browser (a public name → a Service) */
  hostMap?: Record<string, string>;
  /** accept certificates the browser does not trust (our test host CA) */
  ignoreHTTPSErrors?: boolean;
  viewport?: { width: number; height: number };
}

export interface RunningChromium {
  context: BrowserContext;
  close(): Promise<void>;
}

export function chromiumPath(): string {
  const fromEnv = process.env["CHROMIUM_PATH"];
  if (fromEnv) return fromEnv;
  for (const name of ["chromium", "chromium-browser"]) {
    try {
      const p = execFileSync("which", [name], { encoding: "utf8" }).trim();
      if (p) return p;
    } catch {
      // try the next name
    }
  }
  throw new Error("chromium is not installed (Debian package `chromium`)");
}

export async function launchChromium(o: ChromiumOptions = {}): Promise<RunningChromium> {
  // A fresh profile folder per launch (playwright takes it as userDataDir, not as an argument).
  const profile = await mkdtemp(join(tmpdir(), "svc-chromium-"));
  const rules = [
    ...(o.loopbackHosts ?? []).map((h) => `MAP ${h} 127.0.0.1`),
    ...Object.entries(o.hostMap ?? {}).map(([h, ip]) => `MAP ${h} ${ip}`),
  ];
  try {
    const context = await chromium.launchPersistentContext(profile, {
      executablePath: chromiumPath(),
      headless: true,
      timeout: 120_000,
      ignoreHTTPSErrors: o.ignoreHTTPSErrors ?? false,
      viewport: o.viewport ?? { width: 1000, height: 700 },
      args: [
        "--no-sandbox",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--disable-gpu",
        ...(rules.length > 0 ? [`--host-resolver-rules=${rules.join(",")}`] : []),
      ],
    });
    for (const page of context.pages()) retryOnNetworkChange(page);
    context.on("page", retryOnNetworkChange);
    return {
      context,
      close: async () => {
        await context.close().catch(() => undefined);
        await rm(profile, { recursive: true, force: true });
      },
    };
  } catch (err) {
    await rm(profile, { recursive: true, force: true });
    throw err;
  }
}

/**
 * Chromium aborts a navigation with net::ERR_NETWORK_CHANGED when the host's interfaces change
 * under it, which other tests do when they create and remove network namespaces and veth pairs.
 * Nothing about loopback changed, so the page's navigations are tried again (at most 3 times).
 */
function retryOnNetworkChange(page: Page): void {
  const goto = page.goto.bind(page);
  page.goto = async (url, options) => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await goto(url, options);
      } catch (err) {
        if (attempt >= 3 || !String(err).includes("net::ERR_NETWORK_CHANGED")) throw err;
      }
    }
  };
}
