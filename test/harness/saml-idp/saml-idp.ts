// A real SAML identity provider for the tests: SimpleSAMLphp from Debian (installed by
// scripts/tools/simplesamlphp.sh), served by `php -S` on loopback with a configuration folder
// written here per run: exampleauth:UserPass users with attributes, a fresh RSA signing key, and
// the service provider under test (entity id, ACS URL, optionally its certificate so that
// AuthnRequests must be signed). SimpleSAMLphp shows its own login page.
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import type { Page } from "playwright-core";
import { freePort } from "../ports.ts";

const run = promisify(execFile);
const here = import.meta.dirname;
const repoRoot = join(here, "..", "..", "..");

export interface SamlIdpUser {
  username: string;
  password: string;
  /** Attributes released to the service provider; `uid` becomes the NameID (defaults to username). */
  attributes?: Record<string, string[]>;
}

export interface SamlIdpOptions {
  spEntityId: string;
  acsUrl: string;
  users: SamlIdpUser[];
  /** PEM certificate of the service provider: when set, unsigned AuthnRequests are refused. */
  spCertPem?: string;
  /** Also sign the Response element (the assertion is always signed). Default false. */
  signResponse?: boolean;
}

export interface RunningSamlIdp {
  /** The php server's process id (it ends with stop(), or when the starting process dies). */
  pid: number;
  /** SingleSignOnService (HTTP-Redirect binding). */
  ssoUrl: string;
  /** The provider's metadata (plain HTTP on loopback). */
  metadataUrl: string;
  /** The provider's entity id (the Issuer of its assertions). */
  entityId: string;
  /** The provider's signing certificate and key (tests re-sign edited responses with the key). */
  certPem: string;
  keyPem: string;
  baseUrl: string;
  /** What the PHP server wrote to stderr (for failure messages). */
  logs(): string;
  stop(): Promise<void>;
}

/** The folder SimpleSAMLphp serves, installing it first when missing. */
async function simpleSamlWww(): Promise<string> {
  const { stdout } = await run("bash", [join(repoRoot, "scripts", "tools", "simplesamlphp.sh")], {
    maxBuffer: 1024 * 1024,
  });
  const www = stdout.trim().split("\n").pop();
  if (!www) throw new Error("scripts/tools/simplesamlphp.sh printed no folder");
  return www;
}

async function selfSigned(dir: string, cn: string): Promise<{ keyPem: string; certPem: string }> {
  const key = join(dir, "idp.key");
  const crt = join(dir, "idp.crt");
  await run("openssl", [
    "req",
    "-x509",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-sha256",
    "-days",
    "2",
    "-subj",
    `/CN=${cn}`,
    "-keyout",
    key,
    "-out",
    crt,
  ]);
  return { keyPem: await readFile(key, "utf8"), certPem: await readFile(crt, "utf8") };
}

