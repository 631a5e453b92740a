// Application access, auth's side, through the real gRPC API over TLS: which apps a user's roles
// reach (app_labels, deny wins), the one-time code and its exchange by the proxy (single use,
// bound to its host, 60 s), GetAppSession deciding again, and the Svc-Jwt-Assertion checked with
// jose against the App CA's published JWKS.
import { createHash } from "node:crypto";
import { status } from "@grpc/grpc-js";
import { createLocalJWKSet, decodeProtectedHeader, type JSONWebKeySet, jwtVerify } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { API_VERSION, parseResource } from "../core/resources/index.ts";
import { callUnary, userMetadata } from "../server/auth/client.ts";
import {
  type AppsEnv,
  auditOf,
  launch,
  PROXY_MD,
  PUBLIC_URL,
  startAppsEnv,
  user,
  webSession,
} from "./auth-apps-fixture.ts";
import { statusOf } from "./auth-fixture.ts";

let a: AppsEnv;

beforeAll(async () => {
  a = await startAppsEnv();
});
afterAll(async () => {
  await a?.close();
});

const sha = (s: string) => createHash("sha256").update(s).digest("hex");

async function listAs(name: string) {
  return (await callUnary(a.env.client, "ListApps", {}, userMetadata(await webSession(a, name)))).apps;
}

describe("ListApps", () => {
  it("lists the apps app_labels reach, a deny match winning, URIs only for apps/list", async () => {
    const dana = await listAs("dana");
    expect(dana.map((x) => x.name)).toEqual(["grafana", "vault"]);
    expect(dana[0]).toEqual({
      name: "grafana",
      description: "Dashboards",
      public_addr: "grafana.proxy.test",
      public_url: "https://grafana.proxy.test:3080/",
      labels: { env: "dev" },
      uri: "",
    });
    expect(dana[1]).toMatchObject({
      public_addr: "secrets.proxy.test",
      public_url: "https://secrets.proxy.test:3080/",
    });
    // "*": "*" allows all three; deny tier=secret takes vault away.
    expect((await listAs("fred")).map((x) => x.name)).toEqual(["billing", "grafana"]);
    expect(await listAs("nora")).toEqual([]);
    const gina = await listAs("gina");
    expect(gina.map((x) => [x.name, x.uri])).toEqual([
      ["grafana", "http://127.0.0.1:3000/"],
      ["vault", "http://10.0.0.9:8200"],
    ]);
  });
});

describe("hosts the proxy cannot serve", () => {
  it("an App whose host another App claims is neither listed, launched nor served", async () => {
    const web = await webSession(a, "dana");
    const g = await launch(a, web, "grafana");
    // Claims grafana's default host: two Apps at one host, so neither is served there.
    await a.source.apply(
      parseResource({
        apiVersion: API_VERSION,
        kind: "App",
        metadata: { name: "shadow", labels: { env: "dev" } },
        spec: { uri: "http://127.0.0.1:9/", public_addr: "grafana.proxy.test" },
      }),
    );
    try {
      expect((await listAs("dana")).map((x) => x.name)).toEqual(["vault"]);
      for (const req of [
        { app_name: "grafana" },
        { app_name: "shadow" },
        { public_addr: "grafana.proxy.test" },
      ]) {
        const r = await statusOf(callUnary(a.env.client, "CreateAppSession", req, userMetadata(web)));
        expect(r.code, JSON.stringify(req)).toBe(status.NOT_FOUND);
      }
      const got = await statusOf(
        callUnary(
          a.proxy,
          "GetAppSession",
          { session_id: g.session_id, public_addr: "grafana.proxy.test" },
          PROXY_MD(),
        ),
      );
      expect(got.code).toBe(status.NOT_FOUND);
    } finally {
      await a.source.remove("App", "shadow");
    }
    expect(
      (
        await callUnary(
          a.proxy,
          "GetAppSession",
          { session_id: g.session_id, public_addr: "grafana.proxy.test" },
          PROXY_MD(),
        )
      ).app_name,
    ).toBe("grafana");
  });
});

describe("CreateAppSession", () => {
  it("answers an app the user may not reach exactly as a missing one", async () => {
    const fred = userMetadata(await webSession(a, "fred"));
    const forbidden = await statusOf(
      callUnary(a.env.client, "CreateAppSession", { app_name: "vault" }, fred),
    );
    const missing = await statusOf(callUnary(a.env.client, "CreateAppSession", { app_name: "nope" }, fred));
    expect(forbidden.code).toBe(status.NOT_FOUND);
    expect(forbidden).toEqual(missing);
    const byHost = await statusOf(
      callUnary(a.env.client, "CreateAppSession", { public_addr: "secrets.proxy.test" }, fred),
    );
    expect(byHost).toEqual(missing);
    // By host name, as the launch page asks (case-insensitively): the code and the app.
    const ok = await callUnary(a.env.client, "CreateAppSession", { public_addr: "Grafana.Proxy.Test" }, fred);
    expect(ok.code).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(ok.app?.name).toBe("grafana");
    expect(ok.expires_unix_ms).toBe(a.clock.now().getTime() + 60_000);
    const both = await statusOf(callUnary(a.env.client, "CreateAppSession", {}, fred));
    expect(both.code).toBe(status.INVALID_ARGUMENT);
  });
});

