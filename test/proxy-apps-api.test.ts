// The web API of application access on the main host (GET /v1/webapi/apps, POST and DELETE
// /v1/webapi/apps/sessions) through real HTTPS, a real proxy and a real auth with real roles:
// lists filtered by app_labels, one 404 for unknown and unreachable apps, 401 without a session,
// CSRF/Origin refusal of cookie-authenticated writes, bad bodies 400, and every answer valid
// against the route's schema in the served OpenAPI document. App sessions the tests end are
// traded for real first (ExchangeAppSession as the proxy identity over gRPC).
import { Ajv, type ValidateFunction } from "ajv";
import addFormats from "ajv-formats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NotFoundError } from "../core/errors.ts";
import { API_VERSION } from "../core/resources/index.ts";
import type { AuthServiceClient } from "../proto/generated/svc/v1/AuthService.ts";
import { agentMetadata, callUnary, createAuthClient } from "../server/auth/client.ts";
import { setPassword } from "../server/auth/passwords.ts";
import { CSRF_HEADER, csrfTokenFor } from "../server/proxy/credentials.ts";
import { proxyCallerId } from "../server/proxy/tunnel/registration.ts";
import {
  type AuthSide,
  PASSWORD,
  PUBLIC_HOST,
  PUBLIC_ORIGIN,
  startAuthSide,
  startProxySide,
  USERS,
} from "./proxy-fixture.ts";
import { cookieHeader, type HttpResponse, type HttpsClient } from "./proxy-https-client.ts";

let side: AuthSide;
let proxy: Awaited<ReturnType<typeof startProxySide>>;
let client: HttpsClient;
/** auth's gRPC as the proxy identity: the app host's part of the flow */
let asProxy: AuthServiceClient;
/** the proxy's x-agent-id, from its certificate */
let proxyId: string;
let openapi: { paths: Record<string, Record<string, { responses: Record<string, unknown> }>> };

const resource = (kind: string, name: string, spec: unknown, labels?: Record<string, string>) => ({
  apiVersion: API_VERSION,
  kind,
  metadata: { name, ...(labels ? { labels } : {}) },
  spec,
});

/** dave reaches the env=dev apps (wiki, docs), vera none, alice (preset access) and the admin all. */
const DAVE = "dave";
const VERA = "vera";

beforeAll(async () => {
  side = await startAuthSide({ apps: true });
  for (const r of [
    resource("App", "grafana", { uri: "http://127.0.0.1:9", description: "Dashboards" }, { env: "prod" }),
    resource("App", "wiki", { uri: "http://127.0.0.1:9/wiki" }, { env: "dev" }),
    resource(
      "App",
      "docs",
      { uri: "https://docs.internal:8443", public_addr: `handbook.${PUBLIC_HOST}` },
      { env: "dev", team: "web" },
    ),
    resource("Role", "dev-apps", { allow: { app_labels: { env: "dev" } } }),
    resource("Role", "nodes-only", { allow: { logins: ["vera"], node_labels: { "*": "*" } } }),
    resource("User", DAVE, { roles: ["dev-apps"] }),
    resource("User", VERA, { roles: ["nodes-only"] }),
  ]) {
    await side.source.apply(r as Parameters<typeof side.source.apply>[0]);
  }
  for (const u of [DAVE, VERA]) await setPassword(side.backend, u, PASSWORD);
  proxy = await startProxySide({
    authAddress: side.auth.address,
    hostCaPem: side.hostCaPem,
    proxyClient: side.proxyClient,
    proxyServer: side.proxyServer,
    resources: side.source,
  });
  client = proxy.client;
  asProxy = createAuthClient({
    address: side.auth.address,
    caPems: [side.hostCaPem],
    certPem: side.proxyClient.certPem,
    keyPem: side.proxyClient.keyPem,
  });
  proxyId = proxyCallerId(side.proxyClient.certPem);
  const doc = await client.send({ path: "/v1/webapi/openapi.json" });
  expect(doc.status).toBe(200);
  openapi = doc.json as typeof openapi;
}, 60_000);

afterAll(async () => {
  asProxy?.close();
  await proxy?.close();
  await side?.close();
});

