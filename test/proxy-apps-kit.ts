// The embedded platform (`svcd start` in this process) with go-httpbin behind it as Apps, and real
// TLS clients for the app hosts (node:https to 127.0.0.1 with the app host as TLS name and Host:
// `*.<name>` does not resolve in Node). Shared by test/proxy-apps*.test.ts.
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { request } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { parse as parseYaml, stringify as stringifyYaml } from "yaml";
import { cookieFrom } from "../cli/app-sessions.ts";
import { openBackend } from "../core/backend/index.ts";
import { systemClock } from "../core/clock.ts";
import { API_VERSION } from "../core/resources/index.ts";
import { setPassword } from "../server/auth/passwords.ts";
import { type RunningPlatform, startEmbedded } from "../server/embedded/start.ts";
import { type Httpbin, startHttpbin } from "./harness/httpbin.ts";
import { freePort } from "./harness/ports.ts";

export const PUBLIC_HOST = "proxy.apps.test";
export const PASSWORD = "proxy-apps-password-1";
/**
 * ana: role dev-apps (apps labelled env=dev). vera: no app at all. rita and dora: dev-apps too, in
 * their own manifest file (REVOCABLE_FILE) for tests that take their roles away or delete them.
 */
export const USERS = { dev: "ana", none: "vera", roleLoss: "rita", deleted: "dora" } as const;
/** The first admin of `svcd start` (preset role admin), with PASSWORD too. */
export const ADMIN = "admin";
/** The manifests file holding rita and dora, rewritten by revocation tests. */
export const REVOCABLE_FILE = "revocable-users.yaml";

/** The User manifest of `name` with `roles`. */
export const userManifest = (name: string, roles: string[]): unknown => ({
  apiVersion: API_VERSION,
  kind: "User",
  metadata: { name },
  spec: { roles },
});

export interface Res {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: unknown;
}

export interface AppsPlatform {
  platform: RunningPlatform;
  httpbin: Httpbin;
  /** go-httpbin over HTTPS with a certificate from a private CA */
  httpbinTls: Httpbin;
  /** the proxy's bound port (also the public one) */
  port: number;
  /** the public host (PUBLIC_HOST unless started with another) */
  publicHost: string;
  /** https://<public host>:<port> */
  origin: string;
  hostOf(app: string): string;
  originOf(app: string): string;
  manifestsDir: string;
  /** One HTTPS request to the proxy (sendTo). */
  send(o: SendOptions): Promise<Res>;
  /** A main web session of `user` (its id). */
  login(user: string): Promise<string>;
  /** The full browser flow: the app host's redirect, the launch call, the login path; the cookie. */
  appSession(webSession: string, app: string): Promise<string>;
  close(): Promise<void>;
}

function manifests(upstream: string, downPort: number, tlsUpstream: string): unknown[] {
  const app = (name: string, env: string, uri = upstream, extra: Record<string, unknown> = {}) => ({
    apiVersion: API_VERSION,
    kind: "App",
    metadata: { name, labels: { env } },
    spec: { uri, ...extra },
  });
  return [
    app("httpbin", "dev", upstream, {
      rewrite: { headers: [{ name: "X-Svc-User", value: "{{user}}" }], redirect: ["internal.example"] },
    }),
    app("echo", "dev"),
    app("down", "dev", `http://127.0.0.1:${downPort}`),
    app("billing", "prod"),
    // an https upstream whose CA nobody trusts: refused, unless the App opts out of verification
    app("tls-strict", "dev", tlsUpstream),
    app("tls-lab", "dev", tlsUpstream, { insecure_skip_verify: true }),
    {
      apiVersion: API_VERSION,
      kind: "Role",
      metadata: { name: "dev-apps" },
      spec: { allow: { app_labels: { env: "dev" } } },
    },
    {
      apiVersion: API_VERSION,
      kind: "Role",
      metadata: { name: "nodes-only" },
      spec: { allow: { logins: ["vera"], node_labels: { "*": "*" } } },
    },
    { apiVersion: API_VERSION, kind: "User", metadata: { name: USERS.dev }, spec: { roles: ["dev-apps"] } },
    {
      apiVersion: API_VERSION,
      kind: "User",
      metadata: { name: USERS.none },
      spec: { roles: ["nodes-only"] },
    },
  ];
}

export const setCookies = (r: Res): string[] => {
  const v = r.headers["set-cookie"];
  return v === undefined ? [] : Array.isArray(v) ? v : [v];
};

/** The value a Set-Cookie line of the answer gives `name` (undefined when none sets it). */
export function cookieSet(r: Res, name: string): string | undefined {
  return cookieFrom(setCookies(r), name)?.value;
}

export interface SendOptions {
  host: string;
  path: string;
  method?: string;
  headers?: Record<string, string>;
  body?: unknown;
  sni?: string;
}

/**
 * One HTTPS request to 127.0.0.1:`port` trusting `ca`: TLS name `sni` (default the Host's name),
 * Host as given (`:<port>` added when it has none).
 */