describe("ExchangeAppSession", () => {
  it("trades the code once for a session whose grant names the user, app and filled headers", async () => {
    const web = await webSession(a, "dana");
    const c = await callUnary(a.env.client, "CreateAppSession", { app_name: "grafana" }, userMetadata(web));
    const before = await auditOf(a, "app.session.start");
    const g = await callUnary(
      a.proxy,
      "ExchangeAppSession",
      { code: c.code, public_addr: "grafana.proxy.test" },
      PROXY_MD(),
    );
    expect(g.session_id).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(g).toMatchObject({
      username: "dana",
      roles: ["dev-apps"],
      app_name: "grafana",
      app_uri: "http://127.0.0.1:3000/",
      public_addr: "grafana.proxy.test",
      insecure_skip_verify: false,
      redirect_hosts: ["grafana.internal"],
      web_session_hash: sha(web),
      headers: [
        { name: "X-Grafana-User", value: "dana" },
        { name: "X-Teams", value: "teams=ops,db" },
      ],
    });
    expect(g.traits["teams"]?.values).toEqual(["ops", "db"]);
    const second = await statusOf(
      callUnary(
        a.proxy,
        "ExchangeAppSession",
        { code: c.code, public_addr: "grafana.proxy.test" },
        PROXY_MD(),
      ),
    );
    expect(second.code).toBe(status.NOT_FOUND);
    // One start event, naming the session by a short reference only (no ID, no code).
    const started = (await auditOf(a, "app.session.start")).slice(before.length);
    expect(started).toHaveLength(1);
    expect(started[0]?.user_name).toBe("dana");
    expect(started[0]?.fields).toEqual({
      emitted_by: "agent:proxy:p0",
      app: "grafana",
      public_addr: "grafana.proxy.test",
      app_uri: "http://127.0.0.1:3000/",
      session: sha(g.session_id).slice(0, 8),
    });
    const text = JSON.stringify(started);
    expect(text).not.toContain(g.session_id);
    expect(text).not.toContain(c.code);
  });

  it("binds the code to its host: another host gets NOT_FOUND and the code stays usable", async () => {
    const web = await webSession(a, "dana");
    const c = await callUnary(a.env.client, "CreateAppSession", { app_name: "grafana" }, userMetadata(web));
    const other = await statusOf(
      callUnary(
        a.proxy,
        "ExchangeAppSession",
        { code: c.code, public_addr: "secrets.proxy.test" },
        PROXY_MD(),
      ),
    );
    expect(other.code).toBe(status.NOT_FOUND);
    const g = await callUnary(
      a.proxy,
      "ExchangeAppSession",
      { code: c.code, public_addr: "grafana.proxy.test" },
      PROXY_MD(),
    );
    expect(g.app_name).toBe("grafana");
    // The session is bound to its host too.
    const elsewhere = await statusOf(
      callUnary(
        a.proxy,
        "GetAppSession",
        { session_id: g.session_id, public_addr: "secrets.proxy.test" },
        PROXY_MD(),
      ),
    );
    expect(elsewhere.code).toBe(status.NOT_FOUND);
  });

  it("decides again at the exchange: access lost since the code means NOT_FOUND and no session", async () => {
    await a.source.apply(parseResource(user("hank", ["dev-apps"])));
    const c = await callUnary(
      a.env.client,
      "CreateAppSession",
      { app_name: "grafana" },
      userMetadata(await webSession(a, "hank")),
    );
    await a.source.apply(parseResource(user("hank", ["prod-viewer"])));
    const starts = (await auditOf(a, "app.session.start")).length;
    const ends = (await auditOf(a, "app.session.end")).length;
    const r = await statusOf(
      callUnary(
        a.proxy,
        "ExchangeAppSession",
        { code: c.code, public_addr: "grafana.proxy.test" },
        PROXY_MD(),
      ),
    );
    expect(r.code).toBe(status.NOT_FOUND);
    expect((await auditOf(a, "app.session.start")).length).toBe(starts);
    expect((await auditOf(a, "app.session.end")).length).toBe(ends);
  });

  it("refuses a code after its 60 s", async () => {
    const web = await webSession(a, "dana");
    const c = await callUnary(a.env.client, "CreateAppSession", { app_name: "grafana" }, userMetadata(web));
    a.clock.advance(60_001);
    const late = await statusOf(
      callUnary(
        a.proxy,
        "ExchangeAppSession",
        { code: c.code, public_addr: "grafana.proxy.test" },
        PROXY_MD(),
      ),
    );
    expect(late.code).toBe(status.NOT_FOUND);
  });
});

