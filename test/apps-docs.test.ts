// docs/apps.md as a user follows it, against a real `svcd start` (free ports, a fresh data folder):
// its ```sh commands run here (test/doc-commands.test.ts lists them as run by this file), and its
// JWT verification example runs as a real app: first against assertions signed here with the App
// CA's key from the data folder (and with the wrong key, audience, issuer, time), then behind the
// proxy, where the proxy signs for the signed-in user.
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { request } from "node:http";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CertificateAuthorities } from "../core/ca/authorities.ts";
import { type JwtKey, signJwt } from "../core/ca/jwt.ts";
import { FileCaKeyStore } from "../core/ca/key-store.ts";
import { FileRotationStateStore } from "../core/ca/rotation-store.ts";
import type { Clock } from "../core/clock.ts";
import { systemClock } from "../core/clock.ts";
import { loadConfigFile } from "../server/config.ts";
import { docCommands, root } from "./chart-helm.ts";
import { type Daemon, spawnDaemon, waitFor } from "./cli-fixture.ts";
import { freePort } from "./harness/ports.ts";

const execFileP = promisify(execFile);
const STEP = 90_000;
const GUIDE = "apps.md";

/** The guide's JavaScript example (the one ```js block). */
function jsExample(markdown: string): string {
  const blocks = [...markdown.matchAll(/^```js\n([\s\S]*?)^```$/gm)].map((m) => m[1] ?? "");
  if (blocks.length !== 1) throw new Error(`${GUIDE} should have one js block, has ${blocks.length}`);
  return blocks[0] ?? "";
}

/** GET `path` on 127.0.0.1:`port` over plain HTTP with `headers`: status and body. */
function httpGet(port: number, path: string, headers: Record<string, string> = {}) {
  return new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, path, headers }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (d: string) => {
        body += d;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

const listening = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = connect(port, "127.0.0.1");
    s.once("connect", () => {
      s.destroy();
      resolve(true);
    });
    s.once("error", () => resolve(false));
  });

