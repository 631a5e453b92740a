// `svc login --auth <connector>` end to end: the real svc binary, the real platform, a real OpenID
// provider (oidc-provider, its own process and login page) and headless Chromium opening the URL
// svc prints (or hands to $BROWSER). svc then holds a session like a password login: `svc status`
// shows the SSO user and the roles the connector mapped. Also: the cluster's default connector
// when password login is off, the WebAuthn step for a role requiring MFA (Chromium's virtual
// authenticator), a code planted on the loopback port, and the timeout.
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmod, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { docCommands } from "./chart-helm.ts";
import { bin, json, root, run, waitFor } from "./cli-fixture.ts";
import { launchChromium, type RunningChromium } from "./harness/chromium.ts";
import { loginAtOidcProvider, type RunningOidcProvider, startOidcProvider } from "./harness/idp/oidc.ts";
import { freePort } from "./harness/ports.ts";
import {
  addVirtualAuthenticator,
  connectorResource,
  enrolSecurityKey,
  PASSWORD,
  PUBLIC_HOST,
  roleResource,
  type SsoPlatform,
  startSsoPlatform,
  userResource,
} from "./sso-fixture.ts";

let oidc: RunningOidcProvider;
let platform: SsoPlatform;
/** local_login false, default_connector corp-oidc */
let ssoOnly: SsoPlatform;
let chrome: RunningChromium;
let dir: string;
const SECRET = randomBytes(16).toString("hex");

interface Svc {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<number | null>;
}

