// Application access through the proxy (docs/apps.md), forwarding half: the embedded platform
// with go-httpbin as Apps, real TLS clients on the app hosts. A visit without a session goes to
// the console's launch page with a login state; the login path trades the one-time code for a
// host-only cookie; the app then gets the user's Svc-Jwt-Assertion (verified here against the
// proxy's JWKS), the forwarding headers and its own cookies, never ours or a forged assertion;
// bodies stream, WebSockets echo, redirects and cookies stay on the app's public host.
import { X509Certificate } from "node:crypto";
import { readFile } from "node:fs/promises";
import { request } from "node:https";
import { join } from "node:path";
import { connect as tlsConnect } from "node:tls";
import { createLocalJWKSet, type JSONWebKeySet, jwtVerify } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { callUnary, createAuthClient, userMetadata } from "../server/auth/client.ts";
import { until } from "./harness/svcd.ts";
import {
  ADMIN,
  type AppsPlatform,
  cookieSet,
  PASSWORD,
  PUBLIC_HOST,
  setCookies,
  startAppsPlatform,
  USERS,
} from "./proxy-apps-kit.ts";

let kit: AppsPlatform;
let cookie: string;

beforeAll(async () => {
  kit = await startAppsPlatform();
  cookie = await kit.appSession(await kit.login(USERS.dev), "httpbin");
}, 180_000);

afterAll(async () => {
  await kit?.close();
}, 60_000);

const SESSION = "__Host-svc_app_session";
const STATE = "__Host-svc_app_state";
type Echoed = { headers: Record<string, string[]> };
/** TLS name and Host the app host's (the URL names loopback), and the session cookie if given. */
const wsOptions = (session?: string): WebSocket.ClientOptions & { servername: string } => ({
  ca: kit.platform.hostCaPem,
  servername: kit.hostOf("httpbin"),
  headers: {
    host: `${kit.hostOf("httpbin")}:${kit.port}`,
    ...(session ? { cookie: `${SESSION}=${session}` } : {}),
  },
});
const header = (r: { json: unknown }, name: string) => (r.json as Echoed).headers[name];