interface Login {
  sessionId: string;
  cookies: string;
}
const logins = new Map<string, Login>();
async function login(username: string): Promise<Login> {
  const known = logins.get(username);
  if (known) return known;
  const res = await client.send({
    method: "POST",
    path: "/v1/webapi/login",
    headers: { origin: PUBLIC_ORIGIN },
    body: { username, password: PASSWORD },
  });
  expect(res.status, res.text).toBe(200);
  const l = {
    sessionId: (res.json as { session_id: string }).session_id,
    cookies: cookieHeader(res.setCookies),
  };
  logins.set(username, l);
  return l;
}
const bearer = async (u: string) => ({ authorization: `Bearer ${(await login(u)).sessionId}` });

// Compiled once per (path, method, status) from the document the proxy serves.
const ajv = new Ajv({ strict: false, allErrors: true });
addFormats.default(ajv);
const validators = new Map<string, ValidateFunction>();
/** The answer's body against the response schema its route declares for that status. */
function expectSchemaValid(res: HttpResponse, path: string, method: string): void {
  const key = `${method} ${path} ${res.status}`;
  let v = validators.get(key);
  if (!v) {
    const r = openapi.paths[path]?.[method]?.responses[String(res.status)] as
      | { content?: Record<string, { schema: object }> }
      | undefined;
    const schema = r?.content?.["application/json"]?.schema;
    expect(schema, `${key} is declared in the OpenAPI document`).toBeDefined();
    v = ajv.compile(schema as object);
    validators.set(key, v);
  }
  expect(v(res.json), `${key}: ${JSON.stringify(v.errors)}`).toBe(true);
}

const codeOf = (res: HttpResponse) => (res.json as { error?: { code: string } }).error?.code;

interface AppView {
  name: string;
  description: string;
  public_addr: string;
  public_url: string;
  labels: Record<string, string>;
  uri?: string;
}
interface Started {
  code: string;
  login_url: string;
  app: AppView;
  expires: string;
}

async function listAs(user: string): Promise<AppView[]> {
  const res = await client.send({ path: "/v1/webapi/apps", headers: await bearer(user) });
  expect(res.status, res.text).toBe(200);
  expectSchemaValid(res, "/v1/webapi/apps", "get");
  return (res.json as { apps: AppView[] }).apps;
}

async function start(user: string, body: unknown): Promise<HttpResponse> {
  return client.send({
    method: "POST",
    path: "/v1/webapi/apps/sessions",
    headers: await bearer(user),
    body,
  });
}

/** The app host's half: the code traded for the app session id (as the proxy would). */
async function exchange(started: Started): Promise<string> {
  const grant = await callUnary(
    asProxy,
    "ExchangeAppSession",
    { code: started.code, public_addr: started.app.public_addr },
    agentMetadata(proxyId),
  );
  expect(grant.session_id).not.toBe("");
  return grant.session_id;
}
async function appSessionLive(sessionId: string, publicAddr: string): Promise<boolean> {
  try {
    await callUnary(
      asProxy,
      "GetAppSession",
      { session_id: sessionId, public_addr: publicAddr },
      agentMetadata(proxyId),
    );
    return true;
  } catch (err) {
    if (err instanceof NotFoundError) return false;
    throw err;
  }
}

describe("without a session", () => {
  it.each([
    ["GET", "/v1/webapi/apps", undefined],
    ["POST", "/v1/webapi/apps/sessions", { app_name: "wiki" }],
    ["DELETE", "/v1/webapi/apps/sessions", undefined],
    ["DELETE", "/v1/webapi/apps/sessions?app=wiki", undefined],
  ] as const)("%s %s answers 401", async (method, path, body) => {
    const res = await client.send({ method, path, ...(body ? { body } : {}) });
    expect(res.status, res.text).toBe(401);
    expect(codeOf(res)).toBe("not_authenticated");
    expectSchemaValid(res, path.split("?")[0] ?? path, method.toLowerCase());
  });
});

describe("GET /v1/webapi/apps", () => {
  it("lists only the apps the caller's roles reach, sorted, with their public addresses", async () => {
    const dave = await listAs(DAVE);
    expect(dave.map((a) => a.name)).toEqual(["docs", "wiki"]);
    expect(dave[0]).toEqual({
      name: "docs",
      description: "",
      public_addr: `handbook.${PUBLIC_HOST}`,
      public_url: `https://handbook.${PUBLIC_HOST}/`,
      labels: { env: "dev", team: "web" },
    });
    expect(dave[1]?.public_addr).toBe(`wiki.${PUBLIC_HOST}`);
    expect(await listAs(VERA)).toEqual([]);
  });

  it("shows internal URIs only to callers whose roles may list apps", async () => {
    const alice = await listAs(USERS.user);
    expect(alice.map((a) => a.name)).toEqual(["docs", "grafana", "wiki"]);
    expect(alice.every((a) => a.uri === undefined)).toBe(true);
    const admin = await listAs(USERS.admin);
    expect(Object.fromEntries(admin.map((a) => [a.name, a.uri]))).toEqual({
      docs: "https://docs.internal:8443",
      grafana: "http://127.0.0.1:9",
      wiki: "http://127.0.0.1:9/wiki",
    });
  });
});

