// schemathesis (PyPI, installed by scripts/tools/schemathesis.sh) against the OpenAPI document of
// a real `svcd start`: generated valid and invalid requests on every operation, with every check
// on (no 5xx, invalid input refused, valid input accepted, only documented statuses, responses
// and headers matching their schemas, auth not ignored), once as an admin and once as a plain
// user, with a fixed seed and a bounded number of cases. The admin must still be signed in at the
// end: generated input must not be able to sign anyone out or lock anyone out.
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { request } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml, stringify as stringifyYaml } from "yaml";
import { type Daemon, json, root, run, spawnDaemon, waitFor } from "./cli-fixture.ts";
import { freePort } from "./harness/ports.ts";

/** Fixed, so a failure reproduces: docs/web-api.md "Generated input" has the command. */
const SEED = "12";
/** Cases per operation and phase; keeps each run under 20 s on a 2-core machine. */
const MAX_EXAMPLES = "50";
const ADMIN_PASSWORD = "schemathesis-admin-password-1";
const USER_PASSWORD = "schemathesis-user-password-1";

interface Answer {
  status: number;
  body: string;
}

function send(
  port: number,
  ca: string,
  method: string,
  path: string,
  o: { sessionId?: string; body?: unknown } = {},
) {
  const headers: Record<string, string> = {};
  if (o.body !== undefined) headers["content-type"] = "application/json";
  if (o.sessionId) headers.authorization = `Bearer ${o.sessionId}`;
  return new Promise<Answer>((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, path, ca, method, headers }, (res) => {
      let body = "";
      res.on("data", (d: Buffer) => {
        body += d.toString();
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on("error", reject);
    req.end(o.body === undefined ? undefined : JSON.stringify(o.body));
  });
}

function exec(
  file: string,
  args: string[],
  cwd: string,
): Promise<{ code: number; stdout: string; output: string }> {
  return new Promise((resolve) => {
    execFile(file, args, { cwd, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === "number" ? err.code : 1) : 0;
      resolve({ code, stdout, output: `${stdout}${stderr}${err && !stderr ? String(err) : ""}` });
    });
  });
}

describe("schemathesis against svcd start", () => {
  let dir: string;
  let dataDir: string;
  let caFile: string;
  let ca: string;
  let schemathesis: string;
  let ports: { auth: number; proxy: number; diag: number };
  let platform: Daemon | undefined;
  const sessions = { admin: "", user: "", throwaway: "" };

  /** One schemathesis run with the session as Bearer credential; answers its exit code and output. */
  const schemathesisRun = (sessionId: string, ...filters: string[]) => {
    const base = `https://127.0.0.1:${ports.proxy}`;
    return exec(
      schemathesis,
      [
        "--config-file",
        join(root, "test", "schemathesis.toml"),
        "run",
        `${base}/v1/webapi/openapi.json`,
        // The document names the public address (https://localhost:3080); requests go here.
        "--url",
        base,
        // Verified against the platform's own host CA, which signed the proxy's certificate.
        "--tls-verify",
        caFile,
        "--header",
        `Authorization: Bearer ${sessionId}`,
        "--checks",
        "all",
        "--seed",
        SEED,
        "--max-examples",
        MAX_EXAMPLES,
        "--workers",
        "1",
        // Nothing is kept between runs (no .hypothesis folder): the seed alone decides the cases.
        "--generation-database",
        "none",
        "--no-color",
        ...filters,
      ],
      dir,
    );
  };

  beforeAll(async () => {
    const installed = await exec("bash", [join(root, "scripts", "tools", "schemathesis.sh")], root);
    expect(installed.code, installed.output).toBe(0);
    schemathesis = installed.stdout.trim().split("\n").at(-1) ?? "";

    dir = await mkdtemp(join(tmpdir(), "svc-schemathesis-"));
    dataDir = join(dir, "data");
    caFile = join(dataDir, "host-ca.pem");
    ports = { auth: await freePort(), proxy: await freePort(), diag: await freePort() };
    const pwFile = join(dir, "admin-password");
    await writeFile(pwFile, `${ADMIN_PASSWORD}\n`, { mode: 0o600 });
    const start = async (env: NodeJS.ProcessEnv) => {
      const d = spawnDaemon(
        [
          "start",
          "--auth-listen",
          `127.0.0.1:${ports.auth}`,
          "--proxy-listen",
          `127.0.0.1:${ports.proxy}`,
          "--diag-listen",
          `127.0.0.1:${ports.diag}`,
        ],
        { SVC_DATA_DIR: dataDir, ...env },
      );
      platform = d;
      await waitFor(() => d.output().includes("svc is running") || d.child.exitCode !== null, "svcd");
      expect(d.child.exitCode, d.output()).toBeNull();
    };
    // The first start writes the data folder and its svc.yaml; the second runs with a per-session
    // request budget far above what one schemathesis run sends, so generated requests reach the
    // routes instead of the budget's 429 (the budget itself: test/proxy-limits.test.ts).
    await start({ SVC_ADMIN_PASSWORD_FILE: pwFile });
    await platform?.stop();
    const configPath = join(dataDir, "svc.yaml");
    const config = parseYaml(await readFile(configPath, "utf8")) as { proxy: Record<string, unknown> };
    config.proxy.limits = { session_requests_per_second: 100_000, session_request_burst: 100_000 };
    await writeFile(configPath, stringifyYaml(config));
    await start({});
    ca = await readFile(caFile, "utf8");
    await waitFor(async () => (await send(ports.proxy, ca, "GET", "/readyz")).status === 200, "readyz");

    // A plain user ("access" role) put in the manifests folder, with a password through a reset
    // token: the console's admin routes leave folder users alone (412), so generated admin calls
    // (a reset link for a listed user, a delete) cannot sign this user out.
    await writeFile(
      join(dataDir, "manifests", "user-plain.yaml"),
      stringifyYaml({
        apiVersion: "svc.dev/v1",
        kind: "User",
        metadata: { name: "plain" },
        spec: { roles: ["access"] },
      }),
    );
    const adminEnv = { SVC_HOME: join(dir, "admin-home"), SVC_DATA_DIR: dataDir };
    const svcLogin = await run(
      "svc",
      [
        "login",
        "--proxy",
        `127.0.0.1:${ports.proxy}`,
        "--ca",
        caFile,
        "--user",
        "admin",
        "--password-file",
        pwFile,
      ],
      { env: adminEnv },
    );
    expect(svcLogin.code, svcLogin.stderr).toBe(0);
    const resetPlain = () =>
      run("svcctl", ["--auth", `127.0.0.1:${ports.auth}`, "users", "reset", "plain", "--json"], {
        env: adminEnv,
      });
    // Until the folder source has read the manifest, auth answers not found.
    let add = await resetPlain();
    await waitFor(async () => {
      if (add.code !== 0) add = await resetPlain();
      return add.code === 0;
    }, "the folder's user plain");
    const reset = await send(ports.proxy, ca, "POST", "/v1/webapi/password/reset", {
      body: { token: json<{ reset_token: string }>(add).reset_token, password: USER_PASSWORD },
    });
    expect(reset.status, reset.body).toBe(200);

    // All logins before any run: generated logins soon meet the per-address rate limit.
    const login = async (username: string, password: string) => {
      const r = await send(ports.proxy, ca, "POST", "/v1/webapi/login", { body: { username, password } });
      expect(r.status, r.body).toBe(200);
      return (JSON.parse(r.body) as { session_id: string }).session_id;
    };
    sessions.admin = await login("admin", ADMIN_PASSWORD);
    sessions.user = await login("plain", USER_PASSWORD);
    sessions.throwaway = await login("admin", ADMIN_PASSWORD);
  });

  afterAll(async () => {
    await platform?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  // Logout is left out of the two main runs: with their own session it would end it, and every
  // later case would only test the 401 path. It gets its own run with a throwaway session.
  it("as an admin: every operation but logout", { timeout: 300_000 }, async () => {
    const r = await schemathesisRun(sessions.admin, "--exclude-path", "/v1/webapi/logout");
    expect(r.code, r.output).toBe(0);
    expect(r.output).toMatch(/Seed: 12/);
  });

  it("as a plain user: every operation but logout", { timeout: 300_000 }, async () => {
    const r = await schemathesisRun(sessions.user, "--exclude-path", "/v1/webapi/logout");
    expect(r.code, r.output).toBe(0);
  });

  it("logout, with a throwaway session of the admin", { timeout: 60_000 }, async () => {
    // Logout is idempotent by design (docs/web-api.md "Sessions and cookies"): a session that is
    // unknown, expired or revoked is "logged out already", 200 with the cookies cleared, so a
    // client never gets stuck holding a dead cookie. schemathesis's ignored_auth check (a made-up
    // credential must get 401) does not hold for it; no credential at all is still 401, and every
    // other check runs.
    const r = await schemathesisRun(
      sessions.throwaway,
      "--include-path",
      "/v1/webapi/logout",
      "--exclude-checks",
      "ignored_auth",
    );
    expect(r.code, r.output).toBe(0);
    expect(
      (await send(ports.proxy, ca, "GET", "/v1/webapi/session", { sessionId: sessions.throwaway })).status,
    ).toBe(401);
  });

  it("the admin and the user are still signed in and the admin still has its rights", async () => {
    for (const sessionId of [sessions.admin, sessions.user]) {
      const r = await send(ports.proxy, ca, "GET", "/v1/webapi/session", { sessionId });
      expect(r.status, r.body).toBe(200);
    }
    const admin = await send(ports.proxy, ca, "GET", "/v1/webapi/users", { sessionId: sessions.admin });
    expect(admin.status, admin.body).toBe(200);
  });
});
