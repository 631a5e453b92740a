// Evaluation mode as the chart renders it, run for real: on the apiserver harness, the chart's
// RBAC, ConfigMap, first-admin User and preset Roles are applied as rendered with
// `database.mode=evaluation`; `svcd operator` runs with the Deployment's own arguments and
// `svcd auth` with the ConfigMap's own config (only addresses, the SQLite path and the kubeconfig
// a Pod would not need are changed), each as its chart ServiceAccount. Auth on SQLite becomes
// ready, writes the first admin's reset link, and a restart on the same file (the PVC case) keeps
// its state: the same link, not a new one; on a fresh file (the emptyDir case) it is gone.
import type { ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse, stringify } from "yaml";
import { find, type K8sObject, render } from "./chart-helm.ts";
import { applyChart, httpStatus, operatorArgs, Svcd, until } from "./chart-svcd.ts";
import { type KubeCluster, kubectl, startKube } from "./harness/kube.ts";
import { freePort } from "./harness/ports.ts";

const NS = "svc-system";

describe("evaluation mode, the chart's config run by svcd", () => {
  let kube: KubeCluster;
  let dir = "";
  let svcd: Svcd;
  let objects: K8sObject[] = [];
  const ports = { auth: 0, authDiag: 0, operatorDiag: 0 };
  let authConfigPath = "";
  let authAgain: ChildProcess | undefined;

  const admin = async (args: string[], stdin?: string) => {
    const r = await kubectl(kube.adminKubeconfig, args, stdin);
    if (r.code !== 0) throw new Error(r.stderr);
    return r.stdout;
  };

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
    svcd = new Svcd(dir);
    objects = await render(["--set", "database.mode=evaluation"], NS);
    await applyChart(kube, NS, objects);
    ports.auth = await freePort();
    ports.authDiag = await freePort();
    ports.operatorDiag = await freePort();
    svcd.launch("operator", [
      ...operatorArgs(objects, NS, ports.operatorDiag, ports.auth),
      `--kubeconfig=${await kube.serviceAccountKubeconfig(NS, "svc-operator")}`,
    ]);
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
    await svcd?.stopAll();
    await kube?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("the operator takes the chart's arguments and becomes ready (/readyz)", async () => {
    await svcd.ready("operator /readyz", ports.operatorDiag);
    expect(await httpStatus(ports.operatorDiag, "/healthz")).toBe(200);
  }, 150_000);

  it("auth on SQLite becomes ready and writes the first admin's reset link", async () => {
    const auth = svcd.launch("auth", ["auth", "--config", authConfigPath]);
    await svcd.ready("auth /readyz", ports.authDiag);
    const url = await until("the reset link", resetUrl, 60_000);
    expect(url).toMatch(/^https:\/\/svc\.example\.com(:443)?\/web\/reset\?token=/);
    await svcd.stop(auth);
  }, 200_000);

  it("restarted on the same SQLite file (a PVC), auth keeps its state: the same link", async () => {
    const before = await resetUrl();
    authAgain = svcd.launch("auth-again", ["auth", "--config", authConfigPath]);
    await svcd.ready("auth /readyz after the restart", ports.authDiag);
    // Auth checks the first admin at start and every 10 s: give it one round.
    await new Promise((r) => setTimeout(r, 11_000));
    expect(await resetUrl()).toBe(before);
    expect(svcd.logText()).not.toMatch(/token=[A-Za-z0-9_-]{20,}/);
  }, 200_000);

  it("on a fresh file (an emptyDir after the Pod went away) the state is gone: a new link", async () => {
    const before = await resetUrl();
    if (authAgain) await svcd.stop(authAgain);
    const config = parse(readFileSync(authConfigPath, "utf8"));
    config.backend.path = join(dir, "fresh.db");
    const fresh = join(dir, "auth-fresh.yaml");
    await writeFile(fresh, stringify(config));
    svcd.launch("auth-fresh", ["auth", "--config", fresh]);
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