describe("POST /v1/webapi/apps/sessions", () => {
  it("by name: 201 with a one-time code, its expiry (a minute, within the web session) and the app host's login URL", async () => {
    const before = Date.now();
    const res = await start(DAVE, { app_name: "wiki" });
    expect(res.status, res.text).toBe(201);
    expectSchemaValid(res, "/v1/webapi/apps/sessions", "post");
    expect(res.headers["cache-control"]).toBe("no-store");
    const s = res.json as Started;
    expect(s.code).toMatch(/^[A-Za-z0-9_-]{40,}$/);
    expect(s.login_url).toBe(`https://wiki.${PUBLIC_HOST}/x-svc/app-login`);
    expect(s.app.name).toBe("wiki");
    expect(s.app.uri).toBeUndefined();
    const session = await client.send({ path: "/v1/webapi/session", headers: await bearer(DAVE) });
    const webExpires = Date.parse((session.json as { expires_at: string }).expires_at);
    expect(Date.parse(s.expires)).toBeGreaterThan(before);
    expect(Date.parse(s.expires)).toBeLessThanOrEqual(webExpires);
    // the code's, not the session's: a minute at most
    expect(Date.parse(s.expires)).toBeLessThanOrEqual(Date.now() + 61_000);
  });

  it("by the host the browser came from (the launch page): the App with that public address", async () => {
    const res = await start(DAVE, { public_addr: `handbook.${PUBLIC_HOST}` });
    expect(res.status, res.text).toBe(201);
    const s = res.json as Started;
    expect(s.app.name).toBe("docs");
    expect(s.login_url).toBe(`https://handbook.${PUBLIC_HOST}/x-svc/app-login`);
    // The code is good once, for this host only.
    const id = await exchange(s);
    expect(await appSessionLive(id, `handbook.${PUBLIC_HOST}`)).toBe(true);
    await expect(exchange(s)).rejects.toBeInstanceOf(NotFoundError);
  });

  it("answers one 404 for an app that does not exist and one the caller may not reach", async () => {
    const answers: HttpResponse[] = [];
    for (const [user, body] of [
      [DAVE, { app_name: "grafana" }],
      [DAVE, { app_name: "nope" }],
      [VERA, { app_name: "wiki" }],
    ] as const) {
      const res = await start(user, body);
      expect(res.status, `${user} ${JSON.stringify(body)}: ${res.text}`).toBe(404);
      expectSchemaValid(res, "/v1/webapi/apps/sessions", "post");
      answers.push(res);
    }
    const messageOf = (r: HttpResponse, name: string) =>
      (r.json as { error: { message: string } }).error.message.replace(name, "<app>");
    expect(
      new Set([
        messageOf(answers[0]!, "grafana"),
        messageOf(answers[1]!, "nope"),
        messageOf(answers[2]!, "wiki"),
      ]).size,
    ).toBe(1);

    const byHost = [];
    for (const host of [`grafana.${PUBLIC_HOST}`, `nope.${PUBLIC_HOST}`]) {
      const res = await start(DAVE, { public_addr: host });
      expect(res.status, res.text).toBe(404);
      byHost.push((res.json as { error: { message: string } }).error.message.replace(host, "<app>"));
    }
    expect(byHost[0]).toBe(byHost[1]);
  });

  it.each([
    ["no field", {}],
    ["both fields", { app_name: "wiki", public_addr: `wiki.${PUBLIC_HOST}` }],
    ["a number", { app_name: 5 }],
    ["an upper-case name", { app_name: "Wiki" }],
    ["a path in the name", { app_name: "../wiki" }],
    ["an empty name", { app_name: "" }],
    ["a host with a port", { public_addr: `wiki.${PUBLIC_HOST}:443` }],
    ["an unknown field", { app_name: "wiki", path: "/" }],
    ["null", null],
    ["an array", [{ app_name: "wiki" }]],
  ])("refuses %s with 400", async (_what, body) => {
    const res = await start(DAVE, body);
    expect(res.status, res.text).toBe(400);
    expect(codeOf(res)).toBe("bad_parameter");
    expectSchemaValid(res, "/v1/webapi/apps/sessions", "post");
  });

  it("refuses a body that is not JSON (415 or 400)", async () => {
    const res = await client.send({
      method: "POST",
      path: "/v1/webapi/apps/sessions",
      headers: { ...(await bearer(DAVE)), "content-type": "text/plain" },
      raw: "app_name=wiki",
    });
    expect([400, 415]).toContain(res.status);
  });
});