function startSvc(args: string[], env: NodeJS.ProcessEnv): Svc {
  const child = spawn(bin("svc"), args, {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout?.on("data", (d: Buffer) => {
    out += d.toString();
  });
  child.stderr?.on("data", (d: Buffer) => {
    err += d.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
  return { child, stdout: () => out, stderr: () => err, exited };
}

/** A command line from the docs, run by bash in the repository (as a user with a checkout). */
function startSvcShell(text: string, env: NodeJS.ProcessEnv): Svc {
  const child = spawn("bash", ["-euo", "pipefail", "-c", text], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout?.on("data", (d: Buffer) => {
    out += d.toString();
  });
  child.stderr?.on("data", (d: Buffer) => {
    err += d.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
  return { child, stdout: () => out, stderr: () => err, exited };
}

/** The URL svc prints for the browser. */
async function printedUrl(svc: Svc): Promise<string> {
  let url: string | undefined;
  await waitFor(() => {
    url = /https:\/\/\S+\/v1\/webapi\/sso\/requests\/\S+/.exec(svc.stderr())?.[0];
    return url !== undefined || svc.child.exitCode !== null;
  }, "svc to print the login URL");
  if (url === undefined) throw new Error(`svc printed no URL:\n${svc.stderr()}`);
  return url;
}

async function connectorsFor(origin: string, secretFile: string): Promise<unknown[]> {
  return [
    roleResource("mfa", {
      allow: { logins: ["{{external.email}}"], node_labels: { "*": "*" } },
      options: { require_mfa: true },
    }),
    userResource("root-admin", ["admin"]),
    connectorResource("corp-oidc", {
      type: "oidc",
      display_name: "Corp OIDC",
      settings: {
        client_id: "svc",
        issuer_url: oidc.issuer,
        redirect_url: `${origin}/v1/webapi/sso/callback`,
        scopes: ["openid", "email", "profile", "groups"],
      },
      client_secret_ref: { file: secretFile },
      claims_to_roles: [
        { claim: "groups", value: "devs", roles: ["access"] },
        { claim: "groups", value: "secure", roles: ["mfa"] },
      ],
    }),
  ];
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "svc-sso-cli-"));
  const [port, port2] = [await freePort(), await freePort()];
  const origins = [port, port2].map((p) => `https://${PUBLIC_HOST}:${p}`);
  oidc = await startOidcProvider({
    clients: [
      {
        client_id: "svc",
        client_secret: SECRET,
        redirect_uris: origins.map((o) => `${o}/v1/webapi/sso/callback`),
      },
    ],
    users: [
      { username: "ada", password: "ada-pw", claims: { email: "ada@corp.test", groups: ["devs"] } },
      {
        username: "grace",
        password: "grace-pw",
        claims: { email: "grace@corp.test", groups: ["devs", "secure"] },
      },
    ],
  });
  const secretFile = join(dir, "oidc-secret");
  await writeFile(secretFile, SECRET, { mode: 0o600 });
  const rateLimit = { perAddress: 1000, perUsername: 1000, windowMs: 60_000 };
  platform = await startSsoPlatform({
    proxyPort: port,
    providersCaPem: oidc.caPem,
    rateLimit,
    resources: await connectorsFor(origins[0] ?? "", secretFile),
    passwordUsers: ["root-admin"],
  });
  ssoOnly = await startSsoPlatform({
    proxyPort: port2,
    providersCaPem: oidc.caPem,
    rateLimit,
    localLogin: false,
    defaultConnector: "corp-oidc",
    resources: await connectorsFor(origins[1] ?? "", secretFile),
    passwordUsers: ["root-admin"],
  });
  await writeFile(join(dir, "ca.pem"), platform.hostCaPem);
  await writeFile(join(dir, "ca2.pem"), ssoOnly.hostCaPem);
  await writeFile(join(dir, "admin-pw"), PASSWORD);
  chrome = await launchChromium({ loopbackHosts: [PUBLIC_HOST], ignoreHTTPSErrors: true });
}, 240_000);

afterAll(async () => {
  await chrome?.close();
  await platform?.close();
  await ssoOnly?.close();
  await oidc?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
}, 60_000);

const loopbackPort = (p: SsoPlatform) => `127.0.0.1:${new URL(p.publicOrigin).port}`;

async function freshHome(): Promise<NodeJS.ProcessEnv> {
  const home = await mkdtemp(join(dir, "home-"));
  // No browser is started by svc unless a test sets BROWSER; no desktop here either.
  return { SVC_HOME: home, BROWSER: "", DISPLAY: "", WAYLAND_DISPLAY: "" };
}

/** Opens the login URL in Chromium, signs in at the provider, and waits for svc's answer page. */
async function signInFor(page: Page, url: string, user: string, password: string): Promise<void> {
  await page.goto(url);
  await loginAtOidcProvider(page, user, password);
  await page.waitForURL(/^http:\/\/127\.0\.0\.1:\d+\/callback\?code=/, { timeout: 30_000 });
  await page.waitForSelector("#message", { timeout: 30_000 });
}

describe("svc login --auth", () => {
  it("prints the URL; Chromium signs in at the provider; svc stores the session; svc status shows the SSO user", async () => {
    const env = await freshHome();
    const svc = startSvc(
      [
        "login",
        "--proxy",
        loopbackPort(platform),
        "--ca",
        join(dir, "ca.pem"),
        "--auth",
        "corp-oidc",
        "--no-browser",
      ],
      env,
    );
    const url = await printedUrl(svc);
    expect(url.startsWith(`${platform.publicOrigin}/v1/webapi/sso/requests/`)).toBe(true);
    const page = await chrome.context.newPage();
    await page.context().clearCookies();
    await signInFor(page, url, "ada", "ada-pw");
    expect(await page.textContent("#message")).toMatch(/You may close this tab/);
    expect(await svc.exited, svc.stderr()).toBe(0);
    expect(svc.stdout()).toMatch(/Logged in to sso-test as ada@corp\.test through corp-oidc/);
    await page.close();

    const status = await run("svc", ["status", "--json"], { env });
    expect(status.code, status.stderr).toBe(0);
    expect(json(status)).toMatchObject({ username: "ada@corp.test", roles: ["access"], scope: "full" });
    // The profile holds the session exactly as a password login leaves it.
    const profile = JSON.parse(await readFile(join(String(env["SVC_HOME"]), "profile.json"), "utf8"));
    expect(Object.keys(profile).sort()).toEqual(
      ["ca_pem", "cluster_name", "expires_at", "proxy", "session_id", "user"].sort(),
    );
    expect(profile.user).toBe("ada@corp.test");
  }, 120_000);

  it("without --auth, when password login is off, uses the cluster's default connector and $BROWSER", async () => {
    const env = await freshHome();
    // A "browser" that records the URL it is asked to open; the test's Chromium then opens it.
    const opened = join(String(env["SVC_HOME"]), "opened-url");
    const browser = join(String(env["SVC_HOME"]), "browser.sh");
    await writeFile(browser, `#!/bin/sh\nprintf '%s' "$1" > '${opened}'\n`);
    await chmod(browser, 0o755);
    const svc = startSvc(
      ["login", "--proxy", loopbackPort(ssoOnly), "--ca", join(dir, "ca2.pem"), "--json"],
      {
        ...env,
        BROWSER: browser,
      },
    );
    let url = "";
    await waitFor(async () => {
      url = await readFile(opened, "utf8").catch(() => "");
      return url !== "" || svc.child.exitCode !== null;
    }, "svc to open the browser");
    expect(url.startsWith(`${ssoOnly.publicOrigin}/v1/webapi/sso/requests/`), svc.stderr()).toBe(true);
    const page = await chrome.context.newPage();
    await page.context().clearCookies();
    await signInFor(page, url, "ada", "ada-pw");
    await page.close();
    expect(await svc.exited, svc.stderr()).toBe(0);
    expect(json({ code: 0, stdout: svc.stdout(), stderr: "" })).toMatchObject({
      user: "ada@corp.test",
      connector: "corp-oidc",
      scope: "full",
    });
  }, 120_000);

  it("password login refused when local login is off; the web page offers no password form there", async () => {
    const env = await freshHome();
    const r = await run(
      "svc",
      [
        "login",
        "--proxy",
        loopbackPort(ssoOnly),
        "--ca",
        join(dir, "ca2.pem"),
        "--user",
        "root-admin",
        "--password-file",
        join(dir, "admin-pw"),
      ],
      { env },
    );
    expect(r.code).toBe(4);
    expect(r.stderr).toMatch(/password login is disabled/);
    const page = await chrome.context.newPage();
    await page.goto(`${ssoOnly.publicOrigin}/web/login`);
    await page.locator('a.connector[data-connector="corp-oidc"]').waitFor({ timeout: 15_000 });
    expect(await page.isVisible("#login")).toBe(false);
    // The first administrator's way in when the identity provider fails: the form on demand.
    await page.click("#password-link a");
    expect(await page.isVisible("#login")).toBe(true);
    expect(await page.isVisible("#password-link")).toBe(false);
    await page.close();
  }, 60_000);

  it("a role requiring MFA: after the provider, the WebAuthn step on our page, then back to svc", async () => {
    const page = await chrome.context.newPage();
    await page.context().clearCookies();
    await addVirtualAuthenticator(page);
    // Enrol grace's key in the browser first (an SSO sign-in without a device may only enrol).
    await page.goto(`${platform.publicOrigin}/v1/webapi/sso/corp-oidc/login`);
    await loginAtOidcProvider(page, "grace", "grace-pw");
    await page.waitForURL((u) => u.origin === platform.publicOrigin, { timeout: 30_000 });
    expect(await enrolSecurityKey(page)).toEqual({ scope: "mfa_enrollment", status: 201 });

    const env = await freshHome();
    const svc = startSvc(
      [
        "login",
        "--proxy",
        loopbackPort(platform),
        "--ca",
        join(dir, "ca.pem"),
        "--auth",
        "corp-oidc",
        "--no-browser",
      ],
      env,
    );
    const url = await printedUrl(svc);
    await page.context().clearCookies();
    await signInFor(page, url, "grace", "grace-pw");
    expect(await svc.exited, svc.stderr()).toBe(0);
    await page.close();
    const status = await run("svc", ["status", "--json"], { env });
    expect(json(status)).toMatchObject({ username: "grace@corp.test", mfa_verified: true, scope: "full" });
  }, 120_000);

  it("a code planted on the loopback port is useless without the verifier: svc refuses it", async () => {
    const env = await freshHome();
    const svc = startSvc(
      [
        "login",
        "--proxy",
        loopbackPort(platform),
        "--ca",
        join(dir, "ca.pem"),
        "--auth",
        "corp-oidc",
        "--no-browser",
      ],
      env,
    );
    await printedUrl(svc);
    const listener = await findLoopbackListener(svc);
    const res = await fetch(`${listener}?code=${randomBytes(32).toString("base64url")}`);
    expect(res.status).toBe(401);
    expect(await res.text()).toMatch(/could not be completed/);
    expect(await svc.exited).not.toBe(0);
    expect(svc.stderr()).toMatch(/svc: error:/);
  }, 60_000);

  it("gives up after --timeout with a clear message (exit 3)", async () => {
    const env = await freshHome();
    const svc = startSvc(
      [
        "login",
        "--proxy",
        loopbackPort(platform),
        "--ca",
        join(dir, "ca.pem"),
        "--auth",
        "corp-oidc",
        "--no-browser",
        "--timeout",
        "2s",
      ],
      env,
    );
    expect(await svc.exited).toBe(3);
    expect(svc.stderr()).toMatch(/did not finish the sign-in within 2 s/);
  }, 60_000);

  it("docs/sso.md: the guide's svc login --auth and svc status, as written", async () => {
    const commands = docCommands(await readFile(join(root, "docs", "sso.md"), "utf8")).map((c) => c.text);
    expect(commands).toEqual([
      "bin/svc login --proxy proxy.example.com:3080 --ca host-ca.pem --auth corp-oidc",
      "bin/svc status",
    ]);
    const env = await freshHome();
    const sh = (text: string) =>
      startSvcShell(
        text
          .replace("proxy.example.com:3080", loopbackPort(platform))
          .replace("host-ca.pem", join(dir, "ca.pem")),
        env,
      );
    const login = sh(commands[0] ?? "");
    const url = await printedUrl(login);
    const page = await chrome.context.newPage();
    await page.context().clearCookies();
    await signInFor(page, url, "ada", "ada-pw");
    await page.close();
    expect(await login.exited, login.stderr()).toBe(0);
    const status = sh(commands[1] ?? "");
    expect(await status.exited, status.stderr()).toBe(0);
    expect(status.stdout()).toMatch(/^User: +ada@corp\.test$/m);
    expect(status.stdout()).toMatch(/^Roles: +access$/m);
  }, 120_000);

  it("an unknown connector is refused before anything listens for long (exit 5)", async () => {
    const env = await freshHome();
    const r = await run(
      "svc",
      [
        "login",
        "--proxy",
        loopbackPort(platform),
        "--ca",
        join(dir, "ca.pem"),
        "--auth",
        "nope",
        "--no-browser",
      ],
      { env },
    );
    expect(r.code).toBe(5);
  }, 60_000);
});

/** The loopback listener svc says it waits on. */
async function findLoopbackListener(svc: Svc): Promise<string> {
  let url: string | undefined;
  await waitFor(() => {
    url = /http:\/\/127\.0\.0\.1:\d+\/callback/.exec(svc.stderr())?.[0];
    return url !== undefined;
  }, "svc to say where it listens");
  return url ?? "";
}
