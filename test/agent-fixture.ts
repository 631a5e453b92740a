// Shared setup of the agent tests: a real auth server (TLS 1.3, real CertificateAuthorities in a
// file key store, SQLite backend, in-memory resources with real roles and JoinTokens) with the
// node join wired in, and helpers to mint join tokens, log users in and run the agent daemon as a
// real child process (test/agent-process.ts).
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import type { Backend } from "../core/backend/backend.ts";
import { SqliteBackend } from "../core/backend/sqlite.ts";
import { CertificateAuthorities } from "../core/ca/authorities.ts";
import { FileCaKeyStore } from "../core/ca/key-store.ts";
import { generateEcdsaP256, issueTlsServerCert, privateKeyToPem } from "../core/certs/x509.ts";
import { type Clock, systemClock } from "../core/clock.ts";
import { API_VERSION } from "../core/resources/index.ts";
import { MemorySource } from "../core/sources/memory.ts";
import type { AuthServiceClient } from "../proto/generated/svc/v1/AuthService.ts";
import type { PublicKeys } from "../proto/generated/svc/v1/PublicKeys.ts";
import { caPin } from "../server/agent/ca-pin.ts";
import { callUnary, createAuthClient } from "../server/auth/client.ts";
import { AgentJoin, joinSecretHash } from "../server/auth/join-agent.ts";
import { NodeRenewal } from "../server/auth/node-renewal.ts";
import { setPassword } from "../server/auth/passwords.ts";
import { type RunningAuthServer, startAuthServer } from "../server/auth/server.ts";
import { PASSWORD, testResources } from "./auth-fixture.ts";

export const silent = pino({ level: "silent" });

export interface AgentAuthEnv {
  dir: string;
  cas: CertificateAuthorities;
  backend: Backend;
  source: MemorySource;
  auth: RunningAuthServer;
  join: AgentJoin;
  /** "127.0.0.1:<port>" */
  address: string;
  /** TLS name in auth's certificate */
  serverName: string;
  /** "sha256:<hex>" of the host CA, what `svcctl tokens add` prints */
  pin: string;
  /** a client without a client certificate */
  client: AuthServiceClient;
  /** Adds a JoinToken resource; returns the "<name>.<secret>" a node presents. */
  addToken(
    name: string,
    o?: { roles?: ("node" | "bot")[]; expires?: Date; labels?: Record<string, string> },
  ): Promise<string>;
  /** AuthenticateLocal -> session id. */
  login(user: string): Promise<string>;
  close(): Promise<void>;
}

/**
 * A backend whose `put` of one chosen key can be held: `hold(key)` resolves `reached` when a put
 * of that key starts and lets it write only after `release()`. Tests use it to place another call
 * (DeleteNode) between a check and the write that follows it, the way two replicas could.
 */
export function holdablePuts(backend: Backend): {
  backend: Backend;
  hold(key: string): { reached: Promise<void>; release(): void };
} {
  const held = new Map<string, { reached: () => void; released: Promise<void> }>();
  const wrapped = new Proxy(backend, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target);
      if (prop === "put") {
        return async (key: string, ...rest: unknown[]) => {
          const h = held.get(key);
          if (h) {
            held.delete(key);
            h.reached();
            await h.released;
          }
          return (target.put as (...a: unknown[]) => unknown).call(target, key, ...rest);
        };
      }
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return {
    backend: wrapped,
    hold(key) {
      let reached = (): void => {};
      let release = (): void => {};
      const r = new Promise<void>((resolve) => {
        reached = resolve;
      });
      const released = new Promise<void>((resolve) => {
        release = resolve;
      });
      held.set(key, { reached, released });
      return { reached: r, release };
    },
  };
}

