// A real auth gRPC server (SQLite backend, CAs in a temp folder, users and roles in a memory
// source) and a real proxy calling it over TLS with its own host-CA client certificate. The tests
// talk to the proxy over HTTPS only.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect } from "node:tls";
import { pino } from "pino";
import type { Registry } from "prom-client";
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
import type { LockoutPolicy } from "../server/auth/login.ts";
import { setPassword } from "../server/auth/passwords.ts";
import { type RunningAuthServer, startAuthServer } from "../server/auth/server.ts";
import { GrpcCliAuthApi } from "../server/proxy/cli-auth-api.ts";
import type { ProxyConfig } from "../server/proxy/config.ts";
import { proxyDefaults } from "../server/proxy/config.ts";
import { GrpcAuthApi } from "../server/proxy/grpc-auth-api.ts";
import { userCertRoutes } from "../server/proxy/routes/user-certs.ts";
import { type ProxyServer, startProxyServer } from "../server/proxy/server.ts";
import { HttpsClient } from "./proxy-https-client.ts";

export const PUBLIC_HOST = "proxy.svc.test";
export const PUBLIC_ORIGIN = `https://${PUBLIC_HOST}`;
export const PASSWORD = "correct horse battery staple";

/** alice: ordinary user; root: admin; carol: ordinary user who enrols WebAuthn in the tests. */
export const USERS = { user: "alice", admin: "root-admin", mfa: "carol" } as const;

export interface ProxyFixture {
  proxy: ProxyServer;
  auth: RunningAuthServer;
  authApi: GrpcAuthApi;
  client: HttpsClient;
  cas: CertificateAuthorities;
  backend: SqliteBackend;
  source: MemorySource;
  hostCaPem: string;
  config: ProxyConfig;
  /** the proxy's HTTPS certificate and key (the benchmark's baseline server reuses them) */
  proxyTls: { certPem: string; keyPem: string };
  /** flips what the proxy's ready() dependency answers */
  setResourcesReady(ready: boolean): void;
  close(): Promise<void>;
}

function userResource(name: string, roles: string[]) {
  return {
    apiVersion: API_VERSION,
    kind: "User",
    metadata: { name },
    spec: { roles, traits: { logins: [name] } },
  };
}

/** Everything on auth's side of the wire, plus the certificates the proxy is given. */
export interface AuthSide {
  auth: RunningAuthServer;
  cas: CertificateAuthorities;
  backend: SqliteBackend;
  source: MemorySource;
  hostCaPem: string;
  /** the proxy's client certificate for gRPC (host CA) */
  proxyClient: { certPem: string; keyPem: string };
  /** the proxy's HTTPS certificate for the public name (host CA) */
  proxyServer: { certPem: string; keyPem: string };
  close(): Promise<void>;
}

/** Auth settings a test may change: the web session lifetime (auth.session_ttl), login throttling. */
export interface AuthSideOptions {
  sessionTtlMs?: number;
  lockout?: LockoutPolicy;
  /** application access on (docs/apps.md): apps live under PUBLIC_HOST, assertions by the App CA */
  apps?: boolean;
}

export async function startAuthSide(o: AuthSideOptions = {}): Promise<AuthSide> {
  const dir = await mkdtemp(join(tmpdir(), "svc-proxy-test-"));
  const clock = systemClock;
  const logger = pino({ level: process.env.SVC_TEST_LOG_LEVEL ?? "silent" });
  const cleanups: Array<() => Promise<void> | void> = [() => rm(dir, { recursive: true, force: true })];
  const close = async () => {
    for (const c of cleanups.reverse()) await c();
  };
  try {
    const cas = await CertificateAuthorities.loadOrCreate(new FileCaKeyStore(join(dir, "ca")), {
      clusterName: "proxy-test",
      trustDomain: "proxy-test.local",
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
      clock,
    });
    const proxyClientKey = generateEcdsaP256();
    const proxyClientCertPem = await issueTlsClientCert(cas.hostCa, {
      publicKey: proxyClientKey.publicKey,
      commonName: "proxy",
      uri: serviceIdentityUri("proxy", "proxy-test"),
      clock,
    });

    const backend = await openSqliteBackend({ path: join(dir, "state.db"), clock, sweepIntervalMs: 0 });
    cleanups.push(() => backend.close());
    const source = new MemorySource([
      ...presets(),
      userResource(USERS.user, ["access"]),
      userResource(USERS.admin, ["admin"]),
      userResource(USERS.mfa, ["access"]),
      {
        apiVersion: API_VERSION,
        kind: "Connector",
        metadata: { name: "github" },
        spec: {
          type: "github",
          display_name: "GitHub",
          settings: { client_id: "abc123", redirect_url: `${PUBLIC_ORIGIN}/v1/webapi/github/callback` },
          client_secret_ref: { secret_name: "github-secret", key: "client_secret" },
        },
      },
    ]);
    for (const name of Object.values(USERS)) await setPassword(backend, name, PASSWORD);

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
      cluster: { clusterName: "proxy-test", serverVersion: "0.1.0" },
      tls: { certPem: authCertPem, keyPem: privateKeyToPem(authKey.privateKey), clientCaPems: [hostCaPem] },
      host: "127.0.0.1",
      port: 0,
      // As production: auth decides the WebAuthn relying party (the proxy's public address).
      relyingParty: { rpId: PUBLIC_HOST, rpName: "proxy-test", origin: PUBLIC_ORIGIN },
      ...(o.sessionTtlMs ? { sessionTtlMs: o.sessionTtlMs } : {}),
      ...(o.lockout ? { lockout: o.lockout } : {}),
      ...(o.apps ? { apps: { publicUrl: PUBLIC_ORIGIN, signingKey: () => cas.appJwtKeys[0] } } : {}),
    });
    cleanups.push(() => auth.close(1000));
    return {
      auth,
      cas,
      backend,
      source,
      hostCaPem,
      proxyClient: { certPem: proxyClientCertPem, keyPem: privateKeyToPem(proxyClientKey.privateKey) },
      proxyServer: { certPem: proxyServerCertPem, keyPem: privateKeyToPem(proxyServerKey.privateKey) },
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}

