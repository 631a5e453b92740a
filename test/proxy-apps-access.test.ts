// Application access through the proxy (docs/apps.md), who-gets-in half: apps a user's roles do
// not reach, a cookie replayed on another app's host, login CSRF (state), open redirects, Host
// differing from the TLS name, app logout and its Origin check, the web session's logout ending
// the app session, a locked user (its open WebSockets closed too), https upstreams verified, an
// upstream that is down, and the proxy's own /x-svc/ paths.
import { rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { stringify as stringifyYaml } from "yaml";
import { API_VERSION } from "../core/resources/index.ts";
import { until } from "./harness/svcd.ts";
import {
  type AppsPlatform,
  cookieSet,
  PUBLIC_HOST,
  REVOCABLE_FILE,
  setCookies,
  startAppsPlatform,
  USERS,
  userManifest,
} from "./proxy-apps-kit.ts";

let kit: AppsPlatform;

beforeAll(async () => {
  kit = await startAppsPlatform();
}, 180_000);

afterAll(async () => {
  await kit?.close();
}, 60_000);

const SESSION = "__Host-svc_app_session";
const STATE = "__Host-svc_app_state";

const startSession = (web: string, body: Record<string, string>) =>
  kit.send({
    host: PUBLIC_HOST,
    method: "POST",
    path: "/v1/webapi/apps/sessions",
    headers: { authorization: `Bearer ${web}` },
    body,
  });

const get = (app: string, path: string, cookie?: string) =>
  kit.send({
    host: kit.hostOf(app),
    path,
    ...(cookie ? { headers: { cookie: `${SESSION}=${cookie}` } } : {}),
  });

/** A fresh state cookie and a code for `app`, ready for the login path. */
async function codeFor(web: string, app: string): Promise<{ code: string; state: string }> {
  const first = await get(app, "/");
  const started = await startSession(web, { app_name: app });
  expect(started.status, started.text).toBe(201);
  return { code: (started.json as { code: string }).code, state: cookieSet(first, STATE) ?? "" };
}

/** An open WebSocket to the httpbin app under `cookie`, and when it closes. */
async function openSocket(cookie: string): Promise<{ ws: WebSocket; closed: Promise<void> }> {
  const ws = new WebSocket(`wss://127.0.0.1:${kit.port}/websocket/echo`, {
    ca: kit.platform.hostCaPem,
    servername: kit.hostOf("httpbin"),
    headers: { host: `${kit.hostOf("httpbin")}:${kit.port}`, cookie: `${SESSION}=${cookie}` },
  } as WebSocket.ClientOptions);
  await new Promise<void>((resolve, reject) => {
    ws.once("open", () => resolve());
    ws.once("error", reject);
  });
  ws.on("error", () => {});
  const closed = new Promise<void>((resolve) => ws.once("close", () => resolve()));
  return { ws, closed };
}

/** Resolves when `p` does within `ms` (go-httpbin keeps its sockets open far longer), else fails. */
async function within(p: Promise<void>, ms: number, what: string): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    p,
    new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what}: still open after ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

const loginPath = (app: string, q: Record<string, string>, stateCookie?: string) =>
  kit.send({
    host: kit.hostOf(app),
    path: `/x-svc/app-login?${new URLSearchParams(q)}`,
    ...(stateCookie ? { headers: { cookie: `${STATE}=${stateCookie}` } } : {}),
  });

describe("who may open an app", () => {
  it("refuses an app the user's roles do not reach, as if it did not exist", async () => {
    const vera = await kit.login(USERS.none);
    const ana = await kit.login(USERS.dev);
    for (const [web, app] of [
      [vera, "httpbin"],
      [ana, "billing"],
      [ana, "no-such-app"],
    ] as const) {
      const r = await startSession(web, { app_name: app });
      expect(r.status, `${app}: ${r.text}`).toBe(404);
    }
  });

  it("does not take a session of one app on another app's host (cookie replay)", async () => {
    const cookie = await kit.appSession(await kit.login(USERS.dev), "httpbin");
    expect((await get("httpbin", "/get", cookie)).status).toBe(200);
    const replayed = await get("echo", "/get", cookie);
    expect(replayed.status).toBe(302);
    expect(String(replayed.headers.location)).toContain("/web/launch/echo.");
  });
});

