// The world the lock enforcement test and the `locks` bench run in: `svcd start` as a process, an
// admin and a user alice (role access, logins alice and root) logged in with `svc`, N `svcd agent`
// processes with diagnostics listeners, the certificates `svc certs` writes for both users, plain
// OpenSSH sessions, and CreateLock/DeleteLock as an admin calls them.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { request } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { LockTarget } from "../proto/generated/svc/v1/LockTarget.ts";
import { type AuthServiceClient, callUnary, userMetadata } from "../server/auth/client.ts";
import { bin, type Daemon, json, type RunResult, waitFor } from "./cli-fixture.ts";
import { freePort } from "./harness/ports.ts";
import { certSshArgs, runSsh, svcCertFiles } from "./harness/ssh-login.ts";
import { type RotationPlatform, startRotationPlatform } from "./rotation-fixture.ts";
import { mustOpen, type TerminalConnection } from "./terminal-client.ts";

/** The proxy's public name in `svcd start`'s default config (its certificate names it). */
export const PUBLIC_NAME = "localhost";

export interface Certs {
  private_key: string;
  certificate: string;
  known_hosts: string;
}

/** A long-lived OpenSSH session running `cat`: alive is proven by an echo, ended by its exit. */
export interface LiveSsh {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  exited: Promise<number | null>;
  /** writes a line and waits for it to come back (the session is alive and served) */
  echo(text: string): Promise<void>;
}

export interface LockNode {
  name: string;
  id: string;
  port: number;
  diagPort: number;
  daemon: Daemon;
}

export interface LocksWorld {
  dir: string;
  ports: { auth: number; proxy: number; diag: number };
  hostCaPem: string;
  client: AuthServiceClient;
  nodes: LockNode[];
  adminCerts: Certs;
  aliceCerts: Certs;
  session(user: "admin" | "alice"): Promise<string>;
  lock(target: LockTarget, message: string): Promise<string>;
  unlock(name: string): Promise<void>;
  /** every lock in force, removed */
  unlockAll(): Promise<void>;
  ssh(c: Certs, node: LockNode): Promise<RunResult>;
  loginWorks(c: Certs, node: LockNode): Promise<boolean>;
  openSsh(c: Certs, node: LockNode): Promise<LiveSsh>;
  /** `svc ssh root@<node> <command>` as that user: SSH end to end through the proxy's node stream */
  svcSsh(who: "admin" | "alice", node: LockNode): Promise<LiveSsh>;
  terminal(sessionId: string, node: LockNode): Promise<TerminalConnection>;
  web(path: string, sessionId: string): Promise<{ status: number; body: string }>;
  stopPlatform(): Promise<void>;
  startPlatform(): Promise<void>;
  close(): Promise<void>;
}

function sshArgs(c: Certs, node: LockNode): string[] {
  return certSshArgs({ ...svcCertFiles(c), port: node.port, hostAlias: node.name });
}

async function openSsh(c: Certs, node: LockNode): Promise<LiveSsh> {
  return liveSession(spawn("ssh", [...sshArgs(c, node), UP_AND_CAT], { stdio: ["pipe", "pipe", "pipe"] }));
}

const UP_AND_CAT = "echo session-up; exec cat";

