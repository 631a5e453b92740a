// Real `svcd` processes (bin/svcd) for tests and benches that run auths, proxies or agents as
// production does: spawned with their output in a log file, waited for on their readiness
// endpoint, and, for auths sharing one PostgreSQL schema and one files CA folder, the CAs they
// created and a local user's password.
import { type ChildProcess, spawn } from "node:child_process";
import { closeSync, openSync, readFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { stringify } from "yaml";
import { openBackend } from "../../core/backend/index.ts";
import { CertificateAuthorities } from "../../core/ca/authorities.ts";
import { FileCaKeyStore } from "../../core/ca/key-store.ts";
import { systemClock } from "../../core/clock.ts";
import { setPassword } from "../../server/auth/passwords.ts";
import { freePort } from "./ports.ts";

const root = join(import.meta.dirname, "..", "..");

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Polls `probe` (a throw counts as not yet) until it says true; throws after `ms`. */
export async function until(
  what: string,
  probe: () => Promise<boolean> | boolean,
  ms = 90_000,
  everyMs = 200,
): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    const ok = await Promise.resolve()
      .then(probe)
      .catch(() => false);
    if (ok) return;
    await sleep(everyMs);
  }
  throw new Error(`timed out waiting for ${what}`);
}

export interface SvcdProcess {
  name: string;
  child: ChildProcess;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  port: number;
  diagPort: number;
  /** its stdout and stderr */
  log: string;
  /** its config file ("" when started with flags) */
  config: string;
}

/**
 * Starts `svcd <role>` with `--config <config>` (a string) or the given flags, its output
 * appended to <dir>/<name>.log.
 */
export function spawnSvcd(o: {
  dir: string;
  name: string;
  role: "auth" | "proxy" | "agent";
  config: string | string[];
  port: number;
  diagPort: number;
  env?: Record<string, string>;
}): SvcdProcess {
  const log = join(o.dir, `${o.name}.log`);
  const fd = openSync(log, "a");
  const args = typeof o.config === "string" ? ["--config", o.config] : o.config;
  const child = spawn(join(root, "bin", "svcd"), [o.role, ...args], {
    stdio: ["ignore", fd, fd],
    env: { ...process.env, ...o.env },
  });
  closeSync(fd);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal })),
  );
  return {
    name: o.name,
    child,
    exited,
    port: o.port,
    diagPort: o.diagPort,
    log,
    config: typeof o.config === "string" ? o.config : "",
  };
}

/**
 * `svcd auth` on a PostgreSQL schema it shares with its replicas, with their manifests folder
 * (<dir>/manifests) and files CA folder (<dir>/ca); gRPC and diagnostics on free ports.
 */
export async function spawnPostgresAuth(o: {
  dir: string;
  name: string;
  cluster: string;
  pgUrl: string;
  schema: string;
  /** proxy.public_addr and proxy.oidc_issuer_url (default localhost:3080) */
  publicAddr?: string;
  oidcIssuerUrl?: string;
  logLevel?: string;
}): Promise<SvcdProcess> {
  const port = await freePort();
  const diagPort = await freePort();
  const config = join(o.dir, `${o.name}.yaml`);
  await writeFile(
    config,
    stringify({
      version: 1,
      cluster_name: o.cluster,
      log_level: o.logLevel ?? "info",
      auth: { listen_addr: `127.0.0.1:${port}`, diagnostics_addr: `127.0.0.1:${diagPort}` },
      proxy: {
        listen_addr: "127.0.0.1:3080",
        public_addr: o.publicAddr ?? "localhost:3080",
        oidc_issuer_url: o.oidcIssuerUrl ?? "https://localhost:3080",
      },
      client_tools: { min_version: "0.1.0", recommended_version: "0.1.0" },
      backend: { type: "postgres", url_env: "SVC_AUTH_PG_URL", schema: o.schema },
      source: { type: "folder", path: join(o.dir, "manifests") },
      ca_store: { type: "files", path: join(o.dir, "ca") },
    }),
  );
  return spawnSvcd({
    dir: o.dir,
    name: o.name,
    role: "auth",
    config,
    port,
    diagPort,
    env: { SVC_AUTH_PG_URL: o.pgUrl },
  });
}

/** Resolves once /readyz answers 200; throws at once, with the end of its log, if it exited. */
export async function svcdReady(p: SvcdProcess, ms = 90_000): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (p.child.exitCode !== null) {
      throw new Error(`${p.name} exited ${p.child.exitCode}:\n${readFileSync(p.log, "utf8").slice(-3000)}`);
    }
    const ok = await fetch(`http://127.0.0.1:${p.diagPort}/readyz`, {
      signal: AbortSignal.timeout(5_000),
    }).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ok) return;
    await sleep(200);
  }
  throw new Error(`timed out waiting for ${p.name} ready`);
}

/**
 * The CAs the auths created in their shared files folder (<caDir>), and `user`'s password set in
 * their PostgreSQL schema.
 */
export async function sharedClusterCas(o: {
  caDir: string;
  cluster: string;
  pgUrl: string;
  schema: string;
  user: string;
  password: string;
}): Promise<CertificateAuthorities> {
  const cas = await CertificateAuthorities.loadOrCreate(new FileCaKeyStore(o.caDir), {
    clusterName: o.cluster,
    trustDomain: o.cluster,
    clock: systemClock,
  });
  const backend = await openBackend(
    { type: "postgres", connectionString: o.pgUrl, schema: o.schema },
    { clock: systemClock },
  );
  try {
    await setPassword(backend, o.user, o.password);
  } finally {
    await backend.close();
  }
  return cas;
}
