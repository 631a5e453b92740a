// docs/apps.md as a user follows it, against a real `svcd start` (free ports, a fresh data folder):
// its ```sh commands run here (test/doc-commands.test.ts lists them as run by this file), and its
// JWT verification example runs as a real app: first against assertions signed here with the App
// CA's key from the data folder (and with the wrong key, audience, issuer, time), then behind the
// proxy, where the proxy signs for the signed-in user.
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { request } from "node:http";
import { request as httpsRequest } from "node:https";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { createLocalJWKSet, type JSONWebKeySet, jwtVerify } from "jose";
import * as pty from "node-pty";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify as stringifyYaml } from "yaml";
import { CertificateAuthorities } from "../core/ca/authorities.ts";
import { type JwtKey, signJwt } from "../core/ca/jwt.ts";
import { FileCaKeyStore } from "../core/ca/key-store.ts";
import { FileRotationStateStore } from "../core/ca/rotation-store.ts";
import type { Clock } from "../core/clock.ts";
import { systemClock } from "../core/clock.ts";
import { loadConfigFile } from "../server/config.ts";
import { docCommands, root } from "./chart-helm.ts";
import { type Daemon, spawnDaemon, waitFor } from "./cli-fixture.ts";
import { type Httpbin, startHttpbin } from "./harness/httpbin.ts";
import { type KubeCluster, kubectl, startKube } from "./harness/kube.ts";
import { freePort } from "./harness/ports.ts";

const execFileP = promisify(execFile);
const STEP = 90_000;
const GUIDE = "apps.md";
const PASSWORD = "apps-docs-password-1";

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

