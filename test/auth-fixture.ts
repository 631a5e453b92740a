// Shared setup of the auth tests and benchmark: real CA keys and certificates (core/certs), a real
// state backend, an in-memory resource source with real roles, a real auth server on port 0 over
// TLS 1.3, and real @grpc/grpc-js clients. Nothing of our own is mocked.
import { generateKeyPairSync, type KeyObject } from "node:crypto";
import type { Metadata, ServiceError } from "@grpc/grpc-js";
import pino from "pino";
import type { Backend } from "../core/backend/backend.ts";
import { SqliteBackend } from "../core/backend/sqlite.ts";
import { SshCertSigner } from "../core/certs/ssh-cert.ts";
import { formatSshPublicKey } from "../core/certs/ssh-keys.ts";
import {
  agentIdentityUri,
  botIdentityUri,
  createRootCa,
  generateEcdsaP256,
  issueTlsClientCert,
  issueTlsServerCert,
  privateKeyToPem,
  serviceIdentityUri,
  type X509Issuer,
} from "../core/certs/x509.ts";
import { type Clock, systemClock } from "../core/clock.ts";
import { API_VERSION, presets } from "../core/resources/index.ts";
import { MemorySource } from "../core/sources/memory.ts";
import type { AuthServiceClient } from "../proto/generated/svc/v1/AuthService.ts";
import { createAuthClient } from "../server/auth/client.ts";
import type { LockoutPolicy } from "../server/auth/login.ts";
import { setPassword } from "../server/auth/passwords.ts";
import { type RunningAuthServer, startAuthServer } from "../server/auth/server.ts";
import type { AuthKeyMaterial, AuthServiceDeps } from "../server/auth/service.ts";

export interface TestPki {
  hostCa: X509Issuer;
  serverCertPem: string;
  serverKeyPem: string;
  userCaKey: KeyObject;
  userCaPublicLine: string;
  keys: AuthKeyMaterial;
}

export async function makePki(clock: Clock = systemClock): Promise<TestPki> {
  const hostKey = generateEcdsaP256();
  const hostCa: X509Issuer = {
    certPem: await createRootCa({ privateKey: hostKey.privateKey, commonName: "svc host CA", clock }),
    privateKey: hostKey.privateKey,
  };
  const serverKey = generateEcdsaP256();
  const serverCertPem = await issueTlsServerCert(hostCa, {
    publicKey: serverKey.publicKey,
    commonName: "auth",
    dnsNames: ["localhost"],
    ips: ["127.0.0.1"],
    clock,
  });
  const userCa = generateKeyPairSync("ed25519");
  const hostSshCa = generateKeyPairSync("ed25519");
  const userCaPublicLine = formatSshPublicKey(userCa.publicKey);
  // Encoded once, as server/auth/keys.ts does (IssueUserCerts returns it with every certificate).
  const publicKeys = {
    user_ca_ssh_public_keys: [userCaPublicLine],
    host_ca_ssh_public_keys: [formatSshPublicKey(hostSshCa.publicKey)],
    host_ca_pems: [hostCa.certPem],
    spiffe_bundle_json: "{}",
    spiffe_jwks_json: '{"keys":[]}',
    app_jwt_jwks_json: '{"keys":[]}',
    trust_domain: "test.svc",
  };
  const keys: AuthKeyMaterial = {
    userCertSigner: new SshCertSigner(userCa.privateKey),
    publicKeys: () => publicKeys,
  };
  return {
    hostCa,
    serverCertPem,
    serverKeyPem: privateKeyToPem(serverKey.privateKey),
    userCaKey: userCa.privateKey,
    userCaPublicLine,
    keys,
  };
}

/** A host-CA client certificate naming an agent (svc://agent/<id>) or a service (svc://proxy/<name>). */
export async function clientCert(
  ca: X509Issuer,
  identity: { agent: string } | { bot: string } | { service: string; name: string },
  clock: Clock = systemClock,
): Promise<{ certPem: string; keyPem: string }> {
  const k = generateEcdsaP256();
  const uri =
    "agent" in identity
      ? agentIdentityUri(identity.agent)
      : "bot" in identity
        ? botIdentityUri(identity.bot)
        : serviceIdentityUri(identity.service, identity.name);
  const certPem = await issueTlsClientCert(ca, {
    publicKey: k.publicKey,
    commonName: "agent" in identity ? identity.agent : "bot" in identity ? identity.bot : identity.name,
    uri,
    clock,
  });
  return { certPem, keyPem: privateKeyToPem(k.privateKey) };
}

export const PASSWORD = "correct horse battery staple";

/**
 * Users: alice (preset admin), bob (preset access, logins bob+deploy), eve (prod-viewer: no logins),
 * carl (access + prod-viewer: 1 h max TTL, no port forwarding).
 */
