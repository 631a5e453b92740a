// `svcd auth` as a real child process that tests kill with SIGKILL and start again on the same
// data: a temp folder with a config, a manifests folder (users, a role, one-time JoinTokens) and
// a files CA store, on SQLite or on a PostgreSQL schema. Used by test/crash-*.test.ts.
import { type ChildProcess, spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { closeSync, openSync, readFileSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stringify } from "yaml";
import type { Backend } from "../core/backend/backend.ts";
import { openBackend } from "../core/backend/index.ts";
import { CertificateAuthorities } from "../core/ca/authorities.ts";
import { FileCaKeyStore } from "../core/ca/key-store.ts";
import { generateSshKeyPair } from "../core/certs/ssh-keys.ts";
import { generateEcdsaP256, privateKeyToPem } from "../core/certs/x509.ts";
import { systemClock } from "../core/clock.ts";
import { API_VERSION } from "../core/resources/index.ts";
import { type AuthServiceClient, callUnary, createAuthClient } from "../server/auth/client.ts";
import { setPassword } from "../server/auth/passwords.ts";
import { freePort } from "./harness/ports.ts";
import { dropSchema } from "./harness/postgres.ts";

const root = join(import.meta.dirname, "..");
export const CRASH_CLUSTER = "crash";
export const CRASH_PASSWORD = "killed mid-write, nothing lost";

export type CrashBackend = { type: "sqlite" } | { type: "postgres"; url: string; schema: string };

export interface CrashAuth {
  child: ChildProcess;
  exited: Promise<unknown>;
  /** SIGKILL, then wait for the exit. */
  kill(): Promise<void>;
}

export interface CrashEnv {
  dir: string;
  address: string;
  hostCaPem: string;
  users: string[];
  /** "<name>.<secret>" of every node JoinToken in the manifests, in order. */
  tokens: string[];
  /** one bootstrap token per bot, crashbot<i> */
  botTokens: string[];
  start(): Promise<CrashAuth>;
  /** A client without a client certificate (logins, joins). */
  client(): AuthServiceClient;
  /** A client presenting a joined node's certificate. */
  clientWith(tls: { certPem: string; keyPem: string }): AuthServiceClient;
  /** The state backend, opened beside the running auth (for invariants only). */
  backend(): Promise<Backend>;
  close(): Promise<void>;
}

export async function crashEnv(o: {
  backend: CrashBackend;
  users: number;
  tokens: number;
  /** bots (AgentIdentity, role dev) with one bootstrap token each, in `botTokens` */
  bots?: number;
}): Promise<CrashEnv> {
  const dir = await mkdtemp(join(tmpdir(), "svc-crash-"));
  const port = await freePort();
  const diagPort = await freePort();
  const users = Array.from({ length: o.users }, (_, i) => `crash${i}`);
  const tokens: string[] = [];
  const docs: object[] = [{ kind: "Role", metadata: { name: "dev" }, spec: { allow: { logins: ["dev"] } } }];
  for (const u of users) docs.push({ kind: "User", metadata: { name: u }, spec: { roles: ["dev"] } });
  for (let i = 0; i < o.tokens; i++) {
    const name = `crash-token-${i}`;
    const secret = randomBytes(18).toString("base64url");
    tokens.push(`${name}.${secret}`);
    docs.push({
      kind: "JoinToken",
      metadata: { name },
      spec: {
        roles: ["node"],
        join_method: "token",
        secret_hash: createHash("sha256").update(secret).digest("hex"),
        expires: new Date(Date.now() + 24 * 3600_000).toISOString(),
      },
    });
  }
  const botTokens: string[] = [];
  for (let i = 0; i < (o.bots ?? 0); i++) {
    const name = `crashbot${i}`;
    const secret = randomBytes(18).toString("base64url");
    botTokens.push(`${name}-boot.${secret}`);
    docs.push({ kind: "AgentIdentity", metadata: { name }, spec: { roles: ["dev"] } });
    docs.push({
      kind: "JoinToken",
      metadata: { name: `${name}-boot` },
      spec: {
        roles: ["bot"],
        join_method: "token",
        bot_name: name,
        secret_hash: createHash("sha256").update(secret).digest("hex"),
        expires: new Date(Date.now() + 24 * 3600_000).toISOString(),
      },
    });
  }
  await mkdir(join(dir, "manifests"));
  await writeFile(
    join(dir, "manifests", "crash.yaml"),
    docs.map((d) => stringify({ apiVersion: API_VERSION, ...d })).join("---\n"),
  );
  const backendCfg =
    o.backend.type === "sqlite"
      ? { type: "sqlite" as const, path: join(dir, "state.db") }
      : { type: "postgres" as const, url_env: "SVC_CRASH_PG_URL", schema: o.backend.schema };
  const config = join(dir, "auth.yaml");
  await writeFile(
    config,
    stringify({
      version: 1,
      cluster_name: CRASH_CLUSTER,
      log_level: "warn",
      auth: { listen_addr: `127.0.0.1:${port}`, diagnostics_addr: `127.0.0.1:${diagPort}` },
      proxy: {
        listen_addr: "127.0.0.1:3080",
        public_addr: "localhost:3080",
        oidc_issuer_url: "https://localhost:3080",
      },
      client_tools: { min_version: "0.1.0", recommended_version: "0.1.0" },
      backend: backendCfg,
      source: { type: "folder", path: join(dir, "manifests") },
      ca_store: { type: "files", path: join(dir, "ca") },
    }),
  );
  const openState = (): Promise<Backend> =>
    openBackend(
      o.backend.type === "sqlite"
        ? { type: "sqlite", path: backendCfg.type === "sqlite" ? backendCfg.path : "" }
        : { type: "postgres", connectionString: o.backend.url, schema: o.backend.schema },
      { clock: systemClock },
    );
  const state = await openState();
  try {
    for (const u of users) await setPassword(state, u, CRASH_PASSWORD);
  } finally {
    await state.close();
  }
  const cas = await CertificateAuthorities.loadOrCreate(new FileCaKeyStore(join(dir, "ca")), {
    clusterName: CRASH_CLUSTER,
    trustDomain: CRASH_CLUSTER,
    clock: systemClock,
  });
  const hostCaPem = cas.hostCa.certPem;
  const address = `127.0.0.1:${port}`;
  const clients: AuthServiceClient[] = [];
  const procs: CrashAuth[] = [];
  const logPath = join(dir, "auth.log");

  const start = async (): Promise<CrashAuth> => {
    const fd = openSync(logPath, "a");
    const child = spawn(join(root, "bin", "svcd"), ["auth", "--config", config], {
      stdio: ["ignore", fd, fd],
      env: { ...process.env, ...(o.backend.type === "postgres" ? { SVC_CRASH_PG_URL: o.backend.url } : {}) },
    });
    closeSync(fd);
    const exited = new Promise<unknown>((resolve) => child.once("exit", resolve));
    const p: CrashAuth = {
      child,
      exited,
      async kill() {
        if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
        await exited;
      },
    };
    procs.push(p);
    const end = Date.now() + 60_000;
    for (;;) {
      if (child.exitCode !== null)
        throw new Error(`auth exited:\n${readFileSync(logPath, "utf8").slice(-3000)}`);
      const ok = await fetch(`http://127.0.0.1:${diagPort}/readyz`, { signal: AbortSignal.timeout(2_000) })
        .then((r) => r.status === 200)
        .catch(() => false);
      if (ok) return p;
      if (Date.now() > end) throw new Error("auth did not become ready");
      await new Promise((r) => setTimeout(r, 100));
    }
  };

  const track = (c: AuthServiceClient): AuthServiceClient => {
    clients.push(c);
    return c;
  };
  return {
    dir,
    address,
    hostCaPem,
    users,
    tokens,
    botTokens,
    start,
    client: () => track(createAuthClient({ address, caPems: [hostCaPem], serverName: "localhost" })),
    clientWith: (tls) =>
      track(createAuthClient({ address, caPems: [hostCaPem], serverName: "localhost", ...tls })),
    backend: openState,
    async close() {
      for (const c of clients) c.close();
      for (const p of procs) await p.kill();
      if (o.backend.type === "postgres")
        await dropSchema(o.backend.url, o.backend.schema).catch(() => undefined);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** A RegisterAgent request with fresh keys; the TLS key stays with the caller. */
export function joinRequest(token: string, hostname: string) {
  const host = generateSshKeyPair("ed25519");
  const tls = generateEcdsaP256();
  return {
    keyPem: privateKeyToPem(tls.privateKey),
    req: {
      token,
      hostname,
      host_ssh_public_key: host.publicLine,
      tls_public_key_pem: String(tls.publicKey.export({ type: "spki", format: "pem" })),
      labels: {},
      addresses: ["127.0.0.1:3022"],
    },
  };
}

/** Joins a node; its client certificate and key. */
export async function joinNode(
  client: AuthServiceClient,
  token: string,
  hostname: string,
): Promise<{ agentId: string; certPem: string; keyPem: string }> {
  const { keyPem, req } = joinRequest(token, hostname);
  const res = await callUnary(client, "RegisterAgent", req);
  return { agentId: res.agent_id ?? "", certPem: res.tls_certificate_pem ?? "", keyPem };
}

/** A small seeded generator (mulberry32): the kill points are the same on every run. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Fresh keys for a bot's bootstrap or renewal (they rotate every time). */
export function botKeys() {
  const ssh = generateSshKeyPair("ed25519");
  const tls = generateEcdsaP256();
  return {
    keyPem: privateKeyToPem(tls.privateKey),
    ssh_public_key: ssh.publicLine,
    tls_public_key_pem: String(tls.publicKey.export({ type: "spki", format: "pem" })),
  };
}
