// The first admin in Kubernetes mode, end to end on a real apiserver and PostgreSQL: two `svcd auth`
// processes with `auth.first_admin` start together and write ONE reset token into ONE Secret (as
// auth's ServiceAccount, bound by the chart's RBAC); an expired link is replaced by a new one; the
// installer opens the link's token with `svc login --reset-token` through the proxy, sets the
// password and logs in; the Secret is then deleted; the token is in no log. The admin then runs
// `svcctl users add`, whose User carries app.kubernetes.io/managed-by=svcctl. The admin Role exists
// only as a preset (source.preset_roles, default true): no Role object is applied. Eight keepers
// racing in one process on the same PostgreSQL still issue one token. Last, auth's and a proxy's
// /readyz follow their informers while a relay cuts them off from the apiserver (stale_after 2s).
import { type ChildProcess, exec, spawn } from "node:child_process";
import { closeSync, openSync, readFileSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { CoreV1Api } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse, stringify } from "yaml";
import { openBackend } from "../core/backend/index.ts";
import { systemClock } from "../core/clock.ts";
import { loadKubeConfig } from "../core/sources/kube-api.ts";
import { MemorySource } from "../core/sources/memory.ts";
import { FirstAdminSecret } from "../server/auth/first-admin.ts";
import { json, run } from "./cli-fixture.ts";
import { kubectl } from "./harness/kube.ts";
import { freePort } from "./harness/ports.ts";
import { startTcpGate, type TcpGate } from "./harness/tcp-gate.ts";
import { type E2ePlatform, eventually, NS, startE2ePlatform, tcpOpen, userYaml } from "./k8s-e2e-fixture.ts";
import { capturingLogger } from "./operator-fixture.ts";

const SECRET = "svc-first-admin";
const sh = promisify(exec);
const root = join(import.meta.dirname, "..");

interface AuthProc {
  child: ChildProcess;
  log: string;
  port: number;
  diag: number;
  exited: Promise<number | null>;
}