async function liveSession(child: ChildProcess): Promise<LiveSsh> {
  let out = "";
  let err = "";
  child.stdout?.on("data", (d: Buffer) => {
    out += d.toString();
  });
  child.stderr?.on("data", (d: Buffer) => {
    err += d.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  await waitFor(() => {
    if (child.exitCode !== null) throw new Error(`ssh ended before the session was up: ${err}`);
    return out.includes("session-up");
  }, "ssh session up");
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    exited,
    async echo(text) {
      child.stdin?.write(`${text}\n`);
      await waitFor(() => {
        if (child.exitCode !== null) throw new Error(`ssh ended: ${err}`);
        return out.includes(text);
      }, `echo of ${text}`);
    },
  };
}

export async function startLocksWorld(o: { nodes: number }): Promise<LocksWorld> {
  const dir = await mkdtemp(join(tmpdir(), "svc-locks-"));
  const checked = async (r: Promise<RunResult>): Promise<RunResult> => {
    const done = await r;
    if (done.code !== 0) throw new Error(`exit ${done.code}: ${done.stderr}`);
    return done;
  };

  let p: RotationPlatform | undefined;
  const nodes: LockNode[] = [];
  const close = async (): Promise<void> => {
    for (const n of nodes) await n.daemon.stop();
    await p?.stop();
    await rm(dir, { recursive: true, force: true });
  };

  try {
    const platform = await startRotationPlatform(dir);
    p = platform;
    const { ports, adminEnv, svc, admin: c } = platform;
    const aliceEnv = await platform.addUser("alice", ["alice", "root"]);
    const hostCaPem = await readFile(platform.caFile, "utf8");
    // The platform's passwords (rotation-fixture): `<user>-password-for-tests`.
    const session = async (user: "admin" | "alice"): Promise<string> => {
      const r = await callUnary(c, "AuthenticateLocal", {
        username: user,
        password: `${user}-password-for-tests`,
      });
      return r.session?.session_id ?? "";
    };

    for (let i = 0; i < o.nodes; i++) {
      const name = `node${i + 1}`;
      const port = await freePort();
      const diagPort = await freePort();
      const daemon = await platform.spawnAgent(name, join(dir, name), [
        "--listen",
        `127.0.0.1:${port}`,
        "--diag-listen",
        `127.0.0.1:${diagPort}`,
      ]);
      nodes.push({ name, id: "", port, diagPort, daemon });
      await waitFor(() => {
        if (daemon.child.exitCode !== null) throw new Error(`agent exited: ${daemon.output()}`);
        return daemon.output().includes("agent serving SSH");
      }, `${name} serving SSH`);
      // Enforcement starts with the first trust snapshot: /readyz says the node holds one.
      await waitFor(
        async () => (await fetch(`http://127.0.0.1:${diagPort}/readyz`)).status === 200,
        `${name} holds a trust snapshot`,
      );
    }
    const listed = json<Array<{ id: string; hostname: string }>>(
      await checked(svc(["ls", "--json"], adminEnv)),
    );
    for (const n of nodes) n.id = listed.find((l) => l.hostname === n.name)?.id ?? "";
    const certsFor = async (env: NodeJS.ProcessEnv, out: string): Promise<Certs> =>
      json<Certs>(await checked(svc(["certs", "--out", out, "--ttl", "60m", "--json"], env)));
    const adminCerts = await certsFor(adminEnv, join(dir, "admin-keys"));
    const aliceCerts = await certsFor(aliceEnv, join(dir, "alice-keys"));

    let adminSession = await session("admin");
    const admin = async (): Promise<ReturnType<typeof userMetadata>> => {
      // A restarted platform keeps sessions (SQLite); a fresh one only if it did not.
      await callUnary(c, "GetSession", {}, userMetadata(adminSession)).catch(async () => {
        adminSession = await session("admin");
      });
      return userMetadata(adminSession);
    };
    const ssh = (certs: Certs, node: LockNode) => runSsh([...sshArgs(certs, node), "echo login-ok"]);
    const world: LocksWorld = {
      dir,
      ports,
      hostCaPem,
      client: c,
      nodes,
      adminCerts,
      aliceCerts,
      session,
      async lock(target, message) {
        return (await callUnary(c, "CreateLock", { target, message }, await admin())).name;
      },
      async unlock(name) {
        await callUnary(c, "DeleteLock", { name }, await admin());
      },
      async unlockAll() {
        const md = await admin();
        const { locks } = await callUnary(c, "ListLocks", {}, md);
        for (const l of locks) await callUnary(c, "DeleteLock", { name: l.name }, md);
      },
      ssh,
      loginWorks: async (certs, node) => (await ssh(certs, node)).stdout.includes("login-ok"),
      openSsh,
      svcSsh: (who, node) =>
        liveSession(
          spawn(bin("svc"), ["ssh", `root@${node.name}`, UP_AND_CAT], {
            env: { ...process.env, ...(who === "admin" ? adminEnv : aliceEnv) },
            stdio: ["pipe", "pipe", "pipe"],
          }),
        ),
      terminal: (sessionId, node) =>
        mustOpen({
          baseUrl: `https://127.0.0.1:${ports.proxy}`,
          caPem: hostCaPem,
          servername: PUBLIC_NAME,
          query: { node: node.name, login: "root" },
          headers: { authorization: `Bearer ${sessionId}` },
        }),
      web: (path, sessionId) =>
        new Promise((resolve, reject) => {
          const req = request(
            {
              host: "127.0.0.1",
              port: ports.proxy,
              path,
              ca: hostCaPem,
              servername: PUBLIC_NAME,
              headers: { authorization: `Bearer ${sessionId}` },
            },
            (res) => {
              let body = "";
              res.on("data", (d: Buffer) => {
                body += d.toString();
              });
              res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
            },
          );
          req.on("error", reject);
          req.end();
        }),
      stopPlatform: () => platform.stopDaemon(),
      startPlatform: () => platform.startDaemon(),
      close,
    };
    return world;
  } catch (err) {
    await close();
    throw err;
  }
}