describe("the login path refuses", () => {
  it("a state that is not this browser's (login CSRF): 400, no cookie", async () => {
    const web = await kit.login(USERS.dev);
    const { code, state } = await codeFor(web, "httpbin");
    const cases: Array<[Record<string, string>, string | undefined]> = [
      [{ code, state, path: "/" }, undefined],
      [{ code, state, path: "/" }, "A".repeat(43)],
      [{ code, state: "A".repeat(43), path: "/" }, state],
      [{ code, path: "/" }, state],
    ];
    for (const [q, stateCookie] of cases) {
      const r = await loginPath("httpbin", q, stateCookie);
      expect(r.status).toBe(400);
      expect(r.json).toMatchObject({ error: { message: "app login was not started from this browser" } });
      expect(cookieSet(r, SESSION)).toBeUndefined();
    }
    // the code was not spent by the refusals
    const ok = await loginPath("httpbin", { code, state, path: "/" }, state);
    expect(ok.status).toBe(303);
  });

  it("a code issued for another app's host", async () => {
    const web = await kit.login(USERS.dev);
    const { code } = await codeFor(web, "httpbin");
    const state = cookieSet(await get("echo", "/"), STATE) ?? "";
    const r = await loginPath("echo", { code, state, path: "/" }, state);
    expect(r.status).toBe(400);
    expect(cookieSet(r, SESSION)).toBeUndefined();
  });

  it("to send the browser anywhere but a path on the app host (open redirect -> /)", async () => {
    const web = await kit.login(USERS.dev);
    for (const path of [
      "//evil.example/x",
      "/\\evil.example",
      "https://evil.example/",
      "evil",
      "/a\r\nSet-Cookie: x=y",
    ]) {
      const { code, state } = await codeFor(web, "httpbin");
      const r = await loginPath("httpbin", { code, state, path }, state);
      expect(r.status, path).toBe(303);
      expect(r.headers.location, path).toBe("/");
    }
  });
});

describe("the connection's name", () => {
  it("answers 421 when Host is not the TLS name", async () => {
    const cookie = await kit.appSession(await kit.login(USERS.dev), "httpbin");
    for (const host of [kit.hostOf("echo"), PUBLIC_HOST, "evil.example"]) {
      const r = await kit.send({
        host,
        sni: kit.hostOf("httpbin"),
        path: "/get",
        headers: { cookie: `${SESSION}=${cookie}` },
      });
      expect(r.status, host).toBe(421);
    }
  });

  it("keeps /x-svc/ for the proxy: unknown paths there never reach the app", async () => {
    const cookie = await kit.appSession(await kit.login(USERS.dev), "httpbin");
    const r = await get("httpbin", "/x-svc/anything", cookie);
    expect(r.status).toBe(404);
    expect(r.json).toMatchObject({ error: { code: "not_found" } });
    // dot segments are resolved before the check, as they would be on the way to the app
    for (const path of ["/anything/../x-svc/nothing", "/%2e%2e/x-svc/anything"]) {
      const odd = await get("httpbin", path, cookie);
      expect(odd.status, path).toBe(404);
      expect(odd.json, path).toMatchObject({ error: { message: "no such path on the app proxy" } });
    }
    expect((await get("httpbin", "/anything/../x-svc/logout", cookie)).status).toBe(405);
    // a target that is not a path is refused
    const absolute = await get("httpbin", `https://${kit.hostOf("httpbin")}/x-svc/logout`, cookie);
    expect(absolute.status).toBe(400);
  });
});

describe("ending app sessions", () => {
  it("logs out of the app on its host (Origin checked), clearing the cookie", async () => {
    const cookie = await kit.appSession(await kit.login(USERS.dev), "httpbin");
    const foreign = await kit.send({
      host: kit.hostOf("httpbin"),
      method: "POST",
      path: "/x-svc/logout",
      headers: { cookie: `${SESSION}=${cookie}`, origin: "https://evil.example" },
    });
    expect(foreign.status).toBe(403);
    expect((await get("httpbin", "/get", cookie)).status).toBe(200);
    const r = await kit.send({
      host: kit.hostOf("httpbin"),
      method: "POST",
      path: "/x-svc/logout",
      headers: { cookie: `${SESSION}=${cookie}`, origin: kit.originOf("httpbin") },
    });
    expect(r.status).toBe(303);
    expect(r.headers.location).toBe("/");
    expect(setCookies(r).find((l) => l.startsWith(`${SESSION}=`))).toMatch(/Max-Age=0/);
    expect((await get("httpbin", "/get", cookie)).status).toBe(302);
  });

  it("ends the app session with the web session it came from (web logout)", async () => {
    const web = await kit.login(USERS.dev);
    const cookie = await kit.appSession(web, "httpbin");
    expect((await get("httpbin", "/get", cookie)).status).toBe(200);
    const socket = await openSocket(cookie);
    const out = await kit.send({
      host: PUBLIC_HOST,
      method: "POST",
      path: "/v1/webapi/logout",
      headers: { authorization: `Bearer ${web}` },
    });
    expect(out.status, out.text).toBeLessThan(300);
    // at once, not after the cache's refresh: the proxy knows its web session was revoked
    const after = await get("httpbin", "/get", cookie);
    expect(after.status).toBe(302);
    // and the WebSocket it had open is closed
    await within(socket.closed, 5_000, "the app WebSocket after the web logout");
  });
});