export function sendTo(port: number, ca: string | string[], o: SendOptions): Promise<Res> {
  return new Promise((resolve, reject) => {
    const payload = o.body === undefined ? undefined : JSON.stringify(o.body);
    const req = request(
      {
        host: "127.0.0.1",
        port,
        method: o.method ?? "GET",
        path: o.path,
        ca,
        servername: o.sni ?? o.host.replace(/:\d+$/, ""),
        agent: false,
        headers: {
          host: o.host.includes(":") ? o.host : `${o.host}:${port}`,
          ...(payload ? { "content-type": "application/json" } : {}),
          ...o.headers,
        },
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (d: string) => {
          text += d;
        });
        res.on("end", () => {
          let json: unknown;
          try {
            json = JSON.parse(text);
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
        });
      },
    );
    req.on("error", reject);
    req.end(payload);
  });
}

/**
 * `publicHost`: PUBLIC_HOST (dotted: the proxy's wildcard serves every app host) unless given;
 * "localhost" is the embedded default (one label: each App's host gets its own certificate).
 */
export async function startAppsPlatform(o: { publicHost?: string } = {}): Promise<AppsPlatform> {
  const publicHost = o.publicHost ?? PUBLIC_HOST;
  const dir = await mkdtemp(join(tmpdir(), "svc-proxy-apps-"));
  const httpbin = await startHttpbin();
  const httpbinTls = await startHttpbin({ tls: true }).catch(async (err: unknown) => {
    await httpbin.stop();
    throw err;
  });
  const logger = pino({ level: process.env["SVC_TEST_LOG_LEVEL"] ?? "silent" });
  const dataDir = join(dir, "data");
  const start = () =>
    startEmbedded({ dataDir, authListen: "127.0.0.1:0", diagListen: "127.0.0.1:0" }, { env: {}, logger });
  let platform: RunningPlatform | undefined;
  try {
    // The first start makes the data folder; then the manifests, passwords and public name.
    const first = await start();
    const manifestsDir = first.data.paths.manifests;
    const sqlite = first.data.paths.sqlite ?? "";
    await first.close();
    await mkdir(manifestsDir, { recursive: true });
    const downPort = await freePort();
    await writeFile(
      join(manifestsDir, "proxy-apps.yaml"),
      manifests(httpbin.url, downPort, httpbinTls.url)
        .map((m) => stringifyYaml(m))
        .join("---\n"),
    );
    await writeFile(
      join(manifestsDir, REVOCABLE_FILE),
      [USERS.roleLoss, USERS.deleted].map((u) => stringifyYaml(userManifest(u, ["dev-apps"]))).join("---\n"),
    );
    const backend = await openBackend({ type: "sqlite", path: sqlite }, { clock: systemClock });
    try {
      // the first admin too (its reset token unused): tests that rotate CAs sign in as it
      for (const user of [...Object.values(USERS), ADMIN]) await setPassword(backend, user, PASSWORD);
    } finally {
      await backend.close();
    }
    const port = await freePort();
    const configPath = join(dataDir, "svc.yaml");
    const config = parseYaml(await readFile(configPath, "utf8")) as { proxy: Record<string, unknown> };
    config.proxy["listen_addr"] = `127.0.0.1:${port}`;
    config.proxy["public_addr"] = `${publicHost}:${port}`;
    config.proxy["oidc_issuer_url"] = `https://${publicHost}:${port}`;
    await writeFile(configPath, stringifyYaml(config));
    platform = await start();
    const running = platform;
    const origin = `https://${publicHost}:${port}`;
    const hostOf = (app: string) => `${app}.${publicHost}`;
    const send: AppsPlatform["send"] = (o) => sendTo(port, running.hostCaPem, o);
    const kit: AppsPlatform = {
      platform: running,
      httpbin,
      httpbinTls,
      port,
      publicHost,
      origin,
      hostOf,
      originOf: (app) => `https://${hostOf(app)}:${port}`,
      manifestsDir,
      send,
      async login(username) {
        const r = await send({
          host: publicHost,
          method: "POST",
          path: "/v1/webapi/login",
          body: { username, password: PASSWORD },
        });
        if (r.status !== 200) throw new Error(`login ${username}: ${r.status} ${r.text}`);
        return (r.json as { session_id: string }).session_id;
      },
      async appSession(webSession, app) {
        const first = await send({ host: hostOf(app), path: "/anything?x=1" });
        const state = cookieSet(first, "__Host-svc_app_state");
        if (first.status !== 302 || !state) throw new Error(`no launch redirect: ${first.status}`);
        const started = await send({
          host: publicHost,
          method: "POST",
          path: "/v1/webapi/apps/sessions",
          headers: { authorization: `Bearer ${webSession}` },
          body: { public_addr: hostOf(app) },
        });
        if (started.status !== 201) throw new Error(`app session: ${started.status} ${started.text}`);
        const { code, login_url } = started.json as { code: string; login_url: string };
        const login = new URL(login_url);
        login.searchParams.set("code", code);
        login.searchParams.set("state", state);
        login.searchParams.set("path", "/get");
        const done = await send({
          host: hostOf(app),
          path: `${login.pathname}${login.search}`,
          headers: { cookie: `__Host-svc_app_state=${state}` },
        });
        const cookie = cookieSet(done, "__Host-svc_app_session");
        if (done.status !== 303 || !cookie) throw new Error(`app login: ${done.status} ${done.text}`);
        return cookie;
      },
      async close() {
        await running.close();
        await httpbin.stop();
        await httpbinTls.stop();
        await rm(dir, { recursive: true, force: true });
      },
    };
    return kit;
  } catch (err) {
    await platform?.close();
    await httpbin.stop();
    await httpbinTls.stop();
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
}