/** The proxy as production builds it: GrpcAuthApi to `authAddress` and startProxyServer. */
export async function startProxySide(o: {
  authAddress: string;
  hostCaPem: string;
  proxyClient: { certPem: string; keyPem: string };
  proxyServer: { certPem: string; keyPem: string };
  resources: MemorySource;
  overrides?: Partial<
    Pick<ProxyConfig, "rateLimit" | "bodyLimit" | "trustedProxies" | "limits" | "clientHelloTimeoutMs">
  >;
  /** gRPC passthrough to auth on the public port (test/proxy-routing.test.ts) */
  authPassthrough?: { address: string; serverName: string };
  metrics?: Registry;
}): Promise<{
  proxy: ProxyServer;
  authApi: GrpcAuthApi;
  config: ProxyConfig;
  client: HttpsClient;
  setResourcesReady(ready: boolean): void;
  close(): Promise<void>;
}> {
  const grpc = {
    address: o.authAddress,
    caPems: [o.hostCaPem],
    certPem: o.proxyClient.certPem,
    keyPem: o.proxyClient.keyPem,
  };
  const authApi = new GrpcAuthApi(grpc);
  // POST /v1/webapi/ssh/certs, as svcd registers it.
  const cliAuthApi = new GrpcCliAuthApi(grpc);
  const config: ProxyConfig = {
    ...proxyDefaults,
    listenHost: "127.0.0.1",
    listenPort: 0,
    publicUrl: PUBLIC_ORIGIN,
    clusterName: "proxy-test",
    serverVersion: "0.1.0",
    clientVersionPolicy: { minimum: "0.1.0", recommended: "0.1.0" },
    oidcIssuerUrl: PUBLIC_ORIGIN,
    ...o.overrides,
  };
  let resourcesReady = true;
  let proxy: ProxyServer;
  try {
    proxy = await startProxyServer({
      config,
      tls: o.proxyServer,
      authApi,
      logger: pino({ level: process.env.SVC_TEST_LOG_LEVEL ?? "silent" }),
      ready: () => resourcesReady,
      resources: o.resources,
      routes: [userCertRoutes({ api: cliAuthApi })],
      ...(o.authPassthrough ? { authPassthrough: o.authPassthrough } : {}),
      ...(o.metrics ? { metrics: o.metrics } : {}),
    });
  } catch (err) {
    authApi.close();
    cliAuthApi.close();
    throw err;
  }
  return {
    proxy,
    authApi,
    config,
    client: new HttpsClient(proxy.url, o.hostCaPem, PUBLIC_HOST),
    setResourcesReady: (r) => {
      resourcesReady = r;
    },
    close: async () => {
      await proxy.close();
      authApi.close();
      cliAuthApi.close();
    },
  };
}

export async function startProxyFixture(
  overrides: Partial<Pick<ProxyConfig, "rateLimit" | "bodyLimit" | "trustedProxies" | "limits">> = {},
  authOptions: AuthSideOptions = {},
): Promise<ProxyFixture> {
  const side = await startAuthSide(authOptions);
  try {
    const p = await startProxySide({
      authAddress: side.auth.address,
      hostCaPem: side.hostCaPem,
      proxyClient: side.proxyClient,
      proxyServer: side.proxyServer,
      resources: side.source,
      overrides,
    });
    return {
      proxy: p.proxy,
      auth: side.auth,
      authApi: p.authApi,
      client: p.client,
      cas: side.cas,
      backend: side.backend,
      source: side.source,
      hostCaPem: side.hostCaPem,
      config: p.config,
      proxyTls: side.proxyServer,
      setResourcesReady: p.setResourcesReady,
      close: async () => {
        await p.close();
        await side.close();
      },
    };
  } catch (err) {
    await side.close();
    throw err;
  }
}

/**
 * Two requests on one connection while the proxy closes: the first is still arriving when
 * `close()` starts, the second follows it. Returns the raw bytes the proxy answered, both answers.
 */
export async function requestsWhileClosing(own: ProxyFixture): Promise<string> {
  const url = new URL(own.proxy.url);
  const socket = connect({
    host: url.hostname,
    port: Number(url.port),
    ca: own.hostCaPem,
    servername: PUBLIC_HOST,
  });
  await new Promise((r) => socket.once("secureConnect", r));
  const chunks: Buffer[] = [];
  socket.on("data", (c: Buffer) => chunks.push(c));
  const ended = new Promise((r) => socket.once("close", r));
  const body = '{"public_key":"x"}';
  socket.write(
    `POST /v1/webapi/ssh/certs HTTP/1.1\r\nhost: ${PUBLIC_HOST}\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body.slice(0, 4)}`,
  );
  await new Promise((r) => setTimeout(r, 100));
  const closing = own.proxy.app.close();
  await new Promise((r) => setTimeout(r, 100));
  socket.write(`${body.slice(4)}GET /v1/webapi/ping HTTP/1.1\r\nhost: ${PUBLIC_HOST}\r\n\r\n`);
  await ended;
  await closing;
  return Buffer.concat(chunks).toString("utf8");
}
