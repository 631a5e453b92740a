// Runs svcd the way the chart's Pods would, for the chart tests on the apiserver harness: the
// chart's rendered objects applied (all but what a kubelet or controller would run), the
// operator with its Deployment's arguments and auth/proxy with the ConfigMap's config, as the
// chart's ServiceAccounts. Only listen addresses, file paths and the kubeconfig (which a Pod gets
// from its ServiceAccount) are changed.
import { type ChildProcess, spawn } from "node:child_process";
import { closeSync, openSync, readFileSync } from "node:fs";
import { get } from "node:http";
import { join } from "node:path";
import type { V1Deployment } from "@kubernetes/client-node";
import { stringify } from "yaml";
import { find, type K8sObject, root } from "./chart-helm.ts";
import { type KubeCluster, kubectl } from "./harness/kube.ts";

/** GET http://127.0.0.1:<port><path>; 0 when nothing answers. */
export function httpStatus(port: number, path: string): Promise<number> {
  return new Promise((resolve) => {
    get({ host: "127.0.0.1", port, path, timeout: 2_000 }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    }).on("error", () => resolve(0));
  });
}

/** Polls fn until it returns a value (errors count as "not yet"). */
export async function until<T>(
  what: string,
  fn: () => Promise<T | undefined>,
  timeoutMs: number,
): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** svcd processes with their output in log files under `dir`. */
export class Svcd {
  readonly #dir: string;
  readonly #children: ChildProcess[] = [];
  readonly #logs: string[] = [];

  constructor(dir: string) {
    this.#dir = dir;
  }

  launch(name: string, args: string[]): ChildProcess {
    const log = join(this.#dir, `${name}.log`);
    this.#logs.push(log);
    const fd = openSync(log, "a");
    const child = spawn(join(root, "bin", "svcd"), args, { stdio: ["ignore", fd, fd] });
    closeSync(fd);
    this.#children.push(child);
    return child;
  }

  async stop(child: ChildProcess): Promise<void> {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once("exit", r));
    child.kill("SIGTERM");
    const t = setTimeout(() => child.kill("SIGKILL"), 10_000);
    await exited;
    clearTimeout(t);
  }

  async stopAll(): Promise<void> {
    await Promise.all(this.#children.map((c) => this.stop(c)));
  }

  logText(): string {
    return this.#logs.map((l) => readFileSync(l, "utf8")).join("\n");
  }

  /** Waits for 200 from a diagnostics endpoint; the error carries every log. */
  async ready(what: string, port: number, timeoutMs = 120_000): Promise<void> {
    await until(
      what,
      async () => ((await httpStatus(port, "/readyz")) === 200 ? true : undefined),
      timeoutMs,
    ).catch((err: Error) => {
      throw new Error(`${err.message}\n${this.logText()}`);
    });
  }
}

/** CRDs, the namespace, and every rendered object no kubelet or controller is needed for. */
export async function applyChart(kube: KubeCluster, ns: string, objects: K8sObject[]): Promise<void> {
  const admin = async (args: string[], stdin?: string) => {
    const r = await kubectl(kube.adminKubeconfig, args, stdin);
    if (r.code !== 0) throw new Error(r.stderr);
  };
  await admin(["create", "namespace", ns]);
  await admin(["apply", "--server-side", "-f", join(root, "charts", "svc", "crds")]);
  await admin([
    "wait",
    "--for=condition=Established",
    "--timeout=120s",
    "crd",
    "-l",
    "app.kubernetes.io/part-of=svc",
  ]);
  const applied = objects.filter(
    (o) => !["Deployment", "Pod", "Service", "PodDisruptionBudget"].includes(o.kind),
  );
  await admin(["apply", "-f", "-"], applied.map((o) => stringify(o)).join("---\n"));
}

/** The operator Deployment's arguments, with the Pod's variables and local addresses filled in. */
export function operatorArgs(objects: K8sObject[], ns: string, diagPort: number, authPort: number): string[] {
  const op = find<{ spec: NonNullable<V1Deployment["spec"]> }>(objects, "Deployment", "svc-operator");
  return (op.spec.template.spec?.containers[0]?.args ?? []).map((a) =>
    a
      .replace("$(POD_NAMESPACE)", ns)
      .replace("$(POD_NAME)", "svc-operator-0")
      .replace(/^--diagnostics-addr=.*/, `--diagnostics-addr=127.0.0.1:${diagPort}`)
      .replace(/^--auth-addr=.*/, `--auth-addr=127.0.0.1:${authPort}`),
  );
}