async function waitReady(url: string, proc: ChildProcess, logs: () => string): Promise<void> {
  const deadline = Date.now() + 20_000;
  let last = "";
  while (Date.now() < deadline) {
    if (proc.exitCode !== null) throw new Error(`php -S exited (${proc.exitCode}): ${logs()}`);
    try {
      const res = await fetch(url);
      if (res.status === 200) return;
      last = `HTTP ${res.status}`;
    } catch (err) {
      last = String(err);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`SimpleSAMLphp did not answer ${url}: ${last}\n${logs()}`);
}

export async function startSamlIdp(o: SamlIdpOptions): Promise<RunningSamlIdp> {
  const www = await simpleSamlWww();
  const dir = await mkdtemp(join(tmpdir(), "svc-saml-idp-"));
  const configDir = join(dir, "config");
  const stateDir = join(dir, "state");
  await mkdir(join(configDir, "metadata"), { recursive: true });
  await mkdir(join(configDir, "cert"), { recursive: true });
  for (const sub of ["log", "data", "tmp", "sessions"]) await mkdir(join(stateDir, sub), { recursive: true });
  for (const f of [
    "config.php",
    "authsources.php",
    "metadata/saml20-idp-hosted.php",
    "metadata/saml20-sp-remote.php",
  ]) {
    await cp(join(here, f), join(configDir, f));
  }
  const { keyPem, certPem } = await selfSigned(join(configDir, "cert"), "svc test SAML IdP");
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const random = () => Buffer.from(crypto.getRandomValues(new Uint8Array(24))).toString("base64url");
  const harness = {
    baseUrl,
    stateDir,
    secretSalt: random(),
    adminPassword: random(),
    spEntityId: o.spEntityId,
    acsUrl: o.acsUrl,
    signResponse: o.signResponse ?? false,
    spCertificate: o.spCertPem
      ? o.spCertPem.replace(/-----(BEGIN|END) CERTIFICATE-----/g, "").replace(/\s+/g, "")
      : null,
    users: o.users.map((u) => ({
      username: u.username,
      password: u.password,
      attributes: { uid: [u.username], ...(u.attributes ?? {}) },
    })),
  };
  await writeFile(join(configDir, "harness.json"), JSON.stringify(harness));

  let stderr = "";
  // php runs under a small shell watchdog: when the process that started it is gone (a test
  // worker killed mid-run), the watchdog ends php and removes the run's folder, so nothing is
  // left listening. SIGTERM to the watchdog (stop()) does the same at once.
  const watchdog = [
    'php -S "$ADDR" -t "$WWW" & php=$!',
    'echo "php-pid $php"',
    'quit() { kill "$php" 2>/dev/null; wait "$php" 2>/dev/null; rm -rf "$RUN_DIR"; exit 0; }',
    "trap quit TERM INT",
    'while kill -0 "$OWNER" 2>/dev/null && kill -0 "$php" 2>/dev/null; do sleep 0.5 & wait $!; done',
    "quit",
  ].join("\n");
  const proc = spawn("bash", ["-c", watchdog], {
    env: {
      PATH: process.env["PATH"] ?? "/usr/bin:/bin",
      SIMPLESAMLPHP_CONFIG_DIR: configDir,
      ADDR: `127.0.0.1:${port}`,
      WWW: www,
      RUN_DIR: dir,
      OWNER: String(process.pid),
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const phpPid = new Promise<number>((resolve) => {
    let out = "";
    proc.stdout?.on("data", (c: Buffer) => {
      out += c.toString("utf8");
      const m = /php-pid (\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    proc.once("exit", () => resolve(0));
  });
  proc.stderr?.on("data", (c: Buffer) => {
    stderr = (stderr + c.toString("utf8")).slice(-64 * 1024);
  });
  const logs = () => stderr;
  const metadataUrl = `${baseUrl}/saml2/idp/metadata.php`;
  const stop = async () => {
    if (proc.exitCode === null) {
      const exited = new Promise((r) => proc.once("exit", r));
      proc.kill("SIGTERM");
      await exited;
    }
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await waitReady(metadataUrl, proc, logs);
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    pid: await phpPid,
    ssoUrl: `${baseUrl}/saml2/idp/SSOService.php`,
    metadataUrl,
    entityId: metadataUrl,
    certPem,
    keyPem,
    baseUrl,
    logs,
    stop,
  };
}

/** What the identity provider's auto-submitting form would POST to the service provider. */
export interface PostedSamlResponse {
  action: string;
  samlResponse: string;
  relayState: string;
}

const decodeHtml = (s: string): string =>
  s
    .replace(/&quot;/g, '"')
    .replace(/&#0*39;|&apos;/g, "'")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&amp;/g, "&");

function hiddenInput(html: string, name: string): string | undefined {
  for (const m of html.matchAll(/<input\b[^>]*>/gi)) {
    const tag = m[0];
    if (new RegExp(`\\bname="${name}"`).test(tag)) {
      const v = /\bvalue="([^"]*)"/.exec(tag)?.[1];
      return v === undefined ? undefined : decodeHtml(v);
    }
  }
  return undefined;
}

/**
 * Logs in at SimpleSAMLphp's own login form over plain HTTP (no browser): follows the login URL,
 * posts the user's name and password, and returns the SAMLResponse form the provider answers.
 * The browser test drives the same page with Chromium.
 */
export async function loginAtIdp(
  loginUrl: string,
  username: string,
  password: string,
): Promise<PostedSamlResponse> {
  const jar = new Map<string, string>();
  const go = async (url: string, init: RequestInit = {}): Promise<Response> => {
    const headers = new Headers(init.headers);
    if (jar.size > 0) headers.set("cookie", [...jar].map(([k, v]) => `${k}=${v}`).join("; "));
    const res = await fetch(url, { ...init, headers, redirect: "manual" });
    for (const sc of res.headers.getSetCookie()) {
      const kv = sc.split(";")[0] ?? "";
      const i = kv.indexOf("=");
      if (i > 0) jar.set(kv.slice(0, i), kv.slice(i + 1));
    }
    return res;
  };
  let res = await go(loginUrl);
  let url = loginUrl;
  for (let hops = 0; res.status >= 300 && res.status < 400 && hops < 5; hops++) {
    url = new URL(res.headers.get("location") ?? "", url).toString();
    res = await go(url);
  }
  const form = await res.text();
  const authState = hiddenInput(form, "AuthState");
  if (res.status !== 200 || !authState) throw new Error(`no login form at the provider (HTTP ${res.status})`);
  res = await go(url, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ username, password, AuthState: authState }).toString(),
  });
  const answer = await res.text();
  const samlResponse = hiddenInput(answer, "SAMLResponse");
  const action = /<form\b[^>]*\baction="([^"]*)"/i.exec(answer)?.[1];
  if (!samlResponse || !action) throw new Error(`the provider answered no SAMLResponse (HTTP ${res.status})`);
  return { action: decodeHtml(action), samlResponse, relayState: hiddenInput(answer, "RelayState") ?? "" };
}

/**
 * On SimpleSAMLphp's login page (the page must be showing it, or about to): fills in the user
 * and password, submits, and waits until the browser has left the provider (its auto-submitted
 * form posts the SAMLResponse to the ACS URL). Throws with the page's error text when the
 * provider refuses the password.
 */
export async function loginAtSamlIdpPage(page: Page, username: string, password: string): Promise<void> {
  const form = page.locator('form[name="f"]');
  await form.waitFor({ timeout: 15_000 });
  const origin = new URL(page.url()).origin;
  await form.locator("#username").fill(username);
  await form.locator("#password").fill(password);
  await form.locator("#submit_button").click();
  const left = page
    .waitForURL((u) => u.origin !== origin, { waitUntil: "commit", timeout: 15_000 })
    .then(() => null);
  const refused = page
    .locator("img.erroricon")
    .waitFor({ timeout: 15_000 })
    .then(async () => ((await page.locator("h2").first().textContent()) ?? "refused").trim());
  left.catch(() => undefined);
  refused.catch(() => undefined);
  const error = await Promise.race([left, refused]);
  if (error !== null) throw new Error(`the provider refused the sign-in: ${error}`);
}
