// The console's admin pages (users, roles, join tokens, bots) in headless Chromium against the real
// embedded platform (`svcd start` in this process: the folder source, auth's resource writer, bots):
// an admin creates a user whose reset link, opened in a fresh browser, sets the password; creates
// a join token, copies the agent command and a real `svcd agent` joins with it and shows in the
// nodes list; reads a role's rules and the bots' lock state; the navigation shows an admin every
// page and an ordinary user none of the admin ones, which still refuse a direct visit. Every
// page: screenshots at both sizes, axe, keyboard reach.
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml, stringify as stringifyYaml } from "yaml";
import { generateSshKeyPair } from "../core/certs/ssh-keys.ts";
import { generateEcdsaP256, privateKeyToPem } from "../core/certs/x509.ts";
import {
  type AuthServiceClient,
  agentMetadata,
  callUnary,
  createAuthClient,
  userMetadata,
} from "../server/auth/client.ts";
import { type RunningPlatform, startEmbedded } from "../server/embedded/start.ts";
import { type Daemon, spawnDaemon } from "./cli-fixture.ts";
import {
  ensureConsoleBuilt,
  expectAccessible,
  expectKeyboardReachable,
  launchConsoleBrowser,
  PUBLIC_HOST,
  shoot,
  signIn,
  watchPage,
} from "./console-kit.ts";
import type { RunningChromium } from "./harness/chromium.ts";
import { freePort } from "./harness/ports.ts";
import { HttpsClient } from "./proxy-https-client.ts";

const ADMIN_PASSWORD = "console-admin-password-1";
const NEW_PASSWORD = "console-new-user-password-1";

let dir: string;
let platform: RunningPlatform | undefined;
let origin: string;
let chromium: RunningChromium;
let agent: Daemon | undefined;

const start = (dataDir: string, env: NodeJS.ProcessEnv) =>
  startEmbedded(
    { dataDir, authListen: "127.0.0.1:0", diagListen: "127.0.0.1:0" },
    { env, logger: pino({ level: "silent" }) },
  );

beforeAll(async () => {
  ensureConsoleBuilt();
  dir = await mkdtemp(join(tmpdir(), "svc-console-admin-"));
  const dataDir = join(dir, "data");
  const passwordFile = join(dir, "admin-password");
  await writeFile(passwordFile, ADMIN_PASSWORD);
  // The first start makes the data folder and the first admin; the second serves on the public
  // name the browser uses (a free port, so the browser's origin is the proxy's public origin).
  await (await start(dataDir, { SVC_ADMIN_PASSWORD_FILE: passwordFile })).close();
  const port = await freePort();
  const configPath = join(dataDir, "svc.yaml");
  const config = parseYaml(await readFile(configPath, "utf8")) as { proxy: Record<string, unknown> };
  config.proxy["listen_addr"] = `127.0.0.1:${port}`;
  config.proxy["public_addr"] = `${PUBLIC_HOST}:${port}`;
  config.proxy["oidc_issuer_url"] = `https://${PUBLIC_HOST}:${port}`;
  await writeFile(configPath, stringifyYaml(config));
  platform = await start(dataDir, {});
  origin = `https://${PUBLIC_HOST}:${port}`;
  chromium = await launchConsoleBrowser();
}, 120_000);

