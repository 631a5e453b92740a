// Shared setup for the operator tests: a real kube-apiserver (or $KUBECONFIG's cluster under
// `make e2e-kind`), the CRDs and the operator's RBAC applied as admin, helpers around kubectl.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Writable } from "node:stream";
import { type Logger, pino } from "pino";
import { type KubeCluster, type KubectlResult, kubectl, startKube } from "./harness/kube.ts";

export const NS = "svc-system";
const root = join(import.meta.dirname, "..");

/** The cluster the operator tests run against, and the kubeconfigs of its two identities. */
export interface OperatorTestCluster {
  adminKubeconfig: string;
  operatorKubeconfig: string;
  /** The harness cluster, or undefined when an external cluster (kind) is used. */
  kube: KubeCluster | undefined;
  stop(): Promise<void>;
}

/**
 * Starts the harness cluster, or, when SVC_E2E_ADMIN_KUBECONFIG and SVC_E2E_OPERATOR_KUBECONFIG
 * are set (test/e2e-kind.sh), uses that cluster instead.
 */
export async function startOperatorCluster(): Promise<OperatorTestCluster> {
  const admin = process.env["SVC_E2E_ADMIN_KUBECONFIG"];
  const operator = process.env["SVC_E2E_OPERATOR_KUBECONFIG"];
  if (admin && operator) {
    return {
      adminKubeconfig: admin,
      operatorKubeconfig: operator,
      kube: undefined,
      stop: async () => undefined,
    };
  }
  const kube = await startKube();
  return {
    adminKubeconfig: kube.adminKubeconfig,
    operatorKubeconfig: kube.operatorKubeconfig,
    kube,
    stop: () => kube.stop(),
  };
}

export async function must(result: Promise<KubectlResult>): Promise<string> {
  const r = await result;
  if (r.code !== 0) throw new Error(`kubectl failed (${r.code}): ${r.stderr}`);
  return r.stdout;
}

/** Namespace, every CRD (established), and the operator's RBAC from operator/rbac.yaml. */
export async function installBasics(adminKubeconfig: string): Promise<void> {
  const ns = await kubectl(adminKubeconfig, ["create", "namespace", NS]);
  if (ns.code !== 0 && !ns.stderr.includes("AlreadyExists")) throw new Error(ns.stderr);
  for (const file of readdirSync(join(root, "crds")).filter((f) => f.endsWith(".yaml"))) {
    await must(kubectl(adminKubeconfig, ["apply", "--server-side", "-f", join(root, "crds", file)]));
  }
  // Each CRD file is named after its CRD (<plural>.svc.dev).
  for (const file of readdirSync(join(root, "crds")).filter((f) => f.endsWith(".yaml"))) {
    const crd = `crd/${file.replace(/\.yaml$/, "")}`;
    await must(kubectl(adminKubeconfig, ["wait", "--for=condition=Established", "--timeout=120s", crd]));
  }
  await must(
    kubectl(adminKubeconfig, ["apply", "-f", "-"], readFileSync(join(root, "operator", "rbac.yaml"), "utf8")),
  );
}

/** A pino logger writing into `lines` (JSON strings), so a test can check what was logged. */
export function capturingLogger(lines: string[]): Logger {
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(...chunk.toString().split("\n").filter(Boolean));
      done();
    },
  });
  return pino({ level: "debug" }, sink);
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `check` until it returns a value (not undefined) or the time is up. */
export async function eventually<T>(
  what: string,
  check: () => Promise<T | undefined>,
  timeoutMs = 60_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v !== undefined) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ""}`);
    await sleep(250);
  }
}

export async function jsonpath(kubeconfig: string, resource: string, path: string): Promise<string> {
  return await must(kubectl(kubeconfig, ["-n", NS, "get", resource, "-o", `jsonpath=${path}`]));
}