describe("cookie sessions: CSRF and Origin on writes", () => {
  const cookieHeaders = async (user: string, extra: Record<string, string>) => ({
    cookie: (await login(user)).cookies,
    ...extra,
  });

  it("GET works with the cookie alone", async () => {
    const res = await client.send({ path: "/v1/webapi/apps", headers: await cookieHeaders(DAVE, {}) });
    expect(res.status, res.text).toBe(200);
  });

  for (const [method, path, body] of [
    ["POST", "/v1/webapi/apps/sessions", { app_name: "wiki" }],
    ["DELETE", "/v1/webapi/apps/sessions", undefined],
  ] as const) {
    it(`${method}: refused without the CSRF token, and from another origin even with it`, async () => {
      const token = csrfTokenFor((await login(DAVE)).sessionId);
      const send = async (extra: Record<string, string>) =>
        client.send({ method, path, headers: await cookieHeaders(DAVE, extra), ...(body ? { body } : {}) });

      const noToken = await send({ origin: PUBLIC_ORIGIN });
      expect(noToken.status, noToken.text).toBe(403);
      expect(codeOf(noToken)).toBe("access_denied");
      expectSchemaValid(noToken, path, method.toLowerCase());

      const otherOrigin = await send({ origin: "https://evil.example", [CSRF_HEADER]: token });
      expect(otherOrigin.status, otherOrigin.text).toBe(403);
      // An app host is another origin too: a page there may not start sessions for others.
      const appOrigin = await send({ origin: `https://wiki.${PUBLIC_HOST}`, [CSRF_HEADER]: token });
      expect(appOrigin.status, appOrigin.text).toBe(403);

      const ok = await send({ origin: PUBLIC_ORIGIN, [CSRF_HEADER]: token });
      expect(ok.status, ok.text).toBe(method === "POST" ? 201 : 200);
    });
  }
});

describe("DELETE /v1/webapi/apps/sessions", () => {
  it("ends the caller's app sessions of one app, then of all; others' stay", async () => {
    const mine: Array<{ id: string; addr: string }> = [];
    for (const name of ["wiki", "wiki", "docs"]) {
      const res = await start(USERS.user, { app_name: name });
      expect(res.status, res.text).toBe(201);
      const s = res.json as Started;
      mine.push({ id: await exchange(s), addr: s.app.public_addr });
    }
    const other = await start(USERS.admin, { app_name: "wiki" });
    const othersId = await exchange(other.json as Started);

    const one = await client.send({
      method: "DELETE",
      path: "/v1/webapi/apps/sessions?app=wiki",
      headers: await bearer(USERS.user),
    });
    expect(one.status, one.text).toBe(200);
    expectSchemaValid(one, "/v1/webapi/apps/sessions", "delete");
    expect(one.json).toEqual({ ended: 2 });
    expect(await appSessionLive(mine[0]!.id, mine[0]!.addr)).toBe(false);
    expect(await appSessionLive(mine[1]!.id, mine[1]!.addr)).toBe(false);
    expect(await appSessionLive(mine[2]!.id, mine[2]!.addr)).toBe(true);

    const all = await client.send({
      method: "DELETE",
      path: "/v1/webapi/apps/sessions?app=",
      headers: await bearer(USERS.user),
    });
    expect(all.json).toEqual({ ended: 1 });
    expect(await appSessionLive(mine[2]!.id, mine[2]!.addr)).toBe(false);
    expect(await appSessionLive(othersId, `wiki.${PUBLIC_HOST}`)).toBe(true);

    const again = await client.send({
      method: "DELETE",
      path: "/v1/webapi/apps/sessions",
      headers: await bearer(USERS.user),
    });
    expect(again.json).toEqual({ ended: 0 });
  });

  it("refuses a malformed app name with 400", async () => {
    const res = await client.send({
      method: "DELETE",
      path: "/v1/webapi/apps/sessions?app=..%2Fwiki",
      headers: await bearer(USERS.user),
    });
    expect(res.status, res.text).toBe(400);
    expectSchemaValid(res, "/v1/webapi/apps/sessions", "delete");
  });
});
