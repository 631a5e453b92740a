// Application access through `svcd proxy` (the Kubernetes role, server/roles/proxy.ts) with a real
// auth behind it: the identity folder's certificate names *.<public host> as auth issues it, and
// proxy.public_tls (a wildcard certificate from another CA, as cert-manager would issue) is what
// app hosts present; the whole login and a forwarded request with the user's assertion.
import { X509Certificate } from "node:crypto";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createRootCa,
  generateEcdsaP256,
  issueTlsClientCert,
  issueTlsServerCert,
  privateKeyToPem,
  serviceIdentityUri,
  type X509Issuer,
} from "../core/certs/x509.ts";
import { systemClock } from "../core/clock.ts";
import { API_VERSION } from "../core/resources/index.ts";
import { checkConfig } from "../server/config.ts";
import { type RunningProxy, startProxy } from "../server/roles/proxy.ts";
import { proxyPublicNames } from "../server/roles/proxy-identity.ts";
import { type Httpbin, startHttpbin } from "./harness/httpbin.ts";
import { cookieSet, type SendOptions, sendTo } from "./proxy-apps-kit.ts";
import { type AuthSide, PASSWORD, PUBLIC_HOST, startAuthSide, USERS } from "./proxy-fixture.ts";

const clock = systemClock;
const APP_HOST = `httpbin.${PUBLIC_HOST}`;

async function leaf(ca: X509Issuer, dnsNames: string[]) {
  const key = generateEcdsaP256();
  const certPem = await issueTlsServerCert(ca, {
    publicKey: key.publicKey,
    commonName: dnsNames[0] ?? "x",
    dnsNames,
    clock,
  });
  return { certPem, keyPem: privateKeyToPem(key.privateKey) };
}

let dir = "";
let authSide: AuthSide;
let httpbin: Httpbin;
let proxy: RunningProxy;
let port = 0;
let publicCaPem = "";
let identityCertPem = "";

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "svc-proxy-apps-role-"));
  authSide = await startAuthSide({ apps: true });
  httpbin = await startHttpbin();
  await authSide.source.apply({
    apiVersion: API_VERSION,
    kind: "App",
    metadata: { name: "httpbin", labels: { env: "dev" } },
    spec: { uri: httpbin.url },
  });
  // The identity as auth writes it into the Secret (server/roles/auth.ts): public names first.
  const id = await leaf(authSide.cas.hostCa, [...proxyPublicNames(PUBLIC_HOST), "localhost"]);
  identityCertPem = id.certPem;
  const clientKey = generateEcdsaP256();
  const clientCertPem = await issueTlsClientCert(authSide.cas.hostCa, {
    publicKey: clientKey.publicKey,
    commonName: "proxy",
    uri: serviceIdentityUri("proxy", "proxy-test"),
    clock,
  });
  await mkdir(join(dir, "identity"), { recursive: true });
  const files: Record<string, string> = {
    "tls.crt": id.certPem,
    "tls.key": id.keyPem,
    "client.crt": clientCertPem,
    "client.key": privateKeyToPem(clientKey.privateKey),
    "ca.crt": authSide.hostCaPem,
  };
  for (const [name, text] of Object.entries(files)) await writeFile(join(dir, "identity", name), text);
  // A browser-trusted wildcard from another CA (proxy.public_tls).
  const caKey = generateEcdsaP256();
  publicCaPem = await createRootCa({ privateKey: caKey.privateKey, commonName: "Public Test CA", clock });
  const pub = await leaf({ certPem: publicCaPem, privateKey: caKey.privateKey }, [
    PUBLIC_HOST,
    `*.${PUBLIC_HOST}`,
  ]);
  await mkdir(join(dir, "public"));
  await writeFile(join(dir, "public", "tls.crt"), pub.certPem);
  await writeFile(join(dir, "public", "tls.key"), pub.keyPem);
  await mkdir(join(dir, "manifests"));
  const config = checkConfig({
    version: 1,
    cluster_name: "proxy-test",
    auth: { listen_addr: "127.0.0.1:1" },
    proxy: {
      listen_addr: "127.0.0.1:0",
      public_addr: `${PUBLIC_HOST}:443`,
      oidc_issuer_url: `https://${PUBLIC_HOST}`,
      auth_addr: authSide.auth.address,
      identity_dir: join(dir, "identity"),
      public_tls: { cert_file: join(dir, "public", "tls.crt"), key_file: join(dir, "public", "tls.key") },
    },
    client_tools: { min_version: "0.1.0", recommended_version: "0.1.0" },
    backend: { type: "sqlite", path: join(dir, "unused.db") },
    source: { type: "folder", path: join(dir, "manifests") },
    ca_store: { type: "files", path: join(dir, "ca") },
  });
  proxy = await startProxy(config, {
    logger: pino({ level: process.env["SVC_TEST_LOG_LEVEL"] ?? "silent" }),
  });
  port = Number(new URL(proxy.url).port);
}, 120_000);

