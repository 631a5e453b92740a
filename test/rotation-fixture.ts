// An embedded platform (`svcd start` as a process) with a logged-in admin, for the CA rotation,
// KRL and lock end-to-end tests and their benches: the admin's gRPC client to auth (verified with the
// host CA, the admin's own session as bearer), phase changes as `svcctl ca rotate` makes them, and
// one-time node tokens.
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import {
  type AuthServiceClient,
  callUnary,
  createAuthClient,
  type ResponseOf,
  userMetadata,
} from "../server/auth/client.ts";
import { type Daemon, type RunResult, run, spawnDaemon, waitFor } from "./cli-fixture.ts";
import { freePort } from "./harness/ports.ts";

export interface RotationPlatform {
  dir: string;
  dataDir: string;
  ports: { auth: number; proxy: number; diag: number };
  /** "127.0.0.1:<port>" of the proxy's public listener */
  proxy: string;
  /** the data folder's host-ca.pem (what `svc login --ca` takes) */
  caFile: string;
  /** the admin's `svc` profile (password `admin-password-for-tests`) */
  adminEnv: NodeJS.ProcessEnv;
  admin: AuthServiceClient;
  adminSession: string;
  svc(args: string[], env: NodeJS.ProcessEnv): Promise<RunResult>;
  /** svcctl as the admin, straight to auth */
  svcctl(args: string[]): Promise<RunResult>;
  /** RotateCertAuthority as the admin; standby is forced (tests do not wait for old certificates to expire) */
  rotate(type: string, phase: string): Promise<ResponseOf<"RotateCertAuthority">>;
  publicKeys(): Promise<ResponseOf<"GetPublicKeys">>;
  /** a one-time node join token */
  nodeToken(name: string): Promise<string>;
  /** a user (role access) whose password is `<name>-password-for-tests`, logged in with `svc login` under its own SVC_HOME */
  addUser(name: string, logins: string[]): Promise<NodeJS.ProcessEnv>;
  /**
   * `svcd agent` joined with a fresh one-time token (named after the host) and the data folder's
   * host CA; `args` adds the rest (--listen, ...). Not waited for: each caller waits for what it needs.
   */
  spawnAgent(hostname: string, dataDir: string, args: string[]): Promise<Daemon>;
  /** stops `svcd start` alone (clients and the data folder stay) */
  stopDaemon(): Promise<void>;
  /** starts it again after stopDaemon, on the same ports and data */
  startDaemon(): Promise<void>;
  stop(): Promise<void>;
}

function must(r: RunResult, what: string): RunResult {
  if (r.code !== 0) throw new Error(`${what} failed (exit ${r.code}): ${r.stdout}\n${r.stderr}`);
  return r;
}

export async function startRotationPlatform(dir: string): Promise<RotationPlatform> {
  const dataDir = join(dir, "data");
  const ports = { auth: await freePort(), proxy: await freePort(), diag: await freePort() };
  const proxy = `127.0.0.1:${ports.proxy}`;
  const caFile = join(dataDir, "host-ca.pem");
  const adminEnv = { SVC_HOME: join(dir, "admin-home"), SVC_DATA_DIR: dataDir };
  /** `svcd start` on the same ports and data folder each time, up and serving. */
  const launch = async (): Promise<Daemon> => {
    const d = spawnDaemon(
      [
        "start",
        "--auth-listen",
        `127.0.0.1:${ports.auth}`,
        "--proxy-listen",
        proxy,
        "--diag-listen",
        `127.0.0.1:${ports.diag}`,
      ],
      { SVC_DATA_DIR: dataDir, SVC_ADMIN_PASSWORD_FILE: "" },
    );
    try {
      await waitFor(() => d.output().includes("svc is running") || d.child.exitCode !== null, "svcd start");
      if (d.child.exitCode !== null) throw new Error(`svcd start exited: ${d.output()}`);
      return d;
    } catch (err) {
      await d.stop();
      throw err;
    }
  };
  let platform: Daemon = await launch();
  let admin: AuthServiceClient | undefined;
  try {
    const svc = (args: string[], env: NodeJS.ProcessEnv) => run("svc", args, { env });
    const svcctl = (args: string[]) =>
      run("svcctl", ["--auth", `127.0.0.1:${ports.auth}`, ...args], { env: adminEnv });
    const reset = /--reset-token (\S+)/.exec(platform.output())?.[1] ?? "";
    await mkdir(dir, { recursive: true });
    /** `svc login` with a reset token, setting the password `<user>-password-for-tests` */
    const firstLogin = async (user: string, resetToken: string, env: NodeJS.ProcessEnv): Promise<void> => {
      const passwordFile = join(dir, `${user}-pw`);
      await writeFile(passwordFile, `${user}-password-for-tests\n`);
      const args = [
        "--proxy",
        proxy,
        "--ca",
        caFile,
        "--reset-token",
        resetToken,
        "--password-file",
        passwordFile,
      ];
      must(await svc(["login", ...args], env), `${user} login`);
    };
    await firstLogin("admin", reset, adminEnv);
    const adminSession = String(
      JSON.parse(await readFile(join(dir, "admin-home", "profile.json"), "utf8")).session_id,
    );
    const client = createAuthClient({
      address: `127.0.0.1:${ports.auth}`,
      caPems: [await readFile(caFile, "utf8")],
    });
    admin = client;
    const md = () => userMetadata(adminSession);
    const nodeToken = async (name: string): Promise<string> =>
      (await callUnary(client, "CreateJoinToken", { name, ttl_seconds: 1800, node_labels: {} }, md())).token;
    return {
      dir,
      dataDir,
      ports,
      proxy,
      caFile,
      adminEnv,
      admin: client,
      adminSession,
      svc,
      svcctl,
      rotate: (type, phase) =>
        callUnary(
          client,
          "RotateCertAuthority",
          { type, phase, mode: "manual", grace_period_seconds: 0, force: phase === "standby" },
          md(),
        ),
      publicKeys: () => callUnary(client, "GetPublicKeys", {}),
      nodeToken,
      addUser: async (name, logins) => {
        const add = must(
          await svcctl(["users", "add", name, "--roles", "access", "--logins", logins.join(","), "--json"]),
          `users add ${name}`,
        );
        const env = { SVC_HOME: join(dir, `${name}-home`) };
        await firstLogin(name, (JSON.parse(add.stdout) as { reset_token: string }).reset_token, env);
        return env;
      },
      async spawnAgent(hostname, agentDataDir, args) {
        const token = await nodeToken(hostname);
        const base = ["agent", "--auth", `127.0.0.1:${ports.auth}`, "--ca-file", caFile, "--token", token];
        return spawnDaemon([...base, "--data-dir", agentDataDir, "--hostname", hostname, ...args], {});
      },
      stopDaemon: () => platform.stop(),
      async startDaemon() {
        platform = await launch();
      },
      async stop() {
        client.close();
        await platform.stop();
      },
    };
  } catch (err) {
    admin?.close();
    await platform.stop();
    throw err;
  }
}