describe("without an app session", () => {
  it("sends a browser to the launch page on the main host, with a login state cookie", async () => {
    const r = await kit.send({ host: kit.hostOf("httpbin"), path: "/anything/a?b=c&d=%2F" });
    expect(r.status).toBe(302);
    const location = new URL(String(r.headers.location));
    expect(location.origin).toBe(kit.origin);
    expect(location.pathname).toBe(`/web/launch/httpbin.${PUBLIC_HOST}`);
    expect(location.searchParams.get("path")).toBe("/anything/a?b=c&d=%2F");
    const state = cookieSet(r, STATE);
    expect(state).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(location.searchParams.get("state")).toBe(state);
    const line = setCookies(r).find((l) => l.startsWith(`${STATE}=`)) ?? "";
    expect(line).toMatch(/; Secure/);
    expect(line).toMatch(/; HttpOnly/);
    expect(line).toMatch(/; Path=\//);
    expect(line).toMatch(/; SameSite=Lax/);
    expect(line).toMatch(/; Max-Age=300/);
    expect(line).not.toMatch(/Domain=/i);
    expect(r.headers["cache-control"]).toBe("no-store");
    // a browser without a state gets a new one; one with a login under way keeps its own (a
    // page's other requests must not replace it), and a malformed one is replaced
    const fresh = await kit.send({ host: kit.hostOf("httpbin"), path: "/" });
    expect(cookieSet(fresh, STATE)).not.toBe(state);
    const again = await kit.send({
      host: kit.hostOf("httpbin"),
      path: "/",
      headers: { cookie: `${STATE}=${state}` },
    });
    expect(cookieSet(again, STATE)).toBe(state);
    expect(new URL(String(again.headers.location)).searchParams.get("state")).toBe(state);
    const odd = await kit.send({ host: kit.hostOf("httpbin"), path: "/", headers: { cookie: `${STATE}=x` } });
    expect(cookieSet(odd, STATE)).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it("answers an API call (not GET/HEAD) 401 in JSON, no redirect", async () => {
    const r = await kit.send({ host: kit.hostOf("httpbin"), method: "POST", path: "/post", body: { a: 1 } });
    expect(r.status).toBe(401);
    expect(r.json).toMatchObject({ error: { code: "not_authenticated" } });
    expect(r.headers.location).toBeUndefined();
  });
});

describe("the login path", () => {
  it("sets a host-only session cookie for the session's lifetime, clears the state, and goes to the path", async () => {
    const web = await kit.login(USERS.dev);
    const first = await kit.send({ host: kit.hostOf("httpbin"), path: "/" });
    const state = cookieSet(first, STATE) ?? "";
    const started = await kit.send({
      host: PUBLIC_HOST,
      method: "POST",
      path: "/v1/webapi/apps/sessions",
      headers: { authorization: `Bearer ${web}` },
      body: { app_name: "httpbin" },
    });
    expect(started.status, started.text).toBe(201);
    const { code, login_url } = started.json as { code: string; login_url: string };
    expect(login_url).toBe(`${kit.originOf("httpbin")}/x-svc/app-login`);
    const r = await kit.send({
      host: kit.hostOf("httpbin"),
      path: `/x-svc/app-login?code=${code}&state=${state}&path=${encodeURIComponent("/anything/x?y=1")}`,
      headers: { cookie: `${STATE}=${state}` },
    });
    expect(r.status).toBe(303);
    expect(r.headers.location).toBe("/anything/x?y=1");
    expect(r.headers["referrer-policy"]).toBe("no-referrer");
    expect(r.headers["cache-control"]).toBe("no-store");
    const line = setCookies(r).find((l) => l.startsWith(`${SESSION}=`)) ?? "";
    expect(line).toMatch(/^__Host-svc_app_session=[A-Za-z0-9_-]{43}; /);
    expect(line).toMatch(/; Secure/);
    expect(line).toMatch(/; HttpOnly/);
    expect(line).toMatch(/; SameSite=Lax/);
    expect(line).not.toMatch(/Domain=/i);
    const maxAge = Number(/Max-Age=(\d+)/.exec(line)?.[1]);
    // the web session's remaining life (12 h by default), never more
    expect(maxAge).toBeGreaterThan(3600);
    expect(maxAge).toBeLessThanOrEqual(12 * 3600);
    expect(setCookies(r).find((l) => l.startsWith(`${STATE}=`))).toMatch(/Max-Age=0/);
    // the code was used once
    const replay = await kit.send({
      host: kit.hostOf("httpbin"),
      path: `/x-svc/app-login?code=${code}&state=${state}&path=/`,
      headers: { cookie: `${STATE}=${state}` },
    });
    expect(replay.status).toBe(400);
    expect(cookieSet(replay, SESSION)).toBeUndefined();
  });
});

describe("forwarding", () => {
  it("gives the app a Svc-Jwt-Assertion that verifies against the proxy's JWKS, for this user and app", async () => {
    const r = await kit.send({
      host: kit.hostOf("httpbin"),
      path: "/headers",
      headers: { cookie: `${SESSION}=${cookie}` },
    });
    expect(r.status, r.text).toBe(200);
    const [assertion] = header(r, "Svc-Jwt-Assertion") ?? [];
    const jwks = await kit.send({ host: PUBLIC_HOST, path: "/workload-identity/app-jwt-jwks.json" });
    expect(jwks.status).toBe(200);
    const { payload, protectedHeader } = await jwtVerify(
      assertion ?? "",
      createLocalJWKSet(jwks.json as JSONWebKeySet),
      { audience: kit.httpbin.url, issuer: kit.origin },
    );
    expect(protectedHeader.alg).toBe("ES256");
    expect(payload.sub).toBe(USERS.dev);
    expect(payload["roles"]).toEqual(["dev-apps"]);
    // the App's rewrite.headers, filled for the user
    expect(header(r, "X-Svc-User")).toEqual([USERS.dev]);
  });

  it("sets the forwarding headers and replaces what the client claims", async () => {
    const r = await kit.send({
      host: kit.hostOf("httpbin"),
      path: "/headers",
      headers: {
        cookie: `${SESSION}=${cookie}`,
        "svc-jwt-assertion": "forged.jwt.value",
        "x-forwarded-for": "203.0.113.9",
        "x-forwarded-host": "evil.example",
        "x-svc-user": "mallory",
      },
    });
    expect(r.status).toBe(200);
    const assertion = header(r, "Svc-Jwt-Assertion") ?? [];
    expect(assertion).toHaveLength(1);
    expect(assertion[0]).not.toBe("forged.jwt.value");
    expect(assertion[0]?.split(".")).toHaveLength(3);
    expect(header(r, "X-Forwarded-For")).toEqual(["127.0.0.1"]);
    expect(header(r, "X-Forwarded-Proto")).toEqual(["https"]);
    expect(header(r, "X-Forwarded-Host")).toEqual([`${kit.hostOf("httpbin")}:${kit.port}`]);
    expect(header(r, "X-Forwarded-Port")).toEqual([String(kit.port)]);
    expect(header(r, "X-Svc-User")).toEqual([USERS.dev]);
    // the upstream is asked for by its own name
    expect(header(r, "Host")).toEqual([`127.0.0.1:${kit.httpbin.port}`]);
  });

  it("keeps the app's own cookies and never forwards ours", async () => {
    const r = await kit.send({
      host: kit.hostOf("httpbin"),
      path: "/cookies",
      headers: { cookie: `theme=dark; ${SESSION}=${cookie}; ${STATE}=abc; lang=en` },
    });
    expect(r.status).toBe(200);
    expect((r.json as { cookies: Record<string, string> }).cookies).toEqual({ theme: "dark", lang: "en" });
  });

  it("keeps the app's Set-Cookie on the app host (Domain removed) and drops any naming our cookies", async () => {
    const set = await kit.send({
      host: kit.hostOf("httpbin"),
      path: "/cookies/set?flavour=oat",
      headers: { cookie: `${SESSION}=${cookie}` },
    });
    expect(set.status).toBe(302);
    expect(setCookies(set).find((l) => l.startsWith("flavour=oat"))).toBeDefined();
    const wide = new URLSearchParams();
    wide.append("Set-Cookie", `wide=1; Domain=${PUBLIC_HOST}; Path=/`);
    wide.append("Set-Cookie", `${SESSION}=planted; Path=/; Secure`);
    const r = await kit.send({
      host: kit.hostOf("httpbin"),
      path: `/response-headers?${wide}`,
      headers: { cookie: `${SESSION}=${cookie}` },
    });
    expect(r.status).toBe(200);
    const lines = setCookies(r);
    expect(lines.find((l) => l.startsWith("wide=1"))).toBe("wide=1; Path=/");
    expect(lines.find((l) => l.startsWith(`${SESSION}=`))).toBeUndefined();
  });

  it("rewrites redirects to the upstream's origin and to the App's redirect hosts onto the app host", async () => {
    const to = async (url: string) =>
      (
        await kit.send({
          host: kit.hostOf("httpbin"),
          path: `/redirect-to?url=${encodeURIComponent(url)}`,
          headers: { cookie: `${SESSION}=${cookie}` },
        })
      ).headers.location;
    expect(await to(`${kit.httpbin.url}/get?a=1`)).toBe(`${kit.originOf("httpbin")}/get?a=1`);
    expect(await to("http://internal.example/x")).toBe(`${kit.originOf("httpbin")}/x`);
    expect(await to("https://elsewhere.example/y")).toBe("https://elsewhere.example/y");
    expect(await to("/relative")).toBe("/relative");
  });

  it("streams a response as the upstream sends it (first bytes before the end)", async () => {
    const seen = await new Promise<{ firstAtEnd: boolean; bytes: number }>((resolve, reject) => {
      const req = request(
        {
          host: "127.0.0.1",
          port: kit.port,
          path: "/drip?duration=3&numbytes=3&delay=0&code=200",
          ca: kit.platform.hostCaPem,
          servername: kit.hostOf("httpbin"),
          agent: false,
          headers: { host: `${kit.hostOf("httpbin")}:${kit.port}`, cookie: `${SESSION}=${cookie}` },
        },
        (res) => {
          let firstAtEnd: boolean | undefined;
          let bytes = 0;
          res.on("data", (d: Buffer) => {
            // a buffering proxy would hand over everything at once, at the very end
            if (firstAtEnd === undefined) firstAtEnd = bytes + d.length >= 3;
            bytes += d.length;
          });
          res.on("end", () => resolve({ firstAtEnd: firstAtEnd ?? true, bytes }));
          res.on("error", reject);
        },
      );
      req.on("error", reject);
      req.end();
    });
    expect(seen.bytes).toBe(3);
    expect(seen.firstAtEnd).toBe(false);
  });

  it("carries a WebSocket to the app (echo)", async () => {
    const ws = new WebSocket(`wss://127.0.0.1:${kit.port}/websocket/echo`, wsOptions(cookie));
    try {
      await new Promise<void>((resolve, reject) => {
        ws.once("open", () => resolve());
        ws.once("error", reject);
      });
      const echoed = new Promise<string>((resolve) =>
        ws.once("message", (m: Buffer) => resolve(m.toString())),
      );
      ws.send("hello through the proxy");
      expect(await echoed).toBe("hello through the proxy");
    } finally {
      ws.terminate();
    }
  });

  it("refuses a WebSocket without a session (401, no upgrade)", async () => {
    const ws = new WebSocket(`wss://127.0.0.1:${kit.port}/websocket/echo`, wsOptions());
    const status = await new Promise<number>((resolve) => {
      ws.once("unexpected-response", (_req, res) => resolve(res.statusCode ?? 0));
      ws.once("open", () => resolve(101));
      ws.once("error", () => resolve(-1));
    });
    ws.terminate();
    expect(status).toBe(401);
  });
});

describe("metrics", () => {
  it("counts requests per app and status, and the app sessions held", async () => {
    await kit.send({
      host: kit.hostOf("httpbin"),
      path: "/status/418",
      headers: { cookie: `${SESSION}=${cookie}` },
    });
    const text = await (await fetch(`http://127.0.0.1:${kit.platform.diagnosticsPort}/metrics`)).text();
    expect(text).toMatch(/svc_proxy_app_requests_total\{app="httpbin",code="418"[^}]*\} 1/);
    expect(text).toMatch(/svc_proxy_app_requests_total\{app="-",code="302"[^}]*\} [1-9]/);
    expect(
      Number(/svc_proxy_app_session_cache_entries(?:\{[^}]*\})? (\d+)/.exec(text)?.[1]),
    ).toBeGreaterThanOrEqual(1);
  });
});