describe("GetAppSession", () => {
  const get = (id: string, host = "grafana.proxy.test") =>
    callUnary(a.proxy, "GetAppSession", { session_id: id, public_addr: host }, PROXY_MD());

  it("decides again: a role change, a lock and the web logout each end what it answers", async () => {
    const web = await webSession(a, "gina");
    const g = await launch(a, web, "grafana");
    expect((await get(g.session_id)).username).toBe("gina");

    // Roles: gina loses dev-apps -> NOT_FOUND; given back -> served again.
    await a.source.apply(parseResource(user("gina", ["app-admin"])));
    expect((await statusOf(get(g.session_id))).code).toBe(status.NOT_FOUND);
    await a.source.apply(parseResource(user("gina", ["dev-apps", "app-admin"])));
    expect((await get(g.session_id)).roles).toEqual(["dev-apps", "app-admin"]);

    // A lock on the user: PERMISSION_DENIED with the lock's message.
    await a.source.apply(
      parseResource({
        apiVersion: API_VERSION,
        kind: "Lock",
        metadata: { name: "lock-gina" },
        spec: { target: { user: "gina" }, message: "incident 42" },
      }),
    );
    const locked = await statusOf(get(g.session_id));
    expect(locked.code).toBe(status.PERMISSION_DENIED);
    expect(locked.details).toContain("incident 42");
    await a.source.remove("Lock", "lock-gina");
    expect((await get(g.session_id)).username).toBe("gina");

    // Logging out of the web session ends the app session (app.session.end, web_session_ended).
    await callUnary(a.env.client, "DeleteSession", {}, userMetadata(web));
    expect((await statusOf(get(g.session_id))).code).toBe(status.NOT_FOUND);
    const ended = (await auditOf(a, "app.session.end")).filter(
      (e) => e.fields["session"] === sha(g.session_id).slice(0, 8),
    );
    expect(ended.map((e) => e.fields["reason"])).toEqual(["web_session_ended"]);
  });

  it("refuses a session without MFA once a role requires it, and a request naming no host", async () => {
    await a.source.apply(parseResource(user("ivy", ["dev-apps"])));
    const g = await launch(a, await webSession(a, "ivy"), "grafana");
    expect((await get(g.session_id)).username).toBe("ivy");
    const noHost = await statusOf(
      callUnary(a.proxy, "GetAppSession", { session_id: g.session_id, public_addr: "" }, PROXY_MD()),
    );
    expect(noHost.code).toBe(status.INVALID_ARGUMENT);
    await a.source.apply(parseResource(user("ivy", ["dev-apps", "needs-mfa"])));
    expect((await statusOf(get(g.session_id))).code).toBe(status.NOT_FOUND);
  });

  it("signs a fresh assertion that verifies against the App CA's JWKS with the user's claims", async () => {
    const web = await webSession(a, "dana");
    const g = await launch(a, web, "grafana");
    const r = await get(g.session_id);
    expect(r.session_id).toBe("");
    const jwks = createLocalJWKSet(a.cas.appJwks() as unknown as JSONWebKeySet);
    const { payload } = await jwtVerify(r.assertion, jwks, {
      issuer: PUBLIC_URL,
      audience: "http://127.0.0.1:3000/",
      algorithms: ["ES256"],
      currentDate: a.clock.now(),
    });
    expect(payload).toMatchObject({
      sub: "dana",
      username: "dana",
      roles: ["dev-apps"],
      traits: { teams: ["ops", "db"], logins: ["dana"] },
    });
    expect(typeof payload.jti).toBe("string");
    const now = Math.floor(a.clock.now().getTime() / 1000);
    expect(payload.iat).toBe(now);
    expect(payload.exp).toBe(now + 120);
    expect(r.assertion_expires_unix_ms).toBe((now + 120) * 1000);
    expect(decodeProtectedHeader(r.assertion)).toMatchObject({
      alg: "ES256",
      kid: a.cas.appJwtKeys[0]?.kid,
    });
    // Not valid for another app's audience, nor after it expires.
    await expect(
      jwtVerify(r.assertion, jwks, { audience: "https://billing.internal:8443" }),
    ).rejects.toThrow();
    await expect(
      jwtVerify(r.assertion, jwks, { currentDate: new Date(a.clock.now().getTime() + 121_000) }),
    ).rejects.toThrow();
  });

  it("never lets the assertion outlive the app session (the web session's expiry)", async () => {
    const web = await webSession(a, "dana", new Date(a.clock.now().getTime() + 30_000));
    const g = await launch(a, web, "grafana");
    expect(g.expires_unix_ms).toBe(a.clock.now().getTime() + 30_000);
    expect(g.assertion_expires_unix_ms).toBeLessThanOrEqual(g.expires_unix_ms);
  });
});
