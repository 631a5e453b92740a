// A real, throw-away PostgreSQL for tests and benchmarks: initdb in a temp folder, a free loopback
// port, the unix socket inside the folder, stopped with `pg_ctl stop -m fast` and removed.
// SVC_TEST_PG_URL (a user's own server) replaces all of that when set.
import { execFile, spawnSync } from "node:child_process";
import { chownSync, existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { appendFile, mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import pg from "pg";

const run = promisify(execFile);

export const PG_URL_ENV = "SVC_TEST_PG_URL";
const DEBIAN_PG_ROOT = "/usr/lib/postgresql";
const DATABASE = "svc_test";

export interface PostgresServer {
  /** postgres://... URL of a database the caller may use freely. */
  url: string;
  /** True when the server came from SVC_TEST_PG_URL and is not ours to stop. */
  external: boolean;
  /** The server's main process (postmaster), when it is ours: benches read its CPU time. */
  pid?: number;
  stop(): Promise<void>;
}

/** The folder with initdb/pg_ctl: SVC_PG_BIN_DIR, else the newest Debian version, else PATH. */
export function findPostgresBinDir(env: NodeJS.ProcessEnv = process.env): string {
  const fromEnv = env["SVC_PG_BIN_DIR"];
  if (fromEnv) return fromEnv;
  if (existsSync(DEBIAN_PG_ROOT)) {
    const versions = readdirSync(DEBIAN_PG_ROOT)
      .filter((v) => /^\d+$/.test(v) && existsSync(join(DEBIAN_PG_ROOT, v, "bin", "initdb")))
      .sort((a, b) => Number(b) - Number(a));
    const newest = versions[0];
    if (newest !== undefined) return join(DEBIAN_PG_ROOT, newest, "bin");
  }
  for (const dir of (env["PATH"] ?? "").split(":")) {
    if (dir && existsSync(join(dir, "initdb"))) return dir;
  }
  throw new Error(
    "PostgreSQL server binaries (initdb, pg_ctl) not found: run `make provision` (Debian package postgresql), " +
      `set SVC_PG_BIN_DIR, or point ${PG_URL_ENV} at a server of your own`,
  );
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const addr = srv.address();
      const port = typeof addr === "object" && addr !== null ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

async function idOf(flag: "-u" | "-g", user: string): Promise<number> {
  const { stdout } = await run("id", [flag, user]);
  return Number(stdout.trim());
}

/**
 * A server reachable beyond loopback, as a managed database is: it also listens on `address`
 * and lets clients from `clientCidrs` in with the `postgres` user's password (SCRAM).
 */
export interface PostgresNetwork {
  address: string;
  clientCidrs: string[];
  password: string;
}

/**
 * Starts a private PostgreSQL (always, when `network` is given), or returns the server named by SVC_TEST_PG_URL (stop() is then a
 * no-op). initdb refuses to run as root, so as root the server runs as the `postgres` user.
 */
export async function startPostgres(
  env: NodeJS.ProcessEnv = process.env,
  network?: PostgresNetwork,
): Promise<PostgresServer> {
  const external = env[PG_URL_ENV];
  if (external && !network) return { url: external, external: true, stop: async () => {} };

  const bin = findPostgresBinDir(env);
  const asRoot = process.getuid?.() === 0;
  const exec = async (cmd: string, args: string[], timeout = 120_000): Promise<string> => {
    const [file, argv] = asRoot
      ? ["runuser", ["-u", "postgres", "--", join(bin, cmd), ...args]]
      : [join(bin, cmd), args];
    const { stdout } = await run(file, argv, { timeout, maxBuffer: 16 * 1024 * 1024 });
    return stdout;
  };

  const dir = await mkdtemp(join(tmpdir(), "svc-pg-"));
  const data = join(dir, "data");
  const log = join(dir, "server.log");
  let started = false;
  // If the run ends without stop() (an uncaught error, process.exit), do not leave a server behind.
  const stopOnExit = (): void => {
    if (!started) return;
    started = false;
    const args = ["stop", "-D", data, "-m", "immediate", "-w", "-t", "30"];
    const [file, argv] = asRoot
      ? ["runuser", ["-u", "postgres", "--", join(bin, "pg_ctl"), ...args]]
      : [join(bin, "pg_ctl"), args];
    spawnSync(file, argv, { stdio: "ignore", timeout: 30_000 });
    rmSync(dir, { recursive: true, force: true });
  };
  process.once("exit", stopOnExit);
  const stop = async (): Promise<void> => {
    process.removeListener("exit", stopOnExit);
    if (started) {
      started = false;
      await exec("pg_ctl", ["stop", "-D", data, "-m", "fast", "-w", "-t", "60"]).catch(() => {
        // Already gone (e.g. killed); the folder is removed regardless.
      });
    }
    await rm(dir, { recursive: true, force: true });
  };

  try {
    if (asRoot) chownSync(dir, await idOf("-u", "postgres"), await idOf("-g", "postgres"));
    await exec("initdb", ["-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C", "-N"]);
    if (network) {
      const hba = network.clientCidrs.map((c) => `host all postgres ${c} scram-sha-256`).join("\n");
      await appendFile(join(data, "pg_hba.conf"), `\n${hba}\n`);
    }
    let port = 0;
    // The port is free when picked but could be taken before the server binds it: retry.
    for (let attempt = 1; ; attempt++) {
      port = await freePort();
      const serverOpts = [
        `-c listen_addresses=${network ? `127.0.0.1,${network.address}` : "127.0.0.1"}`,
        `-p ${port}`,
        `-k ${dir}`,
        // A test database: durability is not the point, speed and many clients are.
        "-c fsync=off -c synchronous_commit=off -c full_page_writes=off",
        "-c max_connections=300 -c shared_buffers=32MB",
      ].join(" ");
      try {
        await exec("pg_ctl", ["start", "-D", data, "-l", log, "-w", "-t", "60", "-o", serverOpts]);
        started = true;
        break;
      } catch (err) {
        if (attempt >= 3) throw err;
      }
    }
    const pid = Number(readFileSync(join(data, "postmaster.pid"), "utf8").split("\n")[0]);
    const adminUrl = `postgres://postgres@127.0.0.1:${port}/postgres`;
    const client = new pg.Client({ connectionString: adminUrl });
    await client.connect();
    try {
      await client.query(`CREATE DATABASE ${DATABASE}`);
      if (network) {
        await client.query("SET password_encryption = 'scram-sha-256'");
        await client.query(`ALTER USER postgres PASSWORD ${client.escapeLiteral(network.password)}`);
      }
    } finally {
      await client.end();
    }
    if (network) {
      const password = encodeURIComponent(network.password);
      return {
        url: `postgres://postgres:${password}@${network.address}:${port}/${DATABASE}`,
        external: false,
        pid,
        stop,
      };
    }
    return { url: `postgres://postgres@127.0.0.1:${port}/${DATABASE}`, external: false, pid, stop };
  } catch (err) {
    const tail = existsSync(log) ? readFileSync(log, "utf8").slice(-2000) : "";
    await stop();
    throw new Error(
      `could not start PostgreSQL: ${err instanceof Error ? err.message : String(err)}\n${tail}`,
      {
        cause: err,
      },
    );
  }
}

/** The URL global setup published for this test run; throws when none is set. */
export function testPostgresUrl(env: NodeJS.ProcessEnv = process.env): string {
  const url = env[PG_URL_ENV];
  if (!url) throw new Error(`${PG_URL_ENV} is not set: run tests through vitest (test/global-setup.ts)`);
  return url;
}

/** A schema name no other test file, worker or run will pick, so tests can share one database. */
export function uniqueSchemaName(label: string): string {
  const clean = label
    .toLowerCase()
    .replace(/[^a-z0-9_]/g, "_")
    .slice(0, 20);
  const rand = Math.random().toString(36).slice(2, 10);
  return `t_${clean}_${process.pid}_${rand}`;
}

/** Removes a test schema and everything in it. */
export async function dropSchema(url: string, schema: string): Promise<void> {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) throw new Error(`not a schema name: ${schema}`);
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  } finally {
    await client.end();
  }
}
