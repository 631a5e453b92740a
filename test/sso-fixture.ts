// The platform as the SSO end-to-end tests need it: real auth (SQLite, its CAs, SSO trusting the
// identity providers' CA) and the real proxy with the web pages, on a public origin with a port
// (https://proxy.svc.test:<port>) that Chromium reaches through a host-resolver rule, so cookies,
// CSRF and WebAuthn all see the origin a user would.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import type { Page } from "playwright-core";
import { openSqliteBackend, type SqliteBackend } from "../core/backend/sqlite.ts";
import { CertificateAuthorities } from "../core/ca/authorities.ts";
import { FileCaKeyStore } from "../core/ca/key-store.ts";
import {
  generateEcdsaP256,
  issueTlsClientCert,
  issueTlsServerCert,
  privateKeyToPem,
  serviceIdentityUri,
} from "../core/certs/x509.ts";
import { systemClock } from "../core/clock.ts";
import { API_VERSION, presets } from "../core/resources/index.ts";
import { MemorySource } from "../core/sources/memory.ts";
import { setPassword } from "../server/auth/passwords.ts";
import { type RunningAuthServer, startAuthServer } from "../server/auth/server.ts";
import type { ProxyConfig } from "../server/proxy/config.ts";
import { proxyDefaults } from "../server/proxy/config.ts";
import { GrpcAuthApi } from "../server/proxy/grpc-auth-api.ts";
import { type ProxyServer, startProxyServer } from "../server/proxy/server.ts";
import { webRoutes } from "../web/serve.ts";
import { freePort } from "./harness/ports.ts";
import { HttpsClient } from "./proxy-https-client.ts";

export const PUBLIC_HOST = "proxy.svc.test";
export const PASSWORD = "correct horse battery staple";

export interface SsoPlatformOptions {
  /** PEM of the identity providers' CA(s) (auth.sso.ca_file) */
  providersCaPem?: string;
  /** auth.local_login (default true) */
  localLogin?: boolean;
  /** auth.default_connector */
  defaultConnector?: string;
  /** Roles, Users and Connectors besides the presets */
  resources?: unknown[];
  /** users given PASSWORD */
  passwordUsers?: string[];
  /** the proxy's port, chosen beforehand (identity providers must know the callback URL) */
  proxyPort?: number;
  /** the proxy's login rate limit (the benchmark lifts it) */
  rateLimit?: ProxyConfig["rateLimit"];
}

export interface SsoPlatform {
  /** https://proxy.svc.test:<port> */
  publicOrigin: string;
  /** host:port for svc --proxy (the public name; tests map it to loopback) */
  proxyAddress: string;
  /** https://127.0.0.1:<port> for clients that do not resolve the public name */
  proxyUrl: string;
  hostCaPem: string;
  client: HttpsClient;
  source: MemorySource;
  backend: SqliteBackend;
  auth: RunningAuthServer;
  proxy: ProxyServer;
  close(): Promise<void>;
}

export function connectorResource(name: string, spec: Record<string, unknown>): unknown {
  return { apiVersion: API_VERSION, kind: "Connector", metadata: { name }, spec };
}

export function roleResource(name: string, spec: Record<string, unknown>): unknown {
  return { apiVersion: API_VERSION, kind: "Role", metadata: { name }, spec };
}

export function userResource(name: string, roles: string[]): unknown {
  return {
    apiVersion: API_VERSION,
    kind: "User",
    metadata: { name },
    spec: { roles, traits: { logins: [name] } },
  };
}