export async function startAgentAuthEnv(
  o: {
    heartbeatIntervalSeconds?: number;
    clock?: Clock;
    wrapBackend?: (b: Backend) => Backend;
    /** auth.node_cert_ttl (agents' certificates; RenewNodeCredentials); default 24 h */
    nodeCertTtlSeconds?: number;
  } = {},
): Promise<AgentAuthEnv> {
  const clock = o.clock ?? systemClock;
  const dir = await mkdtemp(join(tmpdir(), "svc-agent-auth-"));
  const cas = await CertificateAuthorities.loadOrCreate(new FileCaKeyStore(join(dir, "ca")), {
    clusterName: "test",
    trustDomain: "test.svc",
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
  const sqlite = new SqliteBackend({ path: ":memory:", clock, sweepIntervalMs: 0 });
  // What auth uses (a test may wrap it); `env.backend` is the same object.
  const backend = o.wrapBackend ? o.wrapBackend(sqlite) : sqlite;
  const source = new MemorySource(testResources());
  for (const name of ["alice", "bob"]) await setPassword(backend, name, PASSWORD);
  const publicKeys = (): PublicKeys => ({
    user_ca_ssh_public_keys: [cas.sshUserCaPublicKey],
    host_ca_ssh_public_keys: [cas.sshHostCaPublicKey],
    host_ca_pems: [cas.hostCa.certPem],
    spiffe_bundle_json: JSON.stringify(cas.spiffeBundle()),
    spiffe_jwks_json: JSON.stringify(cas.spiffeJwks()),
    app_jwt_jwks_json: JSON.stringify(cas.appJwks()),
    trust_domain: cas.trustDomain,
  });
  const agentJoin = new AgentJoin({
    backend,
    source,
    clock,
    logger: silent,
    hostSshSigner: cas.sshHostSigner,
    hostCa: cas.hostCa,
    publicKeys,
    ...(o.nodeCertTtlSeconds ? { agentCertTtlSeconds: o.nodeCertTtlSeconds } : {}),
  });
  const nodeRenewal = new NodeRenewal({
    backend,
    clock,
    logger: silent,
    hostSshSigner: cas.sshHostSigner,
    hostCa: cas.hostCa,
    publicKeys,
    ...(o.nodeCertTtlSeconds ? { ttlSeconds: o.nodeCertTtlSeconds } : {}),
  });
  const auth = await startAuthServer({
    backend,
    source,
    clock,
    logger: silent,
    keys: { userCertSigner: cas.sshUserSigner, publicKeys },
    cluster: { clusterName: "test", serverVersion: "0.1.0" },
    tls: {
      certPem: serverCertPem,
      keyPem: privateKeyToPem(serverKey.privateKey),
      clientCaPems: [cas.hostCa.certPem],
    },
    port: 0,
    agentJoin,
    nodeRenewal,
    ...(o.heartbeatIntervalSeconds ? { heartbeatIntervalSeconds: o.heartbeatIntervalSeconds } : {}),
  });
  const address = `127.0.0.1:${auth.port}`;
  const client = createAuthClient({ address, caPems: [cas.hostCa.certPem], serverName: "localhost" });
  return {
    dir,
    cas,
    backend,
    source,
    auth,
    join: agentJoin,
    address,
    serverName: "localhost",
    pin: caPin(cas.hostCa.certPem),
    client,
    async addToken(name, t = {}) {
      const secret = randomBytes(24).toString("base64url");
      await source.apply({
        apiVersion: API_VERSION,
        kind: "JoinToken",
        metadata: { name },
        spec: {
          roles: t.roles ?? ["node"],
          join_method: "token",
          secret_hash: joinSecretHash(secret),
          expires: (t.expires ?? new Date(Date.now() + 3600_000)).toISOString(),
          ...(t.roles?.includes("bot") ? { bot_name: "robot" } : {}),
          ...(t.labels ? { node_labels: t.labels } : {}),
        },
      } as never);
      return `${name}.${secret}`;
    },
    async login(user) {
      const r = await callUnary(client, "AuthenticateLocal", { username: user, password: PASSWORD });
      const id = r.session?.session_id;
      if (!id) throw new Error(`login of ${user} gave no session`);
      return id;
    },
    async close() {
      client.close();
      await auth.close(2000);
      await backend.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** A running agent daemon in its own process. */
export interface AgentProcess {
  child: ChildProcess;
  /** what the agent printed once serving (agentId, hostname, ssh port, addresses, joined) */
  ready: Promise<{ agentId: string; hostname: string; ssh: { host: string; port: number }; joined: boolean }>;
  /** exit code (resolves when the process ends) */
  exited: Promise<number | null>;
  stderr(): string;
  stop(): Promise<void>;
}

export function startAgentProcess(options: Record<string, unknown>): AgentProcess {
  const child = spawn(
    process.execPath,
    [join(import.meta.dirname, "agent-process.ts"), JSON.stringify(options)],
    {
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let out = "";
  let err = "";
  child.stderr?.setEncoding("utf8");
  child.stderr?.on("data", (d: string) => {
    err = (err + d).slice(-65536);
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const ready = new Promise<Awaited<AgentProcess["ready"]>>((resolve, reject) => {
    child.stdout?.setEncoding("utf8");
    child.stdout?.on("data", (d: string) => {
      out += d;
      const m = /^READY (.*)$/m.exec(out);
      if (m?.[1]) resolve(JSON.parse(m[1]));
    });
    void exited.then((code) => reject(new Error(`agent exited (${code}): ${err.slice(-2000)}`)));
  });
  ready.catch(() => undefined);
  return {
    child,
    ready,
    exited,
    stderr: () => err,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const timer = setTimeout(() => child.kill("SIGKILL"), 15_000);
      child.kill("SIGTERM");
      await exited;
      clearTimeout(timer);
    },
  };
}
