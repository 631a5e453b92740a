// A real OpenID provider for the tests (the certified `oidc-provider` package) in its own process,
// over HTTPS with a throwaway CA, and a Chromium helper that signs in on the provider's own page.
//   const idp = await startOidcProvider({ clients, users });
//   ... auth.sso.ca_file = idp.caPem, connector issuer_url = idp.issuer ...
//   await idp.rotateKeys(); await idp.misbehave("wrong-nonce"); await idp.stop();
import { fileURLToPath } from "node:url";
import type { Page } from "playwright-core";
import { loopbackTls } from "../sts.ts";
import type { MisbehaveMode, OidcServerConfig, OidcTestClient, OidcTestUser } from "./oidc-types.ts";
import { startHarnessProcess } from "./process.ts";

export type { MisbehaveMode, OidcTestClient, OidcTestUser } from "./oidc-types.ts";

export interface OidcProviderOptions {
  clients: OidcTestClient[];
  users: OidcTestUser[];
  /** lifetime of the ID tokens it issues; default 3600 */
  idTokenTtlSeconds?: number;
}

export interface RunningOidcProvider {
  /** https://127.0.0.1:<port> (discovery at /.well-known/openid-configuration) */
  issuer: string;
  /** PEM of the CA that issued the provider's certificate (auth.sso.ca_file) */
  caPem: string;
  /** kid of the key it signs with now */
  kid: string;
  /** A new signing key with a new kid; the old key leaves the JWKS at once. */
  rotateKeys(): Promise<{ kid: string }>;
  /** Spoils the ID tokens the token endpoint hands out from now on (see MisbehaveMode). */
  misbehave(mode: MisbehaveMode, seconds?: number): Promise<void>;
  /** Requests seen so far, and the current kid. */
  stats(): Promise<{ jwksFetches: number; tokenRequests: number; idTokensTampered: number; kid: string }>;
  /** the provider process's id */
  pid: number;
  stop(): Promise<void>;
}

export async function startOidcProvider(o: OidcProviderOptions): Promise<RunningOidcProvider> {
  const tls = await loopbackTls();
  const config: OidcServerConfig = {
    tls: { key: tls.key, cert: tls.cert },
    clients: o.clients,
    users: o.users,
    ...(o.idTokenTtlSeconds === undefined ? {} : { idTokenTtlSeconds: o.idTokenTtlSeconds }),
  };
  const proc = await startHarnessProcess(fileURLToPath(new URL("./oidc-server.ts", import.meta.url)), config);
  return {
    issuer: String(proc.ready["issuer"]),
    caPem: tls.caPem,
    kid: String(proc.ready["kid"]),
    rotateKeys: async () => (await proc.control("rotate")) as { kid: string },
    misbehave: async (mode, seconds) => {
      await proc.control("misbehave", { mode, seconds });
    },
    stats: async () => (await proc.control("stats")) as Awaited<ReturnType<RunningOidcProvider["stats"]>>,
    pid: proc.pid,
    stop: () => proc.stop(),
  };
}

/**
 * On the provider's login page (the page must be showing it): fills in the user and password,
 * submits, and waits until the browser has left the provider (back at the relying party's
 * redirect URI). Throws with the page's error text when the provider refuses the password.
 */
export async function loginAtOidcProvider(page: Page, user: string, password: string): Promise<void> {
  const form = page.locator("form#login");
  await form.waitFor({ timeout: 15_000 });
  const origin = new URL(page.url()).origin;
  await form.locator('input[name="login"]').fill(user);
  await form.locator('input[name="password"]').fill(password);
  await form.locator('button[name="submit"]').click();
  // Either the browser leaves the provider (signed in) or the page shows why it did not.
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
  if (error !== null) throw new Error(`the provider refused the sign-in: ${error}`);
}

/** On the provider's login page: presses Cancel (the provider answers error=access_denied). */
export async function cancelAtOidcProvider(page: Page): Promise<void> {
  const form = page.locator("form#abort");
  await form.waitFor({ timeout: 15_000 });
  const origin = new URL(page.url()).origin;
  await Promise.all([
    page.waitForURL((u) => u.origin !== origin, { waitUntil: "commit", timeout: 15_000 }),
    form.locator('button[name="cancel"]').click(),
  ]);
}
