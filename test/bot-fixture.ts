// Shared setup of the machine-identity tests (bots, SPIFFE, IAM join over gRPC): real CAs
// (CertificateAuthorities in a temp folder), a real SQLite state backend in a file, a memory
// resource source that is also the ResourceWriter, and a real auth server over TLS 1.3 with the
// machine-identity handlers, restartable on the same port. Nothing of our own is mocked.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { SqliteBackend } from "../core/backend/sqlite.ts";
import { CertificateAuthorities } from "../core/ca/authorities.ts";
import { FileCaKeyStore } from "../core/ca/key-store.ts";
import { generateEcdsaP256, issueTlsServerCert, privateKeyToPem } from "../core/certs/x509.ts";
import { systemClock } from "../core/clock.ts";
import type { StsTransport } from "../core/iam/index.ts";
import { API_VERSION, presets } from "../core/resources/index.ts";
import { MemorySource } from "../core/sources/memory.ts";
import type { AuthServiceClient } from "../proto/generated/svc/v1/AuthService.ts";
import { callUnary, createAuthClient, userMetadata } from "../server/auth/client.ts";
import { AgentJoin } from "../server/auth/join-agent.ts";
import { keyMaterialFrom } from "../server/auth/keys.ts";
import { machineIdentityHandlers } from "../server/auth/machine-identity-deps.ts";
import { setPassword } from "../server/auth/passwords.ts";
import { type RunningAuthServer, startAuthServer } from "../server/auth/server.ts";

export const CLUSTER = "machine.test";
export const PASSWORD = "correct horse battery staple";
export const silentLogger = pino({ level: "silent" });

const role = (name: string, spec: object) => ({
  apiVersion: API_VERSION,
  kind: "Role",
  metadata: { name },
  spec,
});

/**
 * Roles: "bot-ssh" (login root, may mint SVIDs under /role/ci/*), "ci" (workload role: login root,
 * allows /role/ci/*), "no-logins" (allows /role/no-logins/* but grants no login), "deny-ci-deploy"
 * (not referenced by paths). Users: alice (preset admin), bob (preset access).
 */
export function machineResources(): unknown[] {
  return [
    ...presets(),
    role("bot-ssh", {
      allow: { logins: ["root"], node_labels: { "*": "*" }, workload_spiffe_ids: ["/role/ci/*"] },
      options: { max_session_ttl: "2h" },
    }),
    role("ci", {
      allow: { logins: ["root"], workload_spiffe_ids: ["/role/ci/*"] },
      options: { max_session_ttl: "1h" },
    }),
    role("no-logins", { allow: { workload_spiffe_ids: ["/role/no-logins/*"] } }),
    {
      apiVersion: API_VERSION,
      kind: "User",
      metadata: { name: "alice" },
      spec: { roles: ["admin"], traits: { logins: ["alice"] } },
    },
    {
      apiVersion: API_VERSION,
      kind: "User",
      metadata: { name: "bob" },
      spec: { roles: ["access"], traits: { logins: ["bob"] } },
    },
  ];
}

export interface MachineEnv {
  dir: string;
  cas: CertificateAuthorities;
  backend: SqliteBackend;
  source: MemorySource;
  auth: RunningAuthServer;
  address: string;
  hostCaPems: string[];
  /** a client without a client certificate */
  client: AuthServiceClient;
  /** a client with a client certificate + key (PEM) */
  clientWith(tls: { certPem: string; keyPem: string }): AuthServiceClient;
  adminSession(): Promise<string>;
  /** stops auth (the state stays) */
  stopAuth(): Promise<void>;
  /** starts auth again on the same port */
  startAuth(): Promise<void>;
  close(): Promise<void>;
}

