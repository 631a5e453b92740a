// Evaluation mode as the chart renders it, run for real: on the apiserver harness, the chart's
// RBAC, ConfigMap, first-admin User and preset Roles are applied as rendered with
// `database.mode=evaluation`; `svcd operator` runs with the Deployment's own arguments and
// `svcd auth` with the ConfigMap's own config (only addresses, the SQLite path and the kubeconfig
// a Pod would not need are changed), each as its chart ServiceAccount. Auth on SQLite becomes
// ready, writes the first admin's reset link, and a restart on the same file (the PVC case) keeps
// its state: the same link, not a new one; on a fresh file (the emptyDir case) it is gone.
import { type ChildProcess, spawn } from "node:child_process";
import { closeSync, openSync, readFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { get } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { V1Deployment } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse, stringify } from "yaml";
import { find, type K8sObject, render, root } from "./chart-helm.ts";
import { type KubeCluster, kubectl, startKube } from "./harness/kube.ts";
import { freePort } from "./harness/ports.ts";

const NS = "svc-system";

function status(port: number, path: string): Promise<number> {
  return new Promise((resolve) => {
    get({ host: "127.0.0.1", port, path, timeout: 2_000 }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    }).on("error", () => resolve(0));
  });
}

async function until<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

describe("evaluation mode, the chart's config run by svcd", () => {
  let kube: KubeCluster;
  let dir = "";
  let objects: K8sObject[] = [];
  const children: ChildProcess[] = [];
  const logs: string[] = [];
  const ports = { auth: 0, authDiag: 0, operatorDiag: 0 };
  let authConfigPath = "";
  let authAgain: ChildProcess | undefined;

  const admin = async (args: string[], stdin?: string) => {
    const r = await kubectl(kube.adminKubeconfig, args, stdin);
    if (r.code !== 0) throw new Error(r.stderr);
    return r.stdout;
  };

  function launch(name: string, args: string[]): ChildProcess {
    const log = join(dir, `${name}.log`);
    logs.push(log);
    const fd = openSync(log, "a");
    const child = spawn(join(root, "bin", "svcd"), args, { stdio: ["ignore", fd, fd] });
    closeSync(fd);
    children.push(child);
    return child;
  }

  async function stop(child: ChildProcess): Promise<void> {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once("exit", r));
    child.kill("SIGTERM");
    const t = setTimeout(() => child.kill("SIGKILL"), 10_000);
    await exited;
    clearTimeout(t);
  }

  const resetUrl = async () => {
    const b64 = await admin([
      "-n",
      NS,
      "get",
      "secret",
      "svc-first-admin",
      "-o",
      "jsonpath={.data.reset-url}",
    ]);
    return b64 ? Buffer.from(b64, "base64").toString() : undefined;
  };

  beforeAll(async () => {
    kube = await startKube();
    dir = await mkdtemp(join(tmpdir(), "svc-chart-eval-"));
    objects = await render(["--set", "database.mode=evaluation"], NS);
    await admin(["create", "namespace", NS]);
    await admin(["apply", "--server-side", "-f", join(root, "charts", "svc", "crds")]);
    await admin([
      "wait",
      "--for=condition=Established",
      "--timeout=120s",
      "crd",
      "-l",
      "app.kubernetes.io/part-of=svc",
    ]);
    // What the kubelet and controllers would run is played by processes; the rest is applied.
    const applied = objects.filter(
      (o) => !["Deployment", "Pod", "Service", "PodDisruptionBudget"].includes(o.kind),
    );
    await admin(["apply", "-f", "-"], applied.map((o) => stringify(o)).join("---\n"));
    ports.auth = await freePort();
    ports.authDiag = await freePort();
    ports.operatorDiag = await freePort();

    // The operator with the Deployment's arguments, as its ServiceAccount.
    const op = find<{ spec: NonNullable<V1Deployment["spec"]> }>(objects, "Deployment", "svc-operator");
    const args = (op.spec.template.spec?.containers[0]?.args ?? []).map((a) =>
      a
        .replace("$(POD_NAMESPACE)", NS)
        .replace("$(POD_NAME)", "svc-operator-0")
        .replace(/^--diagnostics-addr=.*/, `--diagnostics-addr=127.0.0.1:${ports.operatorDiag}`)
        .replace(/^--auth-addr=.*/, `--auth-addr=127.0.0.1:${ports.auth}`),
    );
    launch("operator", [...args, `--kubeconfig=${await kube.serviceAccountKubeconfig(NS, "svc-operator")}`]);

    // auth with the ConfigMap's config.
    const config = parse(find(objects, "ConfigMap", "svc-config").data?.["svc.yaml"] ?? "");
    expect(config.backend).toEqual({ type: "sqlite", path: "/var/lib/svc/state.db" });
    config.backend.path = join(dir, "state.db");
    config.auth.listen_addr = `127.0.0.1:${ports.auth}`;
    config.auth.diagnostics_addr = `127.0.0.1:${ports.authDiag}`;
    config.source.kubeconfig = await kube.serviceAccountKubeconfig(NS, "svc-auth");
    authConfigPath = join(dir, "auth.yaml");
    await writeFile(authConfigPath, stringify(config));
  }, 240_000);

  afterAll(async () => {
    await Promise.all(children.map((c) => stop(c)));
    await kube?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const logText = () => logs.map((l) => readFileSync(l, "utf8")).join("\n");

  it("the operator takes the chart's arguments and becomes ready (/readyz)", async () => {
    await until(
      "operator /readyz",
      async () => ((await status(ports.operatorDiag, "/readyz")) === 200 ? true : undefined),
      120_000,
    ).catch((err: Error) => {
      throw new Error(`${err.message}\n${logText()}`);
    });
    expect(await status(ports.operatorDiag, "/healthz")).toBe(200);
  }, 150_000);

  it("auth on SQLite becomes ready and writes the first admin's reset link", async () => {
    const auth = launch("auth", ["auth", "--config", authConfigPath]);
    await until(
      "auth /readyz",
      async () => ((await status(ports.authDiag, "/readyz")) === 200 ? true : undefined),
      120_000,
    ).catch((err: Error) => {
      throw new Error(`${err.message}\n${logText()}`);
    });
    const url = await until("the reset link", resetUrl, 60_000);
    expect(url).toMatch(/^https:\/\/svc\.example\.com(:443)?\/web\/reset\?token=/);
    await stop(auth);
  }, 200_000);

  it("restarted on the same SQLite file (a PVC), auth keeps its state: the same link", async () => {
    const before = await resetUrl();
    authAgain = launch("auth-again", ["auth", "--config", authConfigPath]);
    await until(
      "auth /readyz after the restart",
      async () => ((await status(ports.authDiag, "/readyz")) === 200 ? true : undefined),
      120_000,
    );
    // Auth checks the first admin at start and every 10 s: give it one round.
    await new Promise((r) => setTimeout(r, 11_000));
    expect(await resetUrl()).toBe(before);
    expect(logText()).not.toMatch(/token=[A-Za-z0-9_-]{20,}/);
  }, 200_000);

  it("on a fresh file (an emptyDir after the Pod went away) the state is gone: a new link", async () => {
    const before = await resetUrl();
    if (authAgain) await stop(authAgain);
    const config = parse(readFileSync(authConfigPath, "utf8"));
    config.backend.path = join(dir, "fresh.db");
    const fresh = join(dir, "auth-fresh.yaml");
    await writeFile(fresh, stringify(config));
    launch("auth-fresh", ["auth", "--config", fresh]);
    const after = await until(
      "a new reset link",
      async () => {
        const u = await resetUrl();
        return u && u !== before ? u : undefined;
      },
      60_000,
    );
    expect(after).toMatch(/\/web\/reset\?token=/);
  }, 200_000);
});