export function testResources(): unknown[] {
  const user = (name: string, roles: string[], logins: string[]) => ({
    apiVersion: API_VERSION,
    kind: "User",
    metadata: { name },
    spec: { roles, traits: { logins } },
  });
  return [
    ...presets(),
    {
      apiVersion: API_VERSION,
      kind: "Role",
      metadata: { name: "prod-viewer" },
      spec: {
        allow: { node_labels: { env: "prod" }, rules: [{ resources: ["nodes"], verbs: ["list"] }] },
        options: { max_session_ttl: "1h", permit_port_forwarding: false },
      },
    },
    user("alice", ["admin"], ["alice"]),
    user("bob", ["access"], ["bob", "deploy"]),
    user("eve", ["prod-viewer"], []),
    user("carl", ["access", "prod-viewer"], ["carl"]),
  ];
}

export const silentLogger = pino({ level: "silent" });

export interface AuthTestEnv {
  pki: TestPki;
  backend: Backend;
  source: MemorySource;
  auth: RunningAuthServer;
  /** A client with no client certificate. */
  client: AuthServiceClient;
  clients: AuthServiceClient[];
  /** A client presenting a host-CA certificate for agent `agentId`. */
  agentClient(agentId: string): Promise<AuthServiceClient>;
  /** A client presenting a host-CA certificate for bot `name`. */
  botClient(name: string): Promise<AuthServiceClient>;
  close(): Promise<void>;
}

export async function startAuthEnv(
  opts: {
    backend?: Backend;
    source?: MemorySource;
    pki?: TestPki;
    lockout?: LockoutPolicy;
    clock?: Clock;
    heartbeatIntervalSeconds?: number;
    /** How long auth keeps a session it read (server/auth/session-memo.ts); its default otherwise. */
    sessionMemoMaxAgeMs?: number;
    /** Application access (public URL, App CA key); without it the app RPCs are UNIMPLEMENTED. */
    apps?: AuthServiceDeps["apps"];
  } = {},
): Promise<AuthTestEnv> {
  const clock = opts.clock ?? systemClock;
  const pki = opts.pki ?? (await makePki(clock));
  const backend = opts.backend ?? new SqliteBackend({ path: ":memory:", clock, sweepIntervalMs: 0 });
  const source = opts.source ?? new MemorySource(testResources());
  for (const name of ["alice", "bob", "eve", "carl"]) await setPassword(backend, name, PASSWORD);
  const auth = await startAuthServer({
    backend,
    source,
    clock,
    logger: silentLogger,
    keys: pki.keys,
    cluster: { clusterName: "test", serverVersion: "0.1.0" },
    tls: { certPem: pki.serverCertPem, keyPem: pki.serverKeyPem, clientCaPems: [pki.hostCa.certPem] },
    port: 0,
    ...(opts.lockout ? { lockout: opts.lockout } : {}),
    ...(opts.heartbeatIntervalSeconds ? { heartbeatIntervalSeconds: opts.heartbeatIntervalSeconds } : {}),
    ...(opts.sessionMemoMaxAgeMs !== undefined ? { sessionMemoMaxAgeMs: opts.sessionMemoMaxAgeMs } : {}),
    ...(opts.apps ? { apps: opts.apps } : {}),
  });
  const clients: AuthServiceClient[] = [];
  const client = createAuthClient({
    address: auth.address,
    caPems: [pki.hostCa.certPem],
    serverName: "localhost",
  });
  clients.push(client);
  return {
    pki,
    backend,
    source,
    auth,
    client,
    clients,
    async agentClient(agentId: string) {
      const c = await clientCert(pki.hostCa, { agent: agentId }, clock);
      const cl = createAuthClient({
        address: auth.address,
        caPems: [pki.hostCa.certPem],
        serverName: "localhost",
        ...c,
      });
      clients.push(cl);
      return cl;
    },
    async botClient(name: string) {
      const c = await clientCert(pki.hostCa, { bot: name }, clock);
      const cl = createAuthClient({
        address: auth.address,
        caPems: [pki.hostCa.certPem],
        serverName: "localhost",
        ...c,
      });
      clients.push(cl);
      return cl;
    },
    async close() {
      for (const c of clients) c.close();
      await auth.close(2000);
      if (!opts.backend) await backend.close();
    },
  };
}

/** The status of a failed call (or OK), for assertions. */
export function statusOf(p: Promise<unknown>): Promise<{ code: number; details: string }> {
  return p.then(
    () => ({ code: 0, details: "" }),
    (err: { cause?: unknown }) => {
      const e = (err.cause ?? err) as ServiceError;
      return { code: e.code, details: e.details };
    },
  );
}

export type { Metadata };