export async function startMachineEnv(
  opts: {
    stsEndpoints?: string[];
    stsTransport?: StsTransport;
    resources?: unknown[];
    jwtIssuer?: string;
  } = {},
): Promise<MachineEnv> {
  const clock = systemClock;
  const dir = await mkdtemp(join(tmpdir(), "svc-machine-"));
  const cas = await CertificateAuthorities.loadOrCreate(new FileCaKeyStore(join(dir, "ca")), {
    clusterName: CLUSTER,
    trustDomain: CLUSTER,
    clock,
  });
  const serverKey = generateEcdsaP256();
  const serverCertPem = await issueTlsServerCert(cas.hostCa, {
    publicKey: serverKey.publicKey,
    commonName: "auth",
    dnsNames: ["localhost"],
    ips: ["127.0.0.1"],
    clock,
  });
  const backend = new SqliteBackend({ path: join(dir, "state.db"), clock, sweepIntervalMs: 0 });
  const source = new MemorySource(opts.resources ?? machineResources());
  for (const u of ["alice", "bob"]) await setPassword(backend, u, PASSWORD);
  const keys = keyMaterialFrom(cas);
  const agentJoin = new AgentJoin({
    backend,
    source,
    clock,
    logger: silentLogger,
    hostSshSigner: cas.sshHostSigner,
    hostCa: cas.hostCa,
    publicKeys: keys.publicKeys,
  });
  const clients: AuthServiceClient[] = [];
  let port = 0;
  const start = async (): Promise<RunningAuthServer> => {
    const running = await startAuthServer({
      backend,
      source,
      clock,
      logger: silentLogger,
      keys,
      cluster: { clusterName: CLUSTER, serverVersion: "0.1.0" },
      tls: {
        certPem: serverCertPem,
        keyPem: privateKeyToPem(serverKey.privateKey),
        clientCaPems: [cas.hostCa.certPem],
      },
      port,
      agentJoin,
      // CreateUser writes here too (the admin RPCs' ResourceWriter).
      writer: source,
      ...machineIdentityHandlers({
        backend,
        source,
        writer: source,
        clock,
        logger: silentLogger,
        cas,
        agentJoin,
        ...(opts.stsEndpoints ? { stsEndpoints: opts.stsEndpoints } : {}),
        ...(opts.stsTransport ? { stsTransport: opts.stsTransport } : {}),
        ...(opts.jwtIssuer ? { jwtIssuer: opts.jwtIssuer } : {}),
      }),
    });
    port = running.port;
    return running;
  };
  let auth: RunningAuthServer | undefined = await start();
  const address = `127.0.0.1:${port}`;
  const hostCaPems = [cas.hostCa.certPem];
  const mk = (tls?: { certPem: string; keyPem: string }) => {
    const c = createAuthClient({ address, caPems: hostCaPems, serverName: "localhost", ...(tls ?? {}) });
    clients.push(c);
    return c;
  };
  const client = mk();
  const env: MachineEnv = {
    dir,
    cas,
    backend,
    source,
    get auth() {
      if (!auth) throw new Error("auth is stopped");
      return auth;
    },
    address,
    hostCaPems,
    client,
    clientWith: mk,
    async adminSession() {
      const r = await callUnary(client, "AuthenticateLocal", { username: "alice", password: PASSWORD });
      const id = r.session?.session_id;
      if (!id) throw new Error("no session");
      return id;
    },
    async stopAuth() {
      await auth?.close(1000);
      auth = undefined;
    },
    async startAuth() {
      auth = await start();
      // The fixture's long-lived clients may be in their reconnect backoff from the stop: wait
      // until they are connected again, as a new process's client would be.
      await Promise.all(
        clients.map(
          (c) =>
            new Promise<void>((resolve, reject) =>
              c.waitForReady(Date.now() + 10_000, (err) => (err ? reject(err) : resolve())),
            ),
        ),
      );
    },
    async close() {
      for (const c of clients) c.close();
      await auth?.close(1000);
      await backend.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
  return env;
}

/** Creates a bot through the admin RPC; returns the one-time token. */
export async function addBot(
  env: MachineEnv,
  o: { name: string; roles: string[]; ttl?: string; allowWorkloadSvids?: boolean },
): Promise<string> {
  const res = await callUnary(
    env.client,
    "CreateAgentIdentity",
    {
      name: o.name,
      roles: o.roles,
      cert_ttl: o.ttl ?? "",
      allow_workload_svids: o.allowWorkloadSvids ?? false,
    },
    userMetadata(await env.adminSession()),
  );
  if (!res.token) throw new Error("no token");
  return res.token;
}