afterAll(async () => {
  await agent?.stop();
  await chromium?.close();
  await platform?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

let signedIn = false;

/** A tab of the admin's browser (signed in once; its cookies are shared by its tabs). */
async function adminPage(): Promise<{ page: Page; problems: string[] }> {
  const page = await chromium.context.newPage();
  const problems = watchPage(page);
  if (!signedIn) {
    await chromium.context.grantPermissions(["clipboard-read", "clipboard-write"], { origin });
    await signIn(page, "admin", ADMIN_PASSWORD, { origin });
    signedIn = true;
  }
  return { page, problems };
}

/** Another person's browser: its own Chromium with a fresh profile (no cookies of the admin). */
async function otherBrowser(): Promise<{ browser: RunningChromium; page: Page }> {
  const browser = await launchConsoleBrowser();
  return { browser, page: await browser.context.newPage() };
}

/** The one-time reset page as a person uses it: the password twice. */
async function setPasswordWithLink(page: Page, url: string, password: string): Promise<void> {
  await page.goto(url);
  await page.fill("#password", password);
  await page.fill("#again", password);
  await page.click("#submit");
  await page.locator("#done").waitFor({ state: "visible" });
}

const clipboard = (page: Page): Promise<string> => page.evaluate(() => navigator.clipboard.readText());

describe("users", () => {
  it("shows where each user is managed; a created user sets a password with the copied link", async () => {
    const { page, problems } = await adminPage();
    try {
      await page.goto(`${origin}/web/users`);
      const adminRow = page.locator('#users tr[data-key="admin"]');
      await expect
        .poll(() => adminRow.locator("[data-managed-by]").textContent())
        .toBe("managed in the manifests folder");
      expect(await adminRow.locator("[data-action]").count()).toBe(0);
      await shoot(page, "users");
      await expectAccessible(page);
      await expectKeyboardReachable(page, ["#create-user-open"]);

      // Create, with the keyboard-reachable dialog.
      await page.click("#create-user-open");
      await page.fill("#new-user-name", "newbie");
      await page.check('#create-user-form input[name="roles"][value="access"]');
      await page.fill("#new-user-logins", "newbie");
      await shoot(page, "users-create");
      await expectAccessible(page);
      await page.click("#create-user-submit");
      const link = page.locator("#reset-url");
      await expect.poll(() => link.inputValue()).toContain("/web/reset?token=");
      const url = await link.inputValue();
      expect(new URL(url).origin).toBe(origin);
      await page.click('#reset-link button:has-text("Copy reset link")');
      expect(await clipboard(page)).toBe(url);
      await shoot(page, "users-reset-link");
      await expectAccessible(page);
      await page.keyboard.press("Escape");

      const row = page.locator('#users tr[data-key="newbie"]');
      await expect.poll(() => row.locator("[data-managed-by]").textContent()).toBe("managed here");
      await expectKeyboardReachable(page, [
        '#users tr[data-key="newbie"] [data-action="reset"]',
        '#users tr[data-key="newbie"] [data-action="delete"]',
      ]);

      // The new user opens the link in a browser of their own and chooses a password.
      const theirs = await otherBrowser();
      try {
        await setPasswordWithLink(theirs.page, url, NEW_PASSWORD);
        await signIn(theirs.page, "newbie", NEW_PASSWORD, { origin });
        expect(new URL(theirs.page.url()).pathname).toMatch(/^\/web\//);
      } finally {
        await theirs.browser.close();
      }

      // Delete, after the confirmation.
      await row.locator('[data-action="delete"]').click();
      await shoot(page, "users-delete-confirm");
      await page.click("#confirm-delete-confirm");
      await expect.poll(() => row.count()).toBe(0);
      expect(problems).toEqual([]);
    } finally {
      await page.close();
    }
  }, 120_000);
});

describe("roles", () => {
  it("lists the roles read-only; a role opens to its rules", async () => {
    const { page, problems } = await adminPage();
    try {
      await page.goto(`${origin}/web/roles`);
      const admin = page.locator('details[data-role="admin"]');
      await admin.locator("summary").click();
      await expect.poll(() => admin.textContent()).toContain("managed in the manifests folder");
      expect(await admin.textContent()).toContain("do anything on every resource");
      await shoot(page, "roles");
      await expectAccessible(page);
      await expectKeyboardReachable(page, ['details[data-role="access"] summary']);
      expect(problems).toEqual([]);
    } finally {
      await page.close();
    }
  });
});

describe("join tokens", () => {
  it("creates a token, copies the agent command, and a node joined with it is in the nodes list", async () => {
    const { page, problems } = await adminPage();
    try {
      await page.goto(`${origin}/web/tokens`);
      await page.locator("#create-token-open").waitFor();
      await expectKeyboardReachable(page, ["#create-token-open"]);
      await page.click("#create-token-open");
      await page.fill("#new-token-name", "web-rack");
      await page.selectOption("#new-token-ttl", "900");
      await page.fill("#new-token-labels", "env=console, rack=7");
      await page.click("#create-token-submit");
      const command = page.locator("#agent-command");
      await expect.poll(() => command.inputValue()).toContain("--token web-rack.");
      await page.click('#token-command button:has-text("Copy agent command")');
      const copied = await clipboard(page);
      expect(copied).toBe(await command.inputValue());
      await shoot(page, "tokens-command");
      await expectAccessible(page);
      await page.keyboard.press("Escape");
      const row = page.locator('#tokens tr[data-key="web-rack"]');
      await expect.poll(() => row.textContent()).toContain("env=console, rack=7");
      expect(await page.content()).not.toContain(copied.split(" --token ")[1]?.split(" ")[0] ?? "???");
      await shoot(page, "tokens");
      await expectAccessible(page);

      // The node runs the copied command (its own folder and port for this test).
      const port = await freePort();
      const args = copied.split(" ").slice(1);
      args[args.indexOf("--data-dir") + 1] = join(dir, "agent");
      // It names the proxy's public address; only the browser resolves that name here, so the
      // node gets its IP (a real node resolves the name in DNS).
      const proxyAt = args.indexOf("--proxy") + 1;
      expect(args[proxyAt]).toBe(new URL(origin).host);
      args[proxyAt] = `127.0.0.1:${new URL(origin).port}`;
      agent = spawnDaemon(
        [
          ...args,
          "--listen",
          `127.0.0.1:${port}`,
          "--advertise-address",
          `127.0.0.1:${port}`,
          "--hostname",
          "web-rack-node",
        ],
        {},
      );
      // The node is online in the nodes list the console reads, with the token's labels.
      await expect
        .poll(
          async () => {
            if (agent?.child.exitCode !== null) throw new Error(`agent exited: ${agent?.output()}`);
            // The browser's own request with its session cookie.
            const nodes = await page.evaluate(async () => {
              const res = await fetch("/v1/webapi/nodes");
              return (await res.json()) as {
                items: Array<{ hostname: string; status: string; labels: Record<string, string> }>;
              };
            });
            return nodes.items.find((n) => n.hostname === "web-rack-node");
          },
          { timeout: 60_000, interval: 500 },
        )
        .toMatchObject({ status: "online", labels: { env: "console", rack: "7" } });
      // ... and on the console's nodes page, found by its name.
      await page.goto(`${origin}/web/nodes?search=web-rack-node`);
      await page.locator("#nodes .node-name", { hasText: "web-rack-node" }).waitFor();
      await shoot(page, "tokens-node-joined");

      // The token is listed as spent by that node; delete it after the confirmation.
      await page.goto(`${origin}/web/tokens`);
      await expect
        .poll(() => row.locator('[data-state="used"]').textContent())
        .toContain("used by web-rack-node");
      await shoot(page, "tokens-used");
      await expectKeyboardReachable(page, ['#tokens tr[data-key="web-rack"] [data-action="delete"]']);
      await row.locator('[data-action="delete"]').click();
      await page.click("#confirm-delete-token-confirm");
      await expect.poll(() => row.count()).toBe(0);
      expect(problems).toEqual([]);
    } finally {
      await page.close();
    }
  }, 120_000);
});

describe("bots", () => {
  it("lists the bots with their state: new, and locked after a stale renewal", async () => {
    if (!platform) throw new Error("no platform");
    const authAddress = platform.authAddress;
    const caPems = [platform.hostCaPem];
    const grpc = createAuthClient({ address: authAddress, caPems, serverName: "localhost" });
    const { page, problems } = await adminPage();
    try {
      const admin = userMetadata(await adminSessionId());
      await callUnary(grpc, "CreateAgentIdentity", { name: "ci-bot", roles: ["access"] }, admin);
      const made = await callUnary(
        grpc,
        "CreateAgentIdentity",
        { name: "thief-bot", roles: ["access"] },
        admin,
      );
      // thief-bot bootstraps and renews; then a copy of its first credentials renews too: locked.
      const first = await bootstrapBot(grpc, made.token ?? "");
      await renewBot(authAddress, caPems, first);
      await expect(renewBot(authAddress, caPems, first)).rejects.toThrow(/locked/);

      await page.goto(`${origin}/web/bots`);
      const state = (name: string) => page.locator(`#bots tr[data-key="${name}"] [data-state]`);
      await expect.poll(() => state("ci-bot").getAttribute("data-state")).toBe("new");
      expect(await state("thief-bot").getAttribute("data-state")).toBe("locked");
      expect(await page.locator(".notice").textContent()).toContain("Bot thief-bot is locked");
      await shoot(page, "bots");
      await expectAccessible(page);
      expect(problems).toEqual([]);
    } finally {
      grpc.close();
      await page.close();
    }
  });
});

interface BotCredentials {
  name: string;
  generation: number;
  renewalToken: string;
  certPem: string;
  keyPem: string;
}

function botKeys() {
  const tls = generateEcdsaP256();
  return {
    ssh: generateSshKeyPair("ed25519").publicLine,
    keyPem: privateKeyToPem(tls.privateKey),
    publicPem: tls.publicKey.export({ format: "pem", type: "spki" }).toString(),
  };
}

async function bootstrapBot(grpc: AuthServiceClient, token: string): Promise<BotCredentials> {
  const k = botKeys();
  const c = await callUnary(grpc, "BootstrapAgentIdentity", {
    token,
    ssh_public_key: k.ssh,
    tls_public_key_pem: k.publicPem,
  });
  return {
    name: c.name ?? "",
    generation: Number(c.generation),
    renewalToken: c.renewal_token ?? "",
    certPem: c.tls_certificate_pem ?? "",
    keyPem: k.keyPem,
  };
}

/** RenewAgentIdentity as the holder of `held` (its certificate and credential), with new keys. */
async function renewBot(address: string, caPems: string[], held: BotCredentials): Promise<BotCredentials> {
  const k = botKeys();
  const client = createAuthClient({
    address,
    caPems,
    serverName: "localhost",
    certPem: held.certPem,
    keyPem: held.keyPem,
  });
  try {
    const c = await callUnary(
      client,
      "RenewAgentIdentity",
      {
        name: held.name,
        renewal_token: held.renewalToken,
        generation: held.generation,
        ssh_public_key: k.ssh,
        tls_public_key_pem: k.publicPem,
      },
      agentMetadata(held.name),
    );
    return {
      name: held.name,
      generation: Number(c.generation),
      renewalToken: c.renewal_token ?? "",
      certPem: c.tls_certificate_pem ?? "",
      keyPem: k.keyPem,
    };
  } finally {
    client.close();
  }
}

/** The shell's navigation entries, once the session (and with it `allowed`) has loaded. */
async function navLabels(page: Page): Promise<string[]> {
  await page.locator("#user").waitFor({ state: "visible" });
  return page.locator('nav[aria-label="Console"] a').allTextContents();
}

const EVERY_PAGE = [
  "Nodes",
  "Apps",
  "Recordings",
  "Audit log",
  "Users",
  "Roles",
  "Join tokens",
  "Bots",
  "Account",
];

describe("the navigation", () => {
  it("shows an admin every page", async () => {
    const { page } = await adminPage();
    try {
      await page.goto(`${origin}/web/nodes`);
      expect(await navLabels(page)).toEqual(EVERY_PAGE);
      await shoot(page, "shell-admin");
    } finally {
      await page.close();
    }
  }, 60_000);
});

describe("an ordinary user", () => {
  it("is refused the admin pages", async () => {
    const { page: adminTab } = await adminPage();
    let url = "";
    try {
      await adminTab.goto(`${origin}/web/users`);
      await adminTab.click("#create-user-open");
      await adminTab.fill("#new-user-name", "plain");
      await adminTab.check('#create-user-form input[name="roles"][value="access"]');
      await adminTab.click("#create-user-submit");
      await expect.poll(() => adminTab.locator("#reset-url").inputValue()).toContain("token=");
      url = await adminTab.locator("#reset-url").inputValue();
    } finally {
      await adminTab.close();
    }
    const { browser, page } = await otherBrowser();
    try {
      await setPasswordWithLink(page, url, NEW_PASSWORD);
      await signIn(page, "plain", NEW_PASSWORD, { origin });
      // The admin pages are not in the navigation: they would only say "Not allowed".
      expect(await navLabels(page)).toEqual(["Nodes", "Apps", "Recordings", "Account"]);
      await shoot(page, "shell-user");
      for (const [path, banner] of [
        ["/web/users", "#users-error"],
        ["/web/roles", "#roles-error"],
        ["/web/tokens", "#tokens-error"],
        ["/web/bots", "#bots-error"],
      ] as const) {
        // A direct visit still reaches the page, and the server's refusal shows.
        await page.goto(`${origin}${path}`);
        await expect.poll(() => page.locator(banner).textContent()).toMatch(/^Not allowed/);
        expect(await navLabels(page)).toEqual(["Nodes", "Apps", "Recordings", "Account"]);
        expect(await page.locator("table").count()).toBe(0);
        expect(await page.locator("#create-user-open, #create-token-open").count()).toBe(0);
      }
      await page.goto(`${origin}/web/users`);
      await expect.poll(() => page.locator("#users-error").textContent()).toMatch(/^Not allowed/);
      await shoot(page, "users-refused");
      await expectAccessible(page);
    } finally {
      await browser.close();
    }
  }, 60_000);
});

/** A session of the admin for gRPC calls the console does not make (creating a bot). */
async function adminSessionId(): Promise<string> {
  if (!platform) throw new Error("no platform");
  const client = new HttpsClient(platform.proxyUrl, platform.hostCaPem, PUBLIC_HOST);
  const res = await client.send({
    method: "POST",
    path: "/v1/webapi/login",
    body: { username: "admin", password: ADMIN_PASSWORD },
  });
  expect(res.status, res.text).toBe(200);
  return (res.json as { session_id: string }).session_id;
}