afterAll(async () => {
  await proxy?.close();
  await httpbin?.stop();
  await authSide?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
}, 60_000);

// Browsers trust the public CA only; the main host's API calls are made the same way.
const send = (o: SendOptions) => sendTo(port, publicCaPem, { ...o, host: o.host.replace(/:\d+$/, "") });

describe("svcd proxy with application access", () => {
  it("names *.<public host> on the identity auth issues", () => {
    expect(new X509Certificate(identityCertPem).checkHost(APP_HOST)).toBe(`*.${PUBLIC_HOST}`);
    expect(proxyPublicNames("10.0.0.1")).toEqual(["10.0.0.1"]);
  });

  it("presents the public wildcard certificate on app hosts and sends a visitor to the launch page", async () => {
    const r = await send({ host: APP_HOST, path: "/get" });
    expect(r.status).toBe(302);
    expect(String(r.headers.location)).toMatch(
      new RegExp(`^https://${PUBLIC_HOST}/web/launch/${APP_HOST}\\?`),
    );
  });

  it("logs in on the app host and forwards with the user's assertion", async () => {
    const login = await send({
      host: PUBLIC_HOST,
      method: "POST",
      path: "/v1/webapi/login",
      body: { username: USERS.user, password: PASSWORD },
    });
    expect(login.status, login.text).toBe(200);
    const web = (login.json as { session_id: string }).session_id;
    const state = cookieSet(await send({ host: APP_HOST, path: "/" }), "__Host-svc_app_state") ?? "";
    const started = await send({
      host: PUBLIC_HOST,
      method: "POST",
      path: "/v1/webapi/apps/sessions",
      headers: { authorization: `Bearer ${web}` },
      body: { public_addr: APP_HOST },
    });
    expect(started.status, started.text).toBe(201);
    const { code, login_url } = started.json as { code: string; login_url: string };
    expect(login_url).toBe(`https://${APP_HOST}/x-svc/app-login`);
    const done = await send({
      host: APP_HOST,
      path: `/x-svc/app-login?${new URLSearchParams({ code, state, path: "/headers" })}`,
      headers: { cookie: `__Host-svc_app_state=${state}` },
    });
    expect(done.status, done.text).toBe(303);
    const cookie = cookieSet(done, "__Host-svc_app_session") ?? "";
    const r = await send({
      host: APP_HOST,
      path: "/headers",
      headers: { cookie: `__Host-svc_app_session=${cookie}` },
    });
    expect(r.status, r.text).toBe(200);
    const [assertion] = (r.json as { headers: Record<string, string[]> }).headers["Svc-Jwt-Assertion"] ?? [];
    const claims = JSON.parse(Buffer.from(assertion?.split(".")[1] ?? "", "base64url").toString()) as Record<
      string,
      unknown
    >;
    expect(claims).toMatchObject({ sub: USERS.user, aud: httpbin.url, iss: `https://${PUBLIC_HOST}` });
  });
});
