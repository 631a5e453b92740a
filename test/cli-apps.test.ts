// `svc apps` as a user runs it (the real bin/svc) against the embedded platform with go-httpbin as
// Apps: ls per user, login (the one-time code traded at the app host through the proxy's address,
// the cookie kept 0600), config's cookie / uri / curl (the curl command run for real), the 404 for
// an app the roles do not reach, logout of one app and of all (the proxy refuses the cookie at
// once), and an app session left over from an earlier `svc login` refused by config.
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { json, type RunResult, run } from "./cli-fixture.ts";
import { type AppsPlatform, PASSWORD, PUBLIC_HOST, startAppsPlatform, USERS } from "./proxy-apps-kit.ts";

let kit: AppsPlatform;
let dir: string;
/** SVC_HOME of ana (role dev-apps: the env=dev apps) and of vera (no app) */
const homes = { ana: "", vera: "" };

const svc = (home: string, args: string[]): Promise<RunResult> =>
  run("svc", args, { env: { SVC_HOME: home }, timeoutMs: 60_000 });

async function svcLogin(home: string, user: string): Promise<void> {
  const r = await svc(home, [
    "login",
    "--proxy",
    `127.0.0.1:${kit.port}`,
    "--ca",
    join(dir, "ca.pem"),
    "--user",
    user,
    "--password-file",
    join(dir, "password"),
  ]);
  expect(r.code, r.stderr).toBe(0);
}

beforeAll(async () => {
  kit = await startAppsPlatform();
  dir = await mkdtemp(join(tmpdir(), "svc-cli-apps-"));
  await writeFile(join(dir, "ca.pem"), kit.platform.hostCaPem);
  await writeFile(join(dir, "password"), `${PASSWORD}\n`);
  for (const [user, name] of [
    ["ana", USERS.dev],
    ["vera", USERS.none],
  ] as const) {
    homes[user] = join(dir, user);
    await svcLogin(homes[user], name);
  }
}, 180_000);

afterAll(async () => {
  await kit?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
}, 60_000);

/** The app host's answer to GET `path` with the app session cookie header `cookie` (or none). */
async function appGet(app: string, path: string, cookie?: string) {
  return kit.send({ host: kit.hostOf(app), path, headers: cookie ? { cookie } : {} });
}