/** An HTTPS GET to the proxy at 127.0.0.1:`port` for `host` (TLS name and Host), trusting `ca`. */
function appGet(port: number, host: string, path: string, ca: string, headers: Record<string, string>) {
  return new Promise<{ status: number; headers: Record<string, unknown>; body: string }>(
    (resolve, reject) => {
      const req = httpsRequest(
        {
          host: "127.0.0.1",
          port,
          path,
          ca,
          servername: host,
          headers: { host: `${host}:${port}`, ...headers },
        },
        (res) => {
          let body = "";
          res.setEncoding("utf8");
          res.on("data", (d: string) => {
            body += d;
          });
          res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
        },
      );
      req.on("error", reject);
      req.end();
    },
  );
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
  let ports: { auth: number; proxy: number; diag: number; example: number };
  let platform: Daemon | undefined;
  let httpbin: Httpbin | undefined;
  let example: ChildProcess | undefined;
  let exampleOut = "";
  let cas: CertificateAuthorities;
  let hostCa = "";
  /** The proxy's public URL: the issuer of every assertion. */
  let proxyUrl = "";
  /** The embedded default's: app hosts are `<app>.localhost`, each with its own certificate. */
  const publicHost = "localhost";
  /** The example runs as a second App, "verifier", at this URI (its audience). */
  const exampleUri = () => `http://127.0.0.1:${ports.example}`;
  const dataDir = () => join(dir, "data");

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
      const r = await execFileP("bash", ["-euo", "pipefail", "-c", text], { cwd: dir, env, timeout: 50_000 });
      return r.stdout;
    } catch (err) {
      const e = err as { stdout?: string; stderr?: string };
      throw new Error(`${text}\nfailed: ${e.stderr ?? ""}${e.stdout ?? ""}`);
    }
  };
  const startPlatform = async (extra: NodeJS.ProcessEnv): Promise<Daemon> => {
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
      { SVC_DATA_DIR: dataDir(), ...extra },
    );
    await waitFor(() => d.output().includes("svc is running") || d.child.exitCode !== null, "svcd start");
    expect(d.child.exitCode, d.output()).toBeNull();
    return d;
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
      example: await freePort(),
    };
    env = { ...process.env, SVC_HOME: join(dir, "home"), SVC_AUTH_ADDR: `127.0.0.1:${ports.auth}` };
    for (const k of ["SVC_DATA_DIR", "SVC_ADMIN_PASSWORD_FILE", "NODE_EXTRA_CA_CERTS"]) delete env[k];
    await writeFile(join(dir, "admin-password"), `${PASSWORD}\n`, { mode: 0o600 });
    httpbin = await startHttpbin();

    // The first start makes the data folder with the default public address; only its port is
    // this run's (the guide needs nothing changed), then the restart.
    await (await startPlatform({ SVC_ADMIN_PASSWORD_FILE: join(dir, "admin-password") })).stop();
    const configFile = join(dataDir(), "svc.yaml");
    const written = await readFile(configFile, "utf8");
    expect(written).toContain(`public_addr: ${publicHost}:3080`);
    await writeFile(configFile, written.replaceAll(`${publicHost}:3080`, `${publicHost}:${ports.proxy}`));
    platform = await startPlatform({});
    hostCa = await readFile(join(dataDir(), "host-ca.pem"), "utf8");
    proxyUrl = `https://${publicHost}:${ports.proxy}`;

    // The App CA as the data folder holds it (read only: every CA exists after the first start).
    const loaded = await loadConfigFile(configFile);
    const caDir = join(dataDir(), "ca");
    cas = await CertificateAuthorities.loadOrCreate(new FileCaKeyStore(caDir), {
      clusterName: loaded.cluster_name,
      trustDomain: loaded.cluster_name,
      clock: systemClock,
      rotationStore: new FileRotationStateStore(caDir),
    });

    // The guide's command that starts the example, as written but for the ports; it runs from the
    // folder the guide's paths are relative to (data/host-ca.pem).
    await writeFile(join(dir, "verify-assertion.mjs"), jsExample(guide));
    const start = command("NODE_EXTRA_CA_CERTS=", [
      ["3080", String(ports.proxy)],
      ["http://127.0.0.1:3000", exampleUri()],
    ]);
    example = spawn("bash", ["-c", `exec env PORT=${ports.example} ${start.replaceAll("\\\n", " ")}`], {
      cwd: dir,
      env,
      stdio: "pipe",
    });
    const ex = example;
    ex.stdout?.on("data", (d: Buffer) => {
      exampleOut += d.toString();
    });
    ex.stderr?.on("data", (d: Buffer) => {
      exampleOut += d.toString();
    });
    await waitFor(async () => {
      if (ex.exitCode !== null) throw new Error(`the example exited: ${exampleOut}`);
      return listening(ports.example);
    }, "the example app listening");
  }, 3 * STEP);

  afterAll(async () => {
    if (example && example.exitCode === null) {
      example.kill("SIGTERM");
      await once(example, "exit");
    }
    await platform?.stop();
    await httpbin?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const sign = (
    key: JwtKey,
    o: { audience?: string; issuer?: string; clock?: Clock } = {},
  ): Promise<string> =>
    signJwt(
      key,
      { username: "alice", roles: ["access", "apps-dev"], traits: { logins: ["alice"] } },
      {
        subject: "alice",
        audience: o.audience ?? exampleUri(),
        issuer: o.issuer ?? proxyUrl,
        ttlSeconds: 120,
        clock: o.clock ?? systemClock,
        jti: `t-${Math.random()}`,
      },
    );

  it(
    "the example answers an assertion of the App CA (keys fetched from the proxy) and refuses every other",
    async () => {
      const appKey = cas.appJwtKeys[0] as JwtKey;
      const good = await httpGet(ports.example, "/", { "svc-jwt-assertion": await sign(appKey) });
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
        const r = await httpGet(ports.example, "/", headers);
        expect(r.status, why).toBe(401);
        expect(r.body, why).toBe("not through the proxy\n");
      }
    },
    STEP,
  );

  it(
    "the guide's manifest, svc login, svc apps ls / login / config / logout, through the proxy to go-httpbin",
    async () => {
      const port = String(ports.proxy);
      // The manifest as written, pointing at this run's go-httpbin; the example as a second App.
      await sh(command("cat > data/manifests/grafana.yaml", [["http://127.0.0.1:3000", httpbin?.url ?? ""]]));
      await writeFile(
        join(dataDir(), "manifests", "verifier.yaml"),
        stringifyYaml({
          apiVersion: "svc.dev/v1",
          kind: "App",
          metadata: { name: "verifier" },
          spec: { uri: exampleUri() },
        }),
      );

      // svc login as written, on a terminal: it asks the password.
      const login = command("bin/svc login", [["3080", port]]);
      const term = pty.spawn("bash", ["-c", login], {
        cwd: dir,
        env: env as Record<string, string>,
        cols: 120,
        rows: 30,
      });
      let screen = "";
      let typed = false;
      const code = await new Promise<number>((resolve) => {
        term.onData((d) => {
          screen += d;
          if (!typed && screen.includes("Password for admin")) {
            typed = true;
            term.write(`${PASSWORD}\r`);
          }
        });
        term.onExit((e) => resolve(e.exitCode));
      });
      expect(code, screen).toBe(0);
      expect(screen).toMatch(/as admin/);

      // The folder source reads the manifests at once; the proxy's copy follows.
      let listing = "";
      await waitFor(async () => {
        listing = await sh(command("bin/svc apps ls"));
        return listing.includes("grafana") && listing.includes("verifier");
      }, "grafana in svc apps ls");
      expect(listing).toContain(`https://grafana.${publicHost}:${port}/`);
      expect(await sh(command("bin/svc apps login grafana"))).toContain("Logged in to grafana");
      // The curl command the CLI prints reaches go-httpbin's start page through the proxy.
      expect(await sh(command('eval "$(bin/svc apps config grafana --format curl)"'))).toContain(
        "go-httpbin",
      );

      // The guide's curl on the app host itself: curl resolves *.localhost and verifies the
      // certificate the proxy issued for exactly that name against the host CA.
      const viaCurl = await sh(command("curl --cacert data/host-ca.pem", [["3080", port]]));
      expect(JSON.parse(viaCurl)).toMatchObject({ headers: { "Svc-Jwt-Assertion": [expect.any(String)] } });

      // What the app receives (go-httpbin echoes it): the assertion (the client's own dropped), the
      // forwarding headers, the app's cookies without the proxy's.
      const cookie = (await sh("bin/svc apps config grafana --format cookie")).trim();
      const grafana = `grafana.${publicHost}`;
      const echoed = await appGet(ports.proxy, grafana, "/headers", hostCa, {
        cookie: `${cookie}; theme=dark`,
        "svc-jwt-assertion": "forged",
      });
      expect(echoed.status, echoed.body).toBe(200);
      const headers = (JSON.parse(echoed.body) as { headers: Record<string, string[]> }).headers;
      const assertion = headers["Svc-Jwt-Assertion"] ?? [];
      expect(assertion).toHaveLength(1);
      expect(headers["Cookie"]).toEqual(["theme=dark"]);
      expect(headers["X-Forwarded-Host"]?.[0]).toMatch(new RegExp(`^${grafana.replaceAll(".", "\\.")}`));
      // The claims the guide lists, verified with the keys the proxy publishes.
      const served = await appGet(
        ports.proxy,
        publicHost,
        "/workload-identity/app-jwt-jwks.json",
        hostCa,
        {},
      );
      const { payload, protectedHeader } = await jwtVerify(
        assertion[0] ?? "",
        createLocalJWKSet(JSON.parse(served.body) as JSONWebKeySet),
        { issuer: proxyUrl, audience: httpbin?.url ?? "", algorithms: ["ES256"] },
      );
      expect(protectedHeader.kid).toBe(cas.appJwtKeys[0]?.kid);
      expect(payload).toMatchObject({
        sub: "admin",
        username: "admin",
        roles: expect.arrayContaining(["admin"]),
      });
      expect(typeof payload.jti).toBe("string");
      expect((payload.exp ?? 0) - (payload.iat ?? 0)).toBeLessThanOrEqual(120);

      // The guide's verifier behind the proxy: the proxy's assertion names the signed-in user.
      await sh("bin/svc apps login verifier");
      const verifierCookie = (await sh("bin/svc apps config verifier --format cookie")).trim();
      const hello = await appGet(ports.proxy, `verifier.${publicHost}`, "/", hostCa, {
        cookie: verifierCookie,
      });
      expect(hello.status, `${hello.body} ${exampleOut}`).toBe(200);
      expect(JSON.parse(hello.body)).toMatchObject({ hello: "admin" });
      // Without the cookie the proxy sends a browser to the launch page on the main host.
      const bare = await appGet(ports.proxy, grafana, "/headers", hostCa, {});
      expect(bare.status).toBe(302);
      expect(String(bare.headers["location"])).toContain(
        `https://${publicHost}:${port}/web/launch/${grafana}`,
      );

      // Logout ends both sessions at auth: the cookies no longer open the app.
      expect(await sh(command("bin/svc apps logout"))).toMatch(/Ended 2 app sessions/);
      await waitFor(
        async () => {
          const after = await appGet(ports.proxy, grafana, "/headers", hostCa, { cookie });
          return after.status === 302;
        },
        "the ended app session refused (within the 30 s re-check)",
        45_000,
      );

      // Signing out of the web session ends its app sessions on the proxy at once (the guide's
      // first revocation row): the session stream tells it, no 30 s re-check is waited for.
      await sh("bin/svc apps login grafana");
      const again = (await sh("bin/svc apps config grafana --format cookie")).trim();
      expect((await appGet(ports.proxy, grafana, "/headers", hostCa, { cookie: again })).status).toBe(200);
      await sh("bin/svc logout");
      await waitFor(
        async () =>
          (await appGet(ports.proxy, grafana, "/headers", hostCa, { cookie: again })).status === 302,
        "the app session refused after the web logout, well before a 30 s re-check",
        5_000,
      );
    },
    2 * STEP,
  );
});

