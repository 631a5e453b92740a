// An embedded platform (`svcd start` as a process) with a logged-in admin, for the CA rotation
// end-to-end test and the rotation bench: the admin's gRPC client to auth (verified with the
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
  /** a user with a password, logged in with `svc login` under its own SVC_HOME */
  addUser(name: string, logins: string[]): Promise<NodeJS.ProcessEnv>;
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
  const platform: Daemon = spawnDaemon(
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
  let admin: AuthServiceClient | undefined;
  try {
    await waitFor(
      () => platform.output().includes("svc is running") || platform.child.exitCode !== null,
      "svcd start",
    );
    if (platform.child.exitCode !== null) throw new Error(`svcd start exited: ${platform.output()}`);
    const svc = (args: string[], env: NodeJS.ProcessEnv) => run("svc", args, { env });
    const svcctl = (args: string[]) =>
      run("svcctl", ["--auth", `127.0.0.1:${ports.auth}`, ...args], { env: adminEnv });
    const reset = /--reset-token (\S+)/.exec(platform.output())?.[1] ?? "";
    await mkdir(dir, { recursive: true });
    const passwordFile = (user: string) => join(dir, `${user}-pw`);
    await writeFile(passwordFile("admin"), "admin-password-for-tests\n");
    must(
      await svc(
        [
          "login",
          "--proxy",
          proxy,
          "--ca",
          caFile,
          "--reset-token",
          reset,
          "--password-file",
          passwordFile("admin"),
        ],
        adminEnv,
      ),
      "admin login",
    );
    const adminSession = String(
      JSON.parse(await readFile(join(dir, "admin-home", "profile.json"), "utf8")).session_id,
    );
    const client = createAuthClient({
      address: `127.0.0.1:${ports.auth}`,
      caPems: [await readFile(caFile, "utf8")],
    });
    admin = client;
    const md = () => userMetadata(adminSession);
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
      nodeToken: async (name) =>
        (await callUnary(client, "CreateJoinToken", { name, ttl_seconds: 1800, node_labels: {} }, md()))
          .token,
      addUser: async (name, logins) => {
        const add = must(
          await svcctl(["users", "add", name, "--roles", "access", "--logins", logins.join(","), "--json"]),
          `users add ${name}`,
        );
        const env = { SVC_HOME: join(dir, `${name}-home`) };
        await writeFile(passwordFile(name), `${name}-password-for-tests\n`);
        must(
          await svc(
            [
              "login",
              "--proxy",
              proxy,
              "--ca",
              caFile,
              "--reset-token",
              (JSON.parse(add.stdout) as { reset_token: string }).reset_token,
              "--password-file",
              passwordFile(name),
            ],
            env,
          ),
          `${name} login`,
        );
        return env;
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