describe("user-wide changes end app sessions at the next request", () => {
  // The app-session cache re-checks a grant when the session stream reports its user or role
  // changed, instead of serving it from memory until its 30 s re-check.
  const rewriteUsers = (users: Array<[string, string[]]>) =>
    writeFile(
      join(kit.manifestsDir, REVOCABLE_FILE),
      users.map(([u, roles]) => stringifyYaml(userManifest(u, roles))).join("---\n"),
    );
  /** Polls until `cookie` is refused, for well under the cache's 30 s re-check. */
  const refusedSoon = (what: string, cookie: string) =>
    until(what, async () => (await get("httpbin", "/get", cookie)).status === 302, 8_000);

  it("a role taken away from the user, and the user deleted (their open WebSockets closed too)", async () => {
    const rita = await kit.appSession(await kit.login(USERS.roleLoss), "httpbin");
    const dora = await kit.appSession(await kit.login(USERS.deleted), "httpbin");
    expect((await get("httpbin", "/get", rita)).status).toBe(200);
    expect((await get("httpbin", "/get", dora)).status).toBe(200);
    const ritaSocket = await openSocket(rita);
    const doraSocket = await openSocket(dora);

    await rewriteUsers([
      [USERS.roleLoss, ["nodes-only"]],
      [USERS.deleted, ["dev-apps"]],
    ]);
    await refusedSoon("rita's app session refused after dev-apps was taken away", rita);
    expect((await get("httpbin", "/get", dora)).status).toBe(200);
    await within(ritaSocket.closed, 8_000, "rita's WebSocket after dev-apps was taken away");
    expect(doraSocket.ws.readyState).toBe(WebSocket.OPEN);

    await rewriteUsers([[USERS.roleLoss, ["nodes-only"]]]);
    await refusedSoon("dora's app session refused after the user was deleted", dora);
    await within(doraSocket.closed, 8_000, "dora's WebSocket after the user was deleted");
  });
});

describe("refusals on the way to the app", () => {
  it("answers 502 in JSON when the app's upstream is down", async () => {
    const cookie = await kit.appSession(await kit.login(USERS.dev), "down");
    const r = await get("down", "/get", cookie);
    expect(r.status).toBe(502);
    expect(r.json).toMatchObject({ error: { code: "bad_gateway" } });
  });

  it("verifies an https upstream's certificate unless the App says insecure_skip_verify", async () => {
    const web = await kit.login(USERS.dev);
    const strict = await get("tls-strict", "/get", await kit.appSession(web, "tls-strict"));
    expect(strict.status).toBe(502);
    expect(strict.json).toMatchObject({ error: { code: "bad_gateway" } });
    const lab = await get("tls-lab", "/get", await kit.appSession(web, "tls-lab"));
    expect(lab.status, lab.text).toBe(200);
    expect((lab.json as { url: string }).url).toMatch(/^https:\/\/127\.0\.0\.1:\d+\/get$/);
  });

  it("refuses a locked user with the lock's message (403), from the proxy's lock snapshot", async () => {
    const cookie = await kit.appSession(await kit.login(USERS.dev), "httpbin");
    expect((await get("httpbin", "/get", cookie)).status).toBe(200);
    // an open WebSocket to the app is closed by the lock
    const ws = new WebSocket(`wss://127.0.0.1:${kit.port}/websocket/echo`, {
      ca: kit.platform.hostCaPem,
      servername: kit.hostOf("httpbin"),
      headers: { host: `${kit.hostOf("httpbin")}:${kit.port}`, cookie: `${SESSION}=${cookie}` },
    } as WebSocket.ClientOptions);
    await new Promise<void>((resolve, reject) => {
      ws.once("open", () => resolve());
      ws.once("error", reject);
    });
    const closed = new Promise<void>((resolve) => ws.once("close", () => resolve()));
    ws.on("error", () => {});
    const lockFile = join(kit.manifestsDir, "lock-ana.yaml");
    await writeFile(
      lockFile,
      stringifyYaml({
        apiVersion: API_VERSION,
        kind: "Lock",
        metadata: { name: "lock-ana" },
        spec: { target: { user: USERS.dev }, message: "laptop reported stolen" },
      }),
    );
    try {
      let last = 0;
      await until(
        "the lock to reach the proxy",
        async () => {
          last = (await get("httpbin", "/get", cookie)).status;
          return last === 403;
        },
        30_000,
      );
      const r = await get("httpbin", "/get", cookie);
      expect(r.status).toBe(403);
      expect(r.json).toMatchObject({ error: { code: "access_denied" } });
      expect(JSON.stringify(r.json)).toContain("laptop reported stolen");
      // (go-httpbin holds it open for minutes: only the proxy can close it this soon)
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        closed,
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Error("WebSocket still open")), 10_000);
        }),
      ]).finally(() => clearTimeout(timer));
    } finally {
      ws.terminate();
      await rm(lockFile, { force: true });
    }
  });
});