describe("docs/apps.md: the manifest as custom resources", () => {
  let kube: KubeCluster | undefined;
  let dir = "";

  beforeAll(async () => {
    kube = await startKube();
    dir = await mkdtemp(join(tmpdir(), "svc-apps-docs-kube-"));
  }, 4 * STEP);

  afterAll(async () => {
    await kube?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it(
    "kubectl apply of the guide's App and Role: the CRDs accept them as written",
    async () => {
      const k = kube as KubeCluster;
      const guide = await readFile(join(root, "docs", GUIDE), "utf8");
      const commands = docCommands(guide);
      // "the same manifest": the folder command's here-document, saved as the file kubectl reads.
      const folder = commands.find((c) => c.text.startsWith("cat > data/manifests/grafana.yaml"))?.text ?? "";
      const manifest = /<<'EOF'\n([\s\S]*)\nEOF$/.exec(folder)?.[1];
      expect(manifest, folder).toBeDefined();
      await writeFile(join(dir, "grafana.yaml"), `${manifest}\n`);
      for (const args of [
        ["apply", "--server-side", "-f", join(root, "charts", "svc", "crds")],
        ["wait", "--for=condition=Established", "crd/apps.svc.dev", "crd/roles.svc.dev"],
        ["create", "namespace", "svc-system"],
      ]) {
        const r = await kubectl(k.adminKubeconfig, args);
        expect(r.code, r.stderr).toBe(0);
      }
      const apply = commands.find((c) => c.text.startsWith("kubectl -n svc-system apply"))?.text ?? "";
      expect(apply).toBe("kubectl -n svc-system apply -f grafana.yaml");
      const out = await execFileP("bash", ["-euo", "pipefail", "-c", apply], {
        cwd: dir,
        env: { ...process.env, KUBECONFIG: k.adminKubeconfig },
        timeout: 60_000,
      });
      expect(out.stdout).toMatch(/app\.svc\.dev\/grafana created/);
      expect(out.stdout).toMatch(/role\.svc\.dev\/apps-dev created/);
      const app = await kubectl(k.adminKubeconfig, [
        "-n",
        "svc-system",
        "get",
        "app",
        "grafana",
        "-o",
        "json",
      ]);
      expect(JSON.parse(app.stdout)).toMatchObject({
        metadata: { labels: { env: "dev" } },
        spec: { uri: "http://127.0.0.1:3000", description: "Dashboards" },
      });
      // The guide's first example, every field, is valid too (its CEL rules included).
      const full = [...guide.matchAll(/^```yaml\n([\s\S]*?)^```$/gm)].map((m) => m[1] ?? "")[0] ?? "";
      expect(full).toContain("kind: App");
      const replaced = await kubectl(k.adminKubeconfig, ["-n", "svc-system", "apply", "-f", "-"], full);
      expect(replaced.code, replaced.stderr).toBe(0);
      const rewritten = await kubectl(k.adminKubeconfig, [
        "-n",
        "svc-system",
        "get",
        "app",
        "grafana",
        "-o",
        "json",
      ]);
      expect(JSON.parse(rewritten.stdout)).toMatchObject({
        spec: { rewrite: { headers: [{ name: "X-Grafana-User", value: "{{user}}" }, { name: "X-Team" }] } },
      });
      const role = await kubectl(k.adminKubeconfig, [
        "-n",
        "svc-system",
        "get",
        "role.svc.dev",
        "apps-dev",
        "-o",
        "json",
      ]);
      expect(JSON.parse(role.stdout)).toMatchObject({
        spec: { allow: { app_labels: { env: "dev" } }, deny: { app_labels: { team: "payments" } } },
      });
    },
    STEP,
  );
});
