// Shared setup of the application-access tests of auth: real auth over gRPC/TLS (auth-fixture.ts)
// with a manual clock, the real App CA (CertificateAuthorities on a key folder), real roles and
// Apps in the memory source, a proxy identity client (svc://proxy/p0) and a node client.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CertificateAuthorities } from "../core/ca/authorities.ts";
import { FileCaKeyStore } from "../core/ca/key-store.ts";
import { ManualClock } from "../core/clock.ts";
import { API_VERSION } from "../core/resources/index.ts";
import { MemorySource } from "../core/sources/memory.ts";
import type { AppSessionGrant__Output } from "../proto/generated/svc/v1/AppSessionGrant.ts";
import type { AuthServiceClient } from "../proto/generated/svc/v1/AuthService.ts";
import { agentMetadata, callUnary, createAuthClient, userMetadata } from "../server/auth/client.ts";
import { type AuthTestEnv, clientCert, startAuthEnv, testResources } from "./auth-fixture.ts";

export const PUBLIC_HOST = "proxy.test";
export const PUBLIC_URL = `https://${PUBLIC_HOST}:3080`;

const role = (name: string, spec: Record<string, unknown>) => ({
  apiVersion: API_VERSION,
  kind: "Role",
  metadata: { name },
  spec,
});
export const user = (name: string, roles: string[], traits: Record<string, string[]> = {}) => ({
  apiVersion: API_VERSION,
  kind: "User",
  metadata: { name },
  spec: { roles, traits },
});
const app = (name: string, labels: Record<string, string>, spec: Record<string, unknown>) => ({
  apiVersion: API_VERSION,
  kind: "App",
  metadata: { name, labels },
  spec,
});

/**
 * Roles: dev-apps (env=dev), most-apps (every app but tier=secret: deny wins), app-admin (may
 * list apps with their URIs), needs-mfa (require_mfa). Users: dana (dev-apps, traits teams), fred (most-apps), gina
 * (dev-apps + app-admin), nora (no app role). Apps: grafana (dev, header templates, redirect
 * host), billing (prod), vault (dev + secret, its own public_addr).
 */
export function appResources(): unknown[] {
  return [
    ...testResources(),
    role("dev-apps", { allow: { app_labels: { env: "dev" } } }),
    role("most-apps", { allow: { app_labels: { "*": "*" } }, deny: { app_labels: { tier: "secret" } } }),
    role("app-admin", { allow: { rules: [{ resources: ["apps"], verbs: ["list"] }] } }),
    role("needs-mfa", { options: { require_mfa: true } }),
    user("dana", ["dev-apps"], { teams: ["ops", "db"], logins: ["dana"] }),
    user("fred", ["most-apps"]),
    user("gina", ["dev-apps", "app-admin"]),
    user("nora", ["prod-viewer"]),
    app(
      "grafana",
      { env: "dev" },
      {
        uri: "http://127.0.0.1:3000/",
        description: "Dashboards",
        rewrite: {
          headers: [
            { name: "X-Grafana-User", value: "{{user}}" },
            { name: "X-Teams", value: "teams={{internal.teams}}" },
            { name: "X-Missing", value: "{{internal.nope}}" },
          ],
          redirect: ["grafana.internal"],
        },
      },
    ),
    app("billing", { env: "prod" }, { uri: "https://billing.internal:8443" }),
    app(
      "vault",
      { env: "dev", tier: "secret" },
      { uri: "http://10.0.0.9:8200", public_addr: "secrets.proxy.test" },
    ),
  ];
}

export interface AppsEnv {
  env: AuthTestEnv;
  clock: ManualClock;
  cas: CertificateAuthorities;
  source: MemorySource;
  proxy: AuthServiceClient;
  node: AuthServiceClient;
  /** A second auth replica on the same backend and source. */
  replica(): Promise<AuthTestEnv>;
  close(): Promise<void>;
}

export async function startAppsEnv(): Promise<AppsEnv> {
  const dir = await mkdtemp(join(tmpdir(), "svc-auth-apps-"));
  const clock = new ManualClock(Date.now());
  const cas = await CertificateAuthorities.loadOrCreate(new FileCaKeyStore(join(dir, "ca")), {
    clusterName: "test",
    trustDomain: "test.svc",
    clock,
  });
  const source = new MemorySource(appResources());
  const apps = { publicUrl: PUBLIC_URL, signingKey: () => cas.appJwtKeys[0] };
  const env = await startAuthEnv({ clock, source, apps });
  const proxy = createAuthClient({
    address: env.auth.address,
    caPems: [env.pki.hostCa.certPem],
    serverName: "localhost",
    ...(await clientCert(env.pki.hostCa, { service: "proxy", name: "p0" }, clock)),
  });
  env.clients.push(proxy);
  const node = await env.agentClient("node-1");
  const replicas: AuthTestEnv[] = [];
  return {
    env,
    clock,
    cas,
    source,
    proxy,
    node,
    async replica() {
      const r = await startAuthEnv({ clock, source, apps, backend: env.backend, pki: env.pki });
      replicas.push(r);
      return r;
    },
    async close() {
      for (const r of replicas) await r.close();
      await env.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export const PROXY_MD = () => agentMetadata("proxy:p0");

/** A web session of `name` (optionally ending early) and its ID. */
export async function webSession(a: AppsEnv, name: string, notAfter?: Date): Promise<string> {
  return (await a.env.auth.service.sessions.create(name, notAfter ? { notAfter } : {})).id;
}

/** CreateAppSession by name then ExchangeAppSession on the app's host: the grant. */
export async function launch(a: AppsEnv, webId: string, appName: string): Promise<AppSessionGrant__Output> {
  const c = await callUnary(a.env.client, "CreateAppSession", { app_name: appName }, userMetadata(webId));
  return callUnary(
    a.proxy,
    "ExchangeAppSession",
    { code: c.code, public_addr: c.app?.public_addr ?? "" },
    PROXY_MD(),
  );
}

/** The audit events of a type, oldest first. */
export async function auditOf(a: AppsEnv, type: string) {
  const r = await a.env.backend.searchAudit({ type, limit: 500, offset: 0 });
  return r.items.reverse();
}