export async function startSsoPlatform(o: SsoPlatformOptions = {}): Promise<SsoPlatform> {
  const dir = await mkdtemp(join(tmpdir(), "svc-sso-test-"));
  const clock = systemClock;
  const logger = pino({ level: process.env["SVC_TEST_LOG_LEVEL"] ?? "silent" });
  const cleanups: Array<() => Promise<void> | void> = [() => rm(dir, { recursive: true, force: true })];
  const close = async () => {
    for (const c of cleanups.reverse()) await c();
  };
  try {
    const cas = await CertificateAuthorities.loadOrCreate(new FileCaKeyStore(join(dir, "ca")), {
      clusterName: "sso-test",
      trustDomain: "sso-test.local",
      clock,
    });
    const hostCaPem = cas.hostCa.certPem;
    const authKey = generateEcdsaP256();
    const authCertPem = await issueTlsServerCert(cas.hostCa, {
      publicKey: authKey.publicKey,
      commonName: "auth",
      ips: ["127.0.0.1"],
      clock,
    });
    const proxyServerKey = generateEcdsaP256();
    const proxyServerCertPem = await issueTlsServerCert(cas.hostCa, {
      publicKey: proxyServerKey.publicKey,
      commonName: PUBLIC_HOST,
      dnsNames: [PUBLIC_HOST],
      // svc is given 127.0.0.1:<port> (the test machine cannot resolve the public name)
      ips: ["127.0.0.1"],
      clock,
    });
    const proxyClientKey = generateEcdsaP256();
    const proxyClientCertPem = await issueTlsClientCert(cas.hostCa, {
      publicKey: proxyClientKey.publicKey,
      commonName: "proxy",
      uri: serviceIdentityUri("proxy", "sso-test"),
      clock,
    });

    const backend = await openSqliteBackend({ path: join(dir, "state.db"), clock, sweepIntervalMs: 0 });
    cleanups.push(() => backend.close());
    const source = new MemorySource([...presets(), ...(o.resources ?? [])]);
    for (const name of o.passwordUsers ?? []) await setPassword(backend, name, PASSWORD);

    const proxyPort = o.proxyPort ?? (await freePort());
    const publicOrigin = `https://${PUBLIC_HOST}:${proxyPort}`;
    const auth = await startAuthServer({
      backend,
      source,
      clock,
      logger,
      keys: {
        userCertSigner: cas.sshUserSigner,
        publicKeys: () => ({
          user_ca_ssh_public_keys: [cas.sshUserCaPublicKey],
          host_ca_ssh_public_keys: [cas.sshHostCaPublicKey],
          host_ca_pems: [hostCaPem],
          spiffe_bundle_json: JSON.stringify(cas.spiffeBundle()),
          spiffe_jwks_json: JSON.stringify(cas.spiffeJwks()),
          app_jwt_jwks_json: JSON.stringify(cas.appJwks()),
          trust_domain: cas.trustDomain,
        }),
      },
      cluster: {
        clusterName: "sso-test",
        serverVersion: "0.1.0",
        ...(o.localLogin === undefined ? {} : { localLogin: o.localLogin }),
        ...(o.defaultConnector === undefined ? {} : { defaultConnector: o.defaultConnector }),
      },
      tls: { certPem: authCertPem, keyPem: privateKeyToPem(authKey.privateKey), clientCaPems: [hostCaPem] },
      host: "127.0.0.1",
      port: 0,
      relyingParty: { rpId: PUBLIC_HOST, rpName: "sso-test", origin: publicOrigin },
      ...(o.providersCaPem ? { sso: { caPem: o.providersCaPem } } : {}),
    });
    cleanups.push(() => auth.close(1000));

    const authApi = new GrpcAuthApi({
      address: auth.address,
      caPems: [hostCaPem],
      certPem: proxyClientCertPem,
      keyPem: privateKeyToPem(proxyClientKey.privateKey),
    });
    cleanups.push(() => authApi.close());
    const config: ProxyConfig = {
      ...proxyDefaults,
      listenHost: "127.0.0.1",
      listenPort: proxyPort,
      publicUrl: publicOrigin,
      clusterName: "sso-test",
      serverVersion: "0.1.0",
      clientVersionPolicy: { minimum: "0.1.0", recommended: "0.1.0" },
      oidcIssuerUrl: publicOrigin,
      ...(o.rateLimit ? { rateLimit: o.rateLimit } : {}),
    };
    const proxy = await startProxyServer({
      config,
      tls: { certPem: proxyServerCertPem, keyPem: privateKeyToPem(proxyServerKey.privateKey) },
      authApi,
      logger,
      ready: () => true,
      resources: source,
      routes: [webRoutes()],
    });
    cleanups.push(() => proxy.close());
    return {
      publicOrigin,
      proxyAddress: `${PUBLIC_HOST}:${proxyPort}`,
      proxyUrl: proxy.url,
      hostCaPem,
      client: new HttpsClient(proxy.url, hostCaPem, PUBLIC_HOST),
      source,
      backend,
      auth,
      proxy,
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}

/** Chromium's virtual authenticator (CDP), answering every WebAuthn ceremony of this page. */
export async function addVirtualAuthenticator(page: Page): Promise<void> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send("WebAuthn.enable");
  await cdp.send("WebAuthn.addVirtualAuthenticator", {
    options: {
      protocol: "ctap2",
      transport: "usb",
      hasResidentKey: false,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
    },
  });
}

/**
 * In the page (signed in with the cookie, maybe an mfa_enrollment session): registers the virtual
 * authenticator's key through the WebAuthn device routes, as a console page would.
 */
export async function enrolSecurityKey(page: Page): Promise<{ scope: string; status: number }> {
  return page.evaluate(async () => {
    const csrf = /(?:^|;\s*)__Host-svc_csrf=([^;]+)/.exec(document.cookie)?.[1] ?? "";
    const post = (path: string, body: unknown) =>
      fetch(path, {
        method: "POST",
        headers: { "content-type": "application/json", "x-csrf-token": csrf },
        body: JSON.stringify(body),
      });
    const session = await (await fetch("/v1/webapi/session")).json();
    const begin = await (await post("/v1/webapi/mfa/webauthn/register/begin", {})).json();
    const b64 = (s: string) =>
      Uint8Array.from(atob(s.replace(/-/g, "+").replace(/_/g, "/")), (c) => c.charCodeAt(0));
    const opts = begin.webauthn;
    const cred = (await navigator.credentials.create({
      publicKey: {
        ...opts,
        challenge: b64(opts.challenge),
        user: { ...opts.user, id: b64(opts.user.id) },
        excludeCredentials: [],
      },
    })) as PublicKeyCredential;
    const finish = await post("/v1/webapi/mfa/webauthn/register/finish", {
      challenge_id: begin.challenge_id,
      device_name: "virtual key",
      credential: (cred as unknown as { toJSON(): unknown }).toJSON(),
    });
    return { scope: session.scope as string, status: finish.status };
  });
}
