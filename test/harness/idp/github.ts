// A GitHub stand-in for the tests (github-server.ts) in its own process, over HTTPS with a
// throwaway CA, and a Chromium helper that signs in and clicks "Authorize" on its page.
//   const gh = await startGithubStandIn({ apps, users });
//   ... connector endpoint_url = gh.url, api_endpoint_url = gh.apiUrl, auth.sso.ca_file = gh.caPem ...
// What it does not prove about the real GitHub is listed in the SSO security document.
import { fileURLToPath } from "node:url";
import type { Page } from "playwright-core";
import { loopbackTls } from "../sts.ts";
import type { GithubServerConfig, GithubTestApp, GithubTestUser } from "./github-types.ts";
import { startHarnessProcess } from "./process.ts";

export type { GithubTestApp, GithubTestOrg, GithubTestUser } from "./github-types.ts";

export interface GithubStandInOptions {
  apps: GithubTestApp[];
  users: GithubTestUser[];
  /** refuse an authorization request without PKCE (GitHub itself does not); default true */
  requirePkce?: boolean;
}

export interface RunningGithubStandIn {
  /** web base URL (connector endpoint_url): /login/oauth/authorize, /login/oauth/access_token */
  url: string;
  /** REST API base URL (connector api_endpoint_url), GitHub Enterprise style: <url>/api/v3 */
  apiUrl: string;
  /** PEM of the CA that issued its certificate (auth.sso.ca_file) */
  caPem: string;
  stats(): Promise<{
    authorizeRequests: number;
    tokenRequests: number;
    tokensIssued: number;
    apiRequests: number;
  }>;
  /** the provider process's id */
  pid: number;
  stop(): Promise<void>;
}

export async function startGithubStandIn(o: GithubStandInOptions): Promise<RunningGithubStandIn> {
  const tls = await loopbackTls();
  const config: GithubServerConfig = {
    tls: { key: tls.key, cert: tls.cert },
    apps: o.apps,
    users: o.users,
    requirePkce: o.requirePkce ?? true,
  };
  const proc = await startHarnessProcess(
    fileURLToPath(new URL("./github-server.ts", import.meta.url)),
    config,
  );
  return {
    url: String(proc.ready["url"]),
    apiUrl: String(proc.ready["apiUrl"]),
    caPem: tls.caPem,
    stats: async () => (await proc.control("stats")) as Awaited<ReturnType<RunningGithubStandIn["stats"]>>,
    pid: proc.pid,
    stop: () => proc.stop(),
  };
}

/**
 * On the stand-in's authorize page (the page must be showing it): signs in as `login` and clicks
 * "Authorize"; waits until the browser has left for the redirect URI. Throws with the page's
 * error text when the password is refused.
 */
export async function authorizeAtGithub(page: Page, login: string, password: string): Promise<void> {
  const form = page.locator("form#authorize");
  await form.waitFor({ timeout: 15_000 });
  const origin = new URL(page.url()).origin;
  await form.locator('input[name="login"]').fill(login);
  await form.locator('input[name="password"]').fill(password);
  await form.locator('button[value="authorize"]').click();
  const left = page
    .waitForURL((u) => u.origin !== origin, { waitUntil: "commit", timeout: 15_000 })
    .then(() => null);
  const refused = page
    .locator("#error")
    .waitFor({ timeout: 15_000 })
    .then(async () => (await page.locator("#error").textContent()) ?? "refused");
  left.catch(() => undefined);
  refused.catch(() => undefined);
  const error = await Promise.race([left, refused]);
  if (error !== null) throw new Error(`the GitHub stand-in refused the sign-in: ${error}`);
}

/** On the stand-in's authorize page: clicks "Cancel" (answered with error=access_denied). */
export async function cancelAtGithub(page: Page): Promise<void> {
  const form = page.locator("form#cancel");
  await form.waitFor({ timeout: 15_000 });
  const origin = new URL(page.url()).origin;
  await Promise.all([
    page.waitForURL((u) => u.origin !== origin, { waitUntil: "commit", timeout: 15_000 }),
    form.locator("button").click(),
  ]);
}