describe("docs/apps.md: the guide's commands and its verification example", () => {
  let guide = "";
  let dir = "";
  let env: NodeJS.ProcessEnv = {};
  let ports: { auth: number; proxy: number; diag: number; app: number };
  let platform: Daemon | undefined;
  let example: ChildProcess | undefined;
  let exampleOut = "";
  let cas: CertificateAuthorities;
  /** What the example app is started with (the guide's command, ports substituted). */
  let proxyUrl = "";
  const appUri = () => `http://127.0.0.1:${ports.app}`;

  /** The guide's command starting with `prefix`, its placeholders replaced (each must be there). */
  const command = (prefix: string, subst: Array<[string, string]> = []): string => {
    const c = docCommands(guide).find((x) => x.text.startsWith(prefix));
    if (!c) throw new Error(`${GUIDE} has no "${prefix}" command any more`);
    let text = c.text;
    for (const [from, to] of subst) {
      if (!text.includes(from)) throw new Error(`${GUIDE}: no "${from}" in ${text}`);
      text = text.replaceAll(from, to);
    }
    return text;
  };
  const sh = async (text: string): Promise<string> => {
    try {
      return (await execFileP("bash", ["-euo", "pipefail", "-c", text], { cwd: dir, env, timeout: 50_000 }))
        .stdout;
    } catch (err) {
      const e = err as { stdout?: string; stderr?: string };
      throw new Error(`${text}\nfailed: ${e.stderr ?? ""}${e.stdout ?? ""}`);
    }
  };

  beforeAll(async () => {
    guide = await readFile(join(root, "docs", GUIDE), "utf8");
    dir = await mkdtemp(join(tmpdir(), "svc-apps-docs-"));
    await symlink(join(root, "bin"), join(dir, "bin"));
    // The example imports jose as an app author's project would: from its own node_modules.
    await symlink(join(root, "node_modules"), join(dir, "node_modules"));
    ports = {
      auth: await freePort(),
      proxy: await freePort(),
      diag: await freePort(),
      app: await freePort(),
    };
    env = { ...process.env, SVC_HOME: join(dir, "home"), SVC_AUTH_ADDR: `127.0.0.1:${ports.auth}` };
    for (const k of ["SVC_DATA_DIR", "SVC_ADMIN_PASSWORD_FILE", "NODE_EXTRA_CA_CERTS"]) delete env[k];
    await writeFile(join(dir, "admin-password"), "apps-docs-password-1\n", { mode: 0o600 });
    platform = spawnDaemon(
      [
        "start",
        "--auth-listen",
        `127.0.0.1:${ports.auth}`,
        "--proxy-listen",
        `127.0.0.1:${ports.proxy}`,
        "--diag-listen",
        `127.0.0.1:${ports.diag}`,
      ],
      { SVC_DATA_DIR: join(dir, "data"), SVC_ADMIN_PASSWORD_FILE: join(dir, "admin-password") },
    );
    const p = platform;
    await waitFor(() => p.output().includes("svc is running") || p.child.exitCode !== null, "svcd start");
    expect(p.child.exitCode, p.output()).toBeNull();
    // The App CA as the data folder holds it (read only: every CA exists after the first start).
    const config = await loadConfigFile(join(dir, "data", "svc.yaml"));
    const caDir = join(dir, "data", "ca");
    cas = await CertificateAuthorities.loadOrCreate(new FileCaKeyStore(caDir), {
      clusterName: config.cluster_name,
      trustDomain: config.cluster_name,
      clock: systemClock,
      rotationStore: new FileRotationStateStore(caDir),
    });
    proxyUrl = `https://localhost:${ports.proxy}`;

    // The guide's command that starts the example, as written but for the ports; it runs from the
    // folder the guide's paths are relative to (data/host-ca.pem).
    await writeFile(join(dir, "verify-assertion.mjs"), jsExample(guide));
    const start = command("NODE_EXTRA_CA_CERTS=", [
      ["https://localhost:3080", proxyUrl],
      ["http://127.0.0.1:3000", appUri()],
    ]);
    example = spawn("bash", ["-c", `exec env PORT=${ports.app} ${start}`], { cwd: dir, env, stdio: "pipe" });
    const ex = example;
    ex.stdout?.on("data", (d: Buffer) => {
      exampleOut += d.toString();
    });
    ex.stderr?.on("data", (d: Buffer) => {
      exampleOut += d.toString();
    });
    await waitFor(async () => {
      if (ex.exitCode !== null) throw new Error(`the example exited: ${exampleOut}`);
      return listening(ports.app);
    }, "the example app listening");
  }, STEP);

  afterAll(async () => {
    if (example && example.exitCode === null) {
      example.kill("SIGTERM");
      await once(example, "exit");
    }
    await platform?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const sign = (
    key: JwtKey,
    o: { audience?: string; issuer?: string; clock?: Clock; ttlSeconds?: number } = {},
  ): Promise<string> =>
    signJwt(
      key,
      { username: "alice", roles: ["access", "apps-dev"], traits: { logins: ["alice"] } },
      {
        subject: "alice",
        audience: o.audience ?? appUri(),
        issuer: o.issuer ?? proxyUrl,
        ttlSeconds: o.ttlSeconds ?? 120,
        clock: o.clock ?? systemClock,
        jti: `t-${Math.random()}`,
      },
    );

  it(
    "the example answers an assertion of the App CA (keys fetched from the proxy) and refuses every other",
    async () => {
      const appKey = cas.appJwtKeys[0] as JwtKey;
      const good = await httpGet(ports.app, "/", { "svc-jwt-assertion": await sign(appKey) });
      expect(good, exampleOut).toEqual({
        status: 200,
        body: JSON.stringify({ hello: "alice", roles: ["access", "apps-dev"] }),
      });

      const past: Clock = { now: () => new Date(Date.now() - 10 * 60_000) };
      const refused: Array<[string, Record<string, string>]> = [
        ["no header", {}],
        [
          "another app's audience",
          { "svc-jwt-assertion": await sign(appKey, { audience: "http://127.0.0.1:1" }) },
        ],
        ["another issuer", { "svc-jwt-assertion": await sign(appKey, { issuer: "https://evil.example" }) }],
        ["expired", { "svc-jwt-assertion": await sign(appKey, { clock: past }) }],
        // A JWT-SVID key's signature: the SPIFFE key set never verifies as the App CA's.
        ["the SPIFFE CA's key", { "svc-jwt-assertion": await sign(cas.spiffeJwtKeys[0] as JwtKey) }],
        ["garbage", { "svc-jwt-assertion": "e30.e30.AAAA" }],
      ];
      for (const [why, headers] of refused) {
        const r = await httpGet(ports.app, "/", headers);
        expect(r.status, why).toBe(401);
        expect(r.body, why).toBe("not through the proxy\n");
      }
    },
    STEP,
  );
});