describe("svc apps ls", () => {
  it("lists the apps the roles reach, as a table and as JSON", async () => {
    const table = await svc(homes.ana, ["apps", "ls"]);
    expect(table.code, table.stderr).toBe(0);
    const lines = table.stdout.trim().split("\n");
    expect(lines[0]).toMatch(/^NAME\s+URL\s+DESCRIPTION\s+LABELS$/);
    // the kit's env=dev apps (its others may grow), sorted; billing (env=prod) never
    const names = lines.slice(1).map((l) => l.split(/\s+/)[0] ?? "");
    expect(names).toEqual([...names].sort());
    expect(names).toEqual(expect.arrayContaining(["down", "echo", "httpbin"]));
    expect(table.stdout).toContain(`${kit.originOf("httpbin")}/`);
    expect(table.stdout).not.toContain("billing");

    const r = await svc(homes.ana, ["apps", "ls", "--format", "json"]);
    expect(r.code, r.stderr).toBe(0);
    const apps = json<Array<{ name: string; public_addr: string; public_url: string; uri?: string }>>(r);
    expect(apps.map((a) => a.name)).toEqual(names);
    const httpbin = apps.find((a) => a.name === "httpbin");
    expect(httpbin?.public_addr).toBe(`httpbin.${PUBLIC_HOST}`);
    expect(httpbin?.public_url).toBe(`${kit.originOf("httpbin")}/`);
    // the internal address is for those who may list apps (an admin), not ana
    expect(httpbin?.uri).toBeUndefined();
  });

  it("says so when the roles reach none", async () => {
    const r = await svc(homes.vera, ["apps", "ls"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/No apps/);
    expect(json(await svc(homes.vera, ["apps", "ls", "--json"]))).toEqual([]);
  });
});

describe("svc apps login and config", () => {
  let cookie: string;

  it("logs in to an app, keeps the cookie 0600 and prints the URL and how to call it", async () => {
    const r = await svc(homes.ana, ["apps", "login", "httpbin"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`${kit.originOf("httpbin")}/`);
    expect(r.stdout).toContain("svc apps config httpbin --format curl");
    // the credential is not printed by login
    const file = join(homes.ana, "apps", "httpbin.json");
    const stored = JSON.parse(await readFile(file, "utf8")) as { session: string; expires_at: string };
    expect(r.stdout).not.toContain(stored.session);
    expect(stored.session).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await stat(join(homes.ana, "apps"))).mode & 0o777).toBe(0o700);
    // within the web session's life (12 h by default)
    expect(Date.parse(stored.expires_at)).toBeGreaterThan(Date.now() + 3600_000);
    expect(Date.parse(stored.expires_at)).toBeLessThanOrEqual(Date.now() + 12 * 3600_000 + 60_000);
  });

  it("config --format cookie gives a Cookie header the app host honours with the user's identity", async () => {
    const r = await svc(homes.ana, ["apps", "config", "httpbin", "--format", "cookie"]);
    expect(r.code, r.stderr).toBe(0);
    cookie = r.stdout.trim();
    expect(cookie).toMatch(/^__Host-svc_app_session=[A-Za-z0-9_-]{43}$/);
    const echoed = await appGet("httpbin", "/headers", cookie);
    expect(echoed.status, echoed.text).toBe(200);
    expect((echoed.json as { headers: Record<string, string[]> }).headers["X-Svc-User"]).toEqual([USERS.dev]);
    // the same request without it is sent to sign in
    expect((await appGet("httpbin", "/headers")).status).toBe(302);
  });

  it("config --format uri and json", async () => {
    const uri = await svc(homes.ana, ["apps", "config", "httpbin", "--format", "uri"]);
    expect(uri.stdout).toBe(`${kit.originOf("httpbin")}/\n`);
    const j = json<{ app: string; cookie: string; public_url: string; ca_file: string; proxy: string }>(
      await svc(homes.ana, ["apps", "config", "httpbin", "--json"]),
    );
    expect(j).toMatchObject({ app: "httpbin", cookie, public_url: `${kit.originOf("httpbin")}/` });
    expect(j.proxy).toBe(`127.0.0.1:${kit.port}`);
    // the CA the profile trusts for the proxy, as a file for curl
    const profile = JSON.parse(await readFile(join(homes.ana, "profile.json"), "utf8")) as { ca_pem: string };
    expect(await readFile(j.ca_file, "utf8")).toBe(profile.ca_pem);
  });

  it("config --format curl prints a command that reaches the app through the proxy (the host does not resolve)", async () => {
    const r = await svc(homes.ana, ["apps", "config", "httpbin", "--format", "curl"]);
    expect(r.code, r.stderr).toBe(0);
    const command = r.stdout.trim();
    expect(command).toMatch(/^curl /);
    // More curl options may follow the URL: here only the status is printed.
    const status = await sh(`${command} -s -o /dev/null -w '%{http_code}'`);
    expect(status).toBe("200");
    // without the Cookie header the very same command is sent to sign in
    const anonymous = command.replace(/ -H '[^']*'/, "");
    expect(anonymous).not.toContain("svc_app_session");
    expect(await sh(`${anonymous} -s -o /dev/null -w '%{http_code}'`)).toBe("302");
  });

  it("refuses an app the roles do not reach exactly like one that does not exist (exit 5)", async () => {
    const forbidden = await svc(homes.ana, ["apps", "login", "billing"]);
    const missing = await svc(homes.ana, ["apps", "login", "nope"]);
    expect(forbidden.code).toBe(5);
    expect(missing.code).toBe(5);
    expect(forbidden.stderr.replace("billing", "X")).toBe(missing.stderr.replace("nope", "X"));
    const none = await svc(homes.vera, ["apps", "login", "httpbin"]);
    expect(none.code).toBe(5);
  });

  it("takes the host name the app is reached at too", async () => {
    const r = await svc(homes.ana, ["apps", "login", kit.hostOf("echo"), "--json"]);
    expect(r.code, r.stderr).toBe(0);
    expect(json(r)).toMatchObject({ app: "echo", public_url: `${kit.originOf("echo")}/` });
  });
});

describe("svc apps logout", () => {
  it("ends one app's sessions: the proxy refuses the cookie at once and config has nothing", async () => {
    const before = (await svc(homes.ana, ["apps", "config", "httpbin", "--format", "cookie"])).stdout.trim();
    const r = await svc(homes.ana, ["apps", "logout", "httpbin"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^Ended [1-9]\d* app sessions? of httpbin\.$/m);
    const config = await svc(homes.ana, ["apps", "config", "httpbin"]);
    expect(config.code).toBe(5);
    expect(config.stderr).toMatch(/svc apps login httpbin/);
    // at once: logout told the app host's proxy (its /x-svc/logout), which dropped its cached grant
    expect((await appGet("httpbin", "/headers", before)).status).toBe(302);
    // the other app's session is untouched
    const echo = (await svc(homes.ana, ["apps", "config", "echo", "--format", "cookie"])).stdout.trim();
    expect((await appGet("echo", "/get", echo)).status).toBe(200);
  });

  it("without an app ends them all and forgets every cookie", async () => {
    const echo = (await svc(homes.ana, ["apps", "config", "echo", "--format", "cookie"])).stdout.trim();
    const r = await svc(homes.ana, ["apps", "logout", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    expect(json(r)).toEqual({ ended: 1, forgotten: ["echo"] });
    expect((await appGet("echo", "/get", echo)).status).toBe(302);
    expect((await svc(homes.ana, ["apps", "config", "echo"])).code).toBe(5);
  });

  it("an app session from before a new svc login is refused by config (exit 3)", async () => {
    expect((await svc(homes.ana, ["apps", "login", "httpbin"])).code).toBe(0);
    expect((await svc(homes.ana, ["logout"])).code).toBe(0);
    await svcLogin(homes.ana, USERS.dev);
    const r = await svc(homes.ana, ["apps", "config", "httpbin"]);
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/earlier login.*svc apps login httpbin/);
  });
});

function sh(command: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile("sh", ["-c", command], { timeout: 30_000 }, (err, stdout, stderr) => {
      if (err && stdout === "") reject(new Error(`${command}: ${stderr || err.message}`));
      else resolve(stdout);
    });
  });
}
