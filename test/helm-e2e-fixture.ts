// What the `helm install` end-to-end test (test/helm-e2e.test.ts) runs against: the single-node
// cluster harness (test/harness/cluster.ts) by default, or any cluster named by
// SVC_E2E_KUBECONFIG (`make e2e-kind` passes a kind cluster's, after `kind load image-archive`).
// Also the ways a user on the host reaches the cluster: a port-forward, and public names that
// resolve to a Service (a private mount namespace with its own /etc/hosts, for the CLIs).
import { type ChildProcess, spawn } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { type Cluster, HOST_ADDRESS, NODE_ADDRESS, POD_CIDR, startCluster } from "./harness/cluster.ts";
import { kubectl } from "./harness/kube.ts";
import { toolPath } from "./harness/tools.ts";

export interface E2eTarget {
  kubeconfig: string;
  /** Where Pods reach the host (PostgreSQL, the node agent). */
  hostAddress: string;
  /** Where the host reaches a NodePort Service. */
  nodeAddress: string;
  /** Client address ranges the host sees for traffic from Pods. */
  podCidrs: string[];
  /** Imports the image archive into the node runtime; false when the caller loaded it already. */
  importImage(archive: string, reference: string): Promise<boolean>;
  logs(): string;
  stop(): Promise<void>;
}

export async function startTarget(): Promise<E2eTarget> {
  const external = process.env["SVC_E2E_KUBECONFIG"];
  if (external) {
    const need = (name: string): string => {
      const v = process.env[name];
      if (!v) throw new Error(`SVC_E2E_KUBECONFIG is set, so ${name} must be too (see test/e2e-kind.sh)`);
      return v;
    };
    return {
      kubeconfig: external,
      hostAddress: need("SVC_E2E_HOST_ADDRESS"),
      nodeAddress: need("SVC_E2E_NODE_ADDRESS"),
      podCidrs: need("SVC_E2E_POD_CIDRS").split(","),
      importImage: async () => false,
      logs: () => "(external cluster: see its own logs)",
      stop: async () => {},
    };
  }
  const cluster: Cluster = await startCluster();
  return {
    kubeconfig: cluster.kube.adminKubeconfig,
    hostAddress: HOST_ADDRESS,
    nodeAddress: NODE_ADDRESS,
    // Pods reach the host through the node's masquerade: their packets carry the node's address.
    podCidrs: [POD_CIDR, `${NODE_ADDRESS}/32`],
    importImage: async (archive, reference) => {
      await cluster.importImage(archive, reference);
      return true;
    },
    logs: () => cluster.logs(40),
    stop: () => cluster.stop(),
  };
}

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a command; never throws on a non-zero exit. */
export function runCommand(
  cmd: string,
  args: string[],
  o: { env?: NodeJS.ProcessEnv; input?: string; timeoutMs?: number } = {},
): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { env: { ...process.env, ...o.env }, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => {
      stdout += c.toString();
    });
    child.stderr.on("data", (c: Buffer) => {
      stderr += c.toString();
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), o.timeoutMs ?? 120_000);
    child.once("error", (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.once("close", (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? -1, stdout, stderr });
    });
    child.stdin.end(o.input ?? "");
  });
}

/** Throws with the command's output when it failed. */
export function must(r: RunResult, what: string): RunResult {
  if (r.code !== 0) throw new Error(`${what} failed (${r.code}):\n${r.stdout}\n${r.stderr}`);
  return r;
}

export function helm(kubeconfig: string, args: string[], timeoutMs = 900_000): Promise<RunResult> {
  return runCommand(toolPath("helm"), [`--kubeconfig=${kubeconfig}`, ...args], { timeoutMs });
}

/**
 * Runs `cmd` as if the host's resolver mapped `hosts` (name → address): in a private mount
 * namespace whose /etc/hosts is a file of ours. The public name of the proxy (and the name on
 * auth's certificate) then resolve the way DNS would make them resolve for a real user.
 */
export async function withHosts(
  dir: string,
  hosts: Record<string, string>,
  cmd: string,
  args: string[],
  o: { env?: NodeJS.ProcessEnv; input?: string; timeoutMs?: number } = {},
): Promise<RunResult> {
  const file = join(dir, "hosts");
  const lines = ["127.0.0.1 localhost", ...Object.entries(hosts).map(([name, ip]) => `${ip} ${name}`)];
  await writeFile(file, `${lines.join("\n")}\n`);
  return runCommand(
    "unshare",
    [
      "--mount",
      "--propagation",
      "private",
      "--",
      "sh",
      "-c",
      'mount --bind "$0" /etc/hosts && exec "$@"',
      file,
      cmd,
      ...args,
    ],
    o,
  );
}

export interface PortForward {
  port: number;
  stop(): void;
}

/** `kubectl port-forward` to a Service on a free local port; resolves once it forwards. */
export async function portForward(
  kubeconfig: string,
  namespace: string,
  target: string,
  remotePort: number,
): Promise<PortForward> {
  const child: ChildProcess = spawn(
    "kubectl",
    [
      `--kubeconfig=${kubeconfig}`,
      "-n",
      namespace,
      "port-forward",
      "--address=127.0.0.1",
      target,
      `0:${remotePort}`,
    ],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  let out = "";
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`port-forward ${target}: no port after 60 s:\n${out}`)),
      60_000,
    );
    const onData = (c: Buffer) => {
      out += c.toString();
      const m = /Forwarding from 127\.0\.0\.1:(\d+)/.exec(out);
      if (m?.[1]) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", onData);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`port-forward ${target} exited (${code}):\n${out}`));
    });
  });
  return { port, stop: () => child.kill("SIGTERM") };
}

/** Polls `check` until it returns a value other than undefined. */
export async function eventually<T>(
  what: string,
  check: () => Promise<T | undefined>,
  timeoutMs = 120_000,
): Promise<T> {
  const end = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v !== undefined) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > end) {
      throw new Error(
        `${what}: not after ${timeoutMs} ms${last instanceof Error ? ` (last error: ${last.message})` : ""}`,
      );
    }
    await new Promise((r) => setTimeout(r, 1_000));
  }
}

/** `kubectl get ... -o json` parsed; throws when kubectl fails. */
export async function getJson<T>(kubeconfig: string, args: string[]): Promise<T> {
  const r = await kubectl(kubeconfig, ["get", ...args, "-o", "json"]);
  if (r.code !== 0) throw new Error(`kubectl get ${args.join(" ")}: ${r.stderr}`);
  return JSON.parse(r.stdout) as T;
}