describe("the app hosts' certificate", () => {
  /** The certificate a host presents to a new connection on `on`'s port, verified against `ca`. */
  const served = (
    on: AppsPlatform,
    servername: string,
    ca: string | string[] = on.platform.hostCaPem,
    o: { nameUnchecked?: boolean } = {},
  ): Promise<X509Certificate> =>
    new Promise((resolve, reject) => {
      // nameUnchecked: the chain is still verified, the name not (the proxy's own certificate
      // for a label no App has names *.localhost, which TLS clients refuse over one label)
      const names = o.nameUnchecked ? { checkServerIdentity: () => undefined } : {};
      const c = tlsConnect({ host: "127.0.0.1", port: on.port, servername, ca, ...names }, () => {
        const cert = c.getPeerX509Certificate();
        c.destroy();
        if (cert) resolve(cert);
        else reject(new Error("no certificate"));
      });
      c.once("error", reject);
    });

  it("under a dotted public host is the proxy's own (it names *.<public host>) for every label, App or not: it tells nothing about which Apps exist", async () => {
    const own = new X509Certificate(kit.platform.proxyIdentity.serverTls().certPem);
    expect(own.subjectAltName).toContain(`DNS:*.${PUBLIC_HOST}`);
    for (const host of [kit.hostOf("httpbin"), `nosuchapp.${PUBLIC_HOST}`]) {
      const cert = await served(kit, host);
      expect(cert.serialNumber).toBe(own.serialNumber);
      expect(cert.checkHost(host)).toBe(`*.${PUBLIC_HOST}`);
    }
  });

  describe("under the one-label default (localhost), where TLS clients refuse the wildcard", () => {
    let local: AppsPlatform;
    beforeAll(async () => {
      local = await startAppsPlatform({ publicHost: "localhost" });
    }, 180_000);
    afterAll(async () => {
      await local?.close();
    }, 60_000);

    it("names exactly the host of an App (issued by the host CA), the proxy's own for other labels, and is re-issued when the proxy's certificate changes", async () => {
      const host = local.hostOf("httpbin");
      const before = await served(local, host);
      expect(before.subjectAltName).toBe(`DNS:${host}`);
      expect(before.checkIssued(new X509Certificate(local.platform.hostCaPem))).toBe(true);
      const proxyOwn = new X509Certificate(local.platform.proxyIdentity.serverTls().certPem);
      expect(
        (await served(local, "nosuchapp.localhost", undefined, { nameUnchecked: true })).serialNumber,
      ).toBe(proxyOwn.serialNumber);
      // a renewal (also what a host CA rotation triggers in svcd start) issues the app host afresh
      await local.platform.proxyIdentity.renewNow();
      const after = await served(local, host);
      expect(after.serialNumber).not.toBe(before.serialNumber);
      expect(after.subjectAltName).toBe(`DNS:${host}`);
      expect(
        (await served(local, "nosuchapp.localhost", undefined, { nameUnchecked: true })).serialNumber,
      ).toBe(new X509Certificate(local.platform.proxyIdentity.serverTls().certPem).serialNumber);
    });

    // Last on this platform: its host CA is mid-rotation afterwards.
    it("is re-issued by the new host CA once a rotation switches the signing key", async () => {
      const host = local.hostOf("httpbin");
      const before = await served(local, host);
      const client = createAuthClient({
        address: local.platform.authAddress,
        caPems: [local.platform.hostCaPem],
        serverName: "localhost",
      });
      try {
        const r = await callUnary(client, "AuthenticateLocal", {
          username: ADMIN,
          password: PASSWORD,
          client_address: "",
        });
        const admin = userMetadata(r.session?.session_id ?? "");
        for (const phase of ["init", "update_clients"]) {
          await callUnary(
            client,
            "RotateCertAuthority",
            { type: "host_x509", phase, mode: "manual", grace_period_seconds: 0, force: false },
            admin,
          );
        }
      } finally {
        client.close();
      }
      // host-ca.pem holds every trusted host CA: the old one and the new one, which signs now
      let trusted: string[] = [];
      await until("host-ca.pem rewritten with both host CAs", async () => {
        trusted = (await readFile(join(local.platform.data.root, "host-ca.pem"), "utf8"))
          .split(/(?<=-----END CERTIFICATE-----\n?)/)
          .filter((p) => p.includes("BEGIN CERTIFICATE"));
        return trusted.length === 2;
      });
      const fresh = trusted.map((p) => new X509Certificate(p)).find((ca) => !before.checkIssued(ca));
      if (!fresh) throw new Error("no new host CA in host-ca.pem");
      let after = before;
      await until(
        "the app host's certificate re-issued by the new key",
        async () => {
          after = await served(local, host, trusted);
          return after.checkIssued(fresh);
        },
        20_000,
      );
      expect(after.subjectAltName).toBe(`DNS:${host}`);
    });
  });
});