describe("Kubernetes mode: the first admin's one-time reset link in a Secret", () => {
  let p: E2ePlatform;
  const auths: AuthProc[] = [];
  let gate: TcpGate | undefined;
  let gated: AuthProc | undefined;
  const readSecret = async (): Promise<Record<string, string> | undefined> => {
    const api = loadKubeConfig(p.kube.adminKubeconfig).makeApiClient(CoreV1Api);
    try {
      const s = await api.readNamespacedSecret({ name: SECRET, namespace: NS });
      return Object.fromEntries(
        Object.entries(s.data ?? {}).map(([k, v]) => [k, Buffer.from(v, "base64").toString("utf8")]),
      );
    } catch {
      return undefined;
    }
  };
  const logs = () => auths.map((a) => readFileSync(a.log, "utf8")).join("\n");

  async function launchAuth(i: number): Promise<AuthProc> {
    const port = await freePort();
    const diag = await freePort();
    const config = parse(await readFile(p.authConfig, "utf8")) as {
      auth: Record<string, unknown>;
      source: Record<string, unknown>;
    };
    // Short, so cutting the apiserver off below shows in readiness.
    config.source["stale_after"] = "2s";
    // The first one reaches the apiserver through a relay the last test cuts.
    if (i === 1 && gate)
      config.source["kubeconfig"] = gate.kubeconfigThrough(String(config.source["kubeconfig"]));
    config.auth["listen_addr"] = `127.0.0.1:${port}`;
    config.auth["diagnostics_addr"] = `127.0.0.1:${diag}`;
    config.auth["first_admin"] = { user: "root", secret_name: SECRET };
    const file = join(p.dir, `auth-first-admin-${i}.yaml`);
    await writeFile(file, stringify(config));
    const log = join(p.dir, `auth-first-admin-${i}.log`);
    const fd = openSync(log, "a");
    const child = spawn(join(root, "bin", "svcd"), ["auth", "--config", file], {
      stdio: ["ignore", fd, fd],
      env: { ...process.env, SVC_LOG_LEVEL: "info", POD_NAME: `auth-${i}` },
    });
    closeSync(fd);
    const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
    const a = { child, log, port, diag, exited };
    auths.push(a);
    if (i === 1) gated = a;
    return a;
  }

  /** A second proxy, through the relay, with stale_after 2s (its readiness is checked last). */
  async function launchGatedProxy(): Promise<AuthProc> {
    const port = await freePort();
    const diag = await freePort();
    const config = parse(await readFile(p.proxyConfig, "utf8")) as {
      proxy: Record<string, unknown>;
      source: Record<string, unknown>;
    };
    config.source["stale_after"] = "2s";
    if (gate) config.source["kubeconfig"] = gate.kubeconfigThrough(String(config.source["kubeconfig"]));
    config.proxy["listen_addr"] = `127.0.0.1:${port}`;
    config.proxy["diagnostics_addr"] = `127.0.0.1:${diag}`;
    const file = join(p.dir, "proxy-gated.yaml");
    await writeFile(file, stringify(config));
    const log = join(p.dir, "proxy-gated.log");
    const fd = openSync(log, "a");
    const child = spawn(join(root, "bin", "svcd"), ["proxy", "--config", file], {
      stdio: ["ignore", fd, fd],
      env: { ...process.env, SVC_LOG_LEVEL: "info" },
    });
    closeSync(fd);
    const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
    const a = { child, log, port, diag, exited };
    auths.push(a);
    return a;
  }

  beforeAll(async () => {
    p = await startE2ePlatform();
    gate = await startTcpGate(Number(new URL(p.kube.url).port));
    await p.applyCrds();
    p.startOperator();
    // The proxy identity Secret comes from the fixture's own auth; the two below add first_admin.
    p.startAuth();
    await eventually(
      "fixture auth ready",
      async () => ((await p.diag(p.ports.authDiag, "/readyz")) === 200 ? true : undefined),
      180_000,
    );
    const r = await kubectl(p.kube.adminKubeconfig, ["apply", "-f", "-"], userYaml("root", ["admin"]));
    if (r.code !== 0) throw new Error(r.stderr);
  }, 600_000);

  afterAll(async () => {
    for (const a of auths) if (a.child.exitCode === null) a.child.kill("SIGTERM");
    await Promise.all(auths.map((a) => a.exited));
    await gate?.close();
    await p?.stop();
  }, 120_000);

  it("two auth replicas starting together write one token into one Secret", async () => {
    const t0 = Date.now();
    const [a, b] = await Promise.all([launchAuth(1), launchAuth(2)]);
    const secret = await eventually("first admin Secret", readSecret, 180_000);
    console.log(`first admin Secret written ${Date.now() - t0} ms after two auth processes started`);
    expect(Object.keys(secret).sort()).toEqual(["expires", "reset-url", "user"]);
    expect(secret["user"]).toBe("root");
    expect(secret["reset-url"]).toMatch(
      new RegExp(`^https://localhost:${p.ports.proxy}/web/reset\\?token=[A-Za-z0-9_-]{43}$`),
    );
    expect(Date.parse(secret["expires"] ?? "") - Date.now()).toBeGreaterThan(23 * 3600_000);
    for (const x of [a, b])
      await eventually("auth ready", async () =>
        (await p.diag(x?.diag ?? 0, "/readyz")) === 200 ? true : undefined,
      );
    // Both replicas look again every 10 s: still one link, one token.
    await new Promise((r) => setTimeout(r, 12_000));
    expect((await readSecret())?.["reset-url"]).toBe(secret["reset-url"]);
    const backend = await openBackend(
      { type: "postgres", connectionString: p.pgUrl, schema: p.schema },
      { clock: systemClock },
    );
    try {
      expect(await backend.range("password-resets/")).toHaveLength(1);
    } finally {
      await backend.close();
    }
    expect(logs().match(/reset link written to the Secret/g)).toHaveLength(1);
    const token = new URL(secret["reset-url"] ?? "").searchParams.get("token") ?? "";
    expect(logs()).not.toContain(token);
    // What docs/kubernetes-mode.md tells the installer to type.
    const { stdout: shown } = await sh(
      `kubectl --kubeconfig=${p.kube.adminKubeconfig} -n ${NS} get secret ${SECRET} -o jsonpath='{.data.reset-url}' | base64 -d`,
    );
    expect(shown).toBe(secret["reset-url"]);
  }, 300_000);

  it("a link that expired unused is replaced; the new token sets the password; the Secret goes", async () => {
    const before = (await readSecret())?.["reset-url"] ?? "";
    // Age the link: the record auth keeps of it says it expired (the token itself still would work).
    const backend = await openBackend(
      { type: "postgres", connectionString: p.pgUrl, schema: p.schema },
      { clock: systemClock },
    );
    try {
      await backend.put("first-admin/root", {
        phase: "written",
        expires: new Date(Date.now() - 1000).toISOString(),
      });
    } finally {
      await backend.close();
    }
    const fresh = await eventually(
      "a new link",
      async () => {
        const s = await readSecret();
        return s && s["reset-url"] !== before ? s : undefined;
      },
      60_000,
    );
    const oldToken = new URL(before).searchParams.get("token") ?? "";
    const token = new URL(fresh["reset-url"] ?? "").searchParams.get("token") ?? "";
    expect(token).not.toBe(oldToken);

    p.startProxy();
    p.startMounting();
    await eventually(
      "proxy ready",
      async () => ((await p.diag(p.ports.proxyDiag, "/readyz")) === 200 ? true : undefined),
      120_000,
    );
    const caFile = join(p.dir, "host-ca.pem");
    await writeFile(caFile, await p.hostCaPem());
    const pw = join(p.dir, "root-pw");
    await writeFile(pw, "first-admin-password-1\n");
    const env = { SVC_HOME: join(p.dir, "root-home") };
    const proxy = `localhost:${p.ports.proxy}`;
    const loginWith = (t: string) =>
      run(
        "svc",
        ["login", "--proxy", proxy, "--ca", caFile, "--reset-token", t, "--password-file", pw, "--json"],
        { env },
      );
    // The replaced token no longer works; the one in the Secret does.
    const stale = await loginWith(oldToken);
    expect(stale.code).toBe(3);
    const login = await loginWith(token);
    expect(login.code, login.stderr).toBe(0);
    expect(json(login)).toMatchObject({ user: "root" });
    const plain = await run("svc", ["login", "--user", "root", "--password-file", pw], { env });
    expect(plain.code, plain.stderr).toBe(0);

    await eventually(
      "Secret deleted once root has a password",
      async () => ((await readSecret()) ? undefined : true),
      60_000,
    );
    expect(logs()).not.toContain(token);

    // svcctl as the first admin: what it writes carries the managed-by label.
    const authAddr = `127.0.0.1:${auths[0]?.port}`;
    await eventually("auth allows root as admin", async () => {
      const r = await run("svcctl", ["--auth", authAddr, "users", "ls", "--json"], { env });
      return r.code === 0 ? true : undefined;
    });
    const add = await run("svcctl", ["--auth", authAddr, "users", "add", "alice", "--roles", "access"], {
      env,
    });
    expect(add.code, add.stderr).toBe(0);
    const label = await kubectl(p.kube.adminKubeconfig, [
      "-n",
      NS,
      "get",
      "users.svc.dev/alice",
      "-o",
      "jsonpath={.metadata.labels.app\\.kubernetes\\.io/managed-by}",
    ]);
    expect(label.stdout).toBe("svcctl");
    const tok = await run("svcctl", ["--auth", authAddr, "tokens", "add", "--json"], { env });
    expect(tok.code, tok.stderr).toBe(0);
    const tokens = await kubectl(p.kube.adminKubeconfig, [
      "-n",
      NS,
      "get",
      "jointokens.svc.dev",
      "-l",
      "app.kubernetes.io/managed-by=svcctl",
      "-o",
      "name",
    ]);
    expect(tokens.stdout.trim().split("\n").filter(Boolean).length).toBeGreaterThanOrEqual(1);
    expect(await tcpOpen(p.ports.proxy)).toBe(true);
  }, 300_000);

  it("eight keepers racing on one PostgreSQL and apiserver issue one token and write one Secret", async () => {
    const backend = await openBackend(
      { type: "postgres", connectionString: p.pgUrl, schema: p.schema },
      { clock: systemClock },
    );
    const lines: string[] = [];
    try {
      const source = new MemorySource([
        { apiVersion: "svc.dev/v1", kind: "User", metadata: { name: "racer" }, spec: { roles: ["access"] } },
      ]);
      const keepers = Array.from(
        { length: 8 },
        (_, i) =>
          new FirstAdminSecret({
            kubeConfig: loadKubeConfig(p.kube.adminKubeconfig),
            namespace: NS,
            secretName: "race-first-admin",
            user: "racer",
            publicAddr: "svc.example.com:443",
            backend,
            source,
            clock: systemClock,
            logger: capturingLogger(lines),
            instance: `keeper-${i}`,
          }),
      );
      await Promise.all(keepers.map((k) => k.check()));
      await Promise.all(keepers.map((k) => k.check()));
      const tokens = (await backend.range("password-resets/")).filter(
        (i) => (i.value as { username?: string }).username === "racer",
      );
      expect(tokens).toHaveLength(1);
      expect(lines.filter((l) => l.includes("reset link written"))).toHaveLength(1);
      const api = loadKubeConfig(p.kube.adminKubeconfig).makeApiClient(CoreV1Api);
      const secret = await api.readNamespacedSecret({ name: "race-first-admin", namespace: NS });
      expect(Buffer.from(secret.data?.["user"] ?? "", "base64").toString()).toBe("racer");
      expect(secret.metadata?.labels?.["svc.dev/first-admin"]).toBe("true");
      await api.deleteNamespacedSecret({ name: "race-first-admin", namespace: NS });
    } finally {
      await backend.close();
    }
  }, 120_000);

  it("auth's and proxy's /readyz are 503 while their informers are stale (apiserver cut off) and 200 after", async () => {
    const a = gated;
    if (!a) throw new Error("no auth");
    const proxy = await launchGatedProxy();
    await eventually(
      "gated proxy ready",
      async () => ((await p.diag(proxy.diag, "/readyz")) === 200 ? true : undefined),
      120_000,
    );
    expect(await p.diag(a.diag, "/readyz")).toBe(200);
    const cutAt = Date.now();
    gate?.mode("cut");
    const notReady = async (d: AuthProc) => {
      await eventually(
        "not ready",
        async () => ((await p.diag(d.diag, "/readyz")) === 503 ? true : undefined),
        60_000,
      );
      return Date.now() - cutAt;
    };
    const [authMs, proxyMs] = await Promise.all([notReady(a), notReady(proxy)]);
    for (const d of [a, proxy]) {
      const stale = await (await fetch(`http://127.0.0.1:${d.diag}/metrics`)).text();
      expect(stale).toMatch(/svc_source_stale_seconds\{[^}]*kind="User"[^}]*\} [1-9]/);
      expect(await p.diag(d.diag, "/healthz")).toBe(200);
    }
    gate?.mode("open");
    for (const d of [a, proxy]) {
      await eventually(
        "ready again",
        async () => ((await p.diag(d.diag, "/readyz")) === 200 ? true : undefined),
        120_000,
      );
      const metrics = await (await fetch(`http://127.0.0.1:${d.diag}/metrics`)).text();
      expect(metrics).toMatch(/svc_source_stale_seconds\{[^}]*kind="User"[^}]*\} 0/);
    }
    console.log(
      `/readyz 503 after the apiserver was cut off (stale_after 2s): auth ${authMs} ms, proxy ${proxyMs} ms`,
    );
  }, 240_000);
});
