// The Kubernetes install, measured (issue 11): runs test/helm-e2e.test.ts on the single-node
// cluster with SVC_E2E_BENCH=1, which also times a bare Node Deployment of the same image and
// reads every Pod's memory from the kubelet (idle, and with 100 terminals open through the proxy's
// Service). Ratios against baselines of the same run:
// - `helm install` to all Pods Ready against the bare Node Deployment to Ready (the cluster's
//   own floor for starting Pods of this image);
// - each component's idle memory against the bare Node Pod's;
// - the proxy's memory with 100 open terminals against its idle memory;
// - failed requests during `helm upgrade` (goal 0), and the image's uncompressed size against the
//   Node binary it carries.
import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureImageMetadata } from "../test/harness/image.ts";
import type { BenchRatio, BenchReport, BenchRow } from "./report.ts";

const root = join(import.meta.dirname, "..");

async function runE2e(timingsFile: string): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const child = spawn(
      join(root, "node_modules", ".bin", "vitest"),
      ["run", "test/helm-e2e.test.ts", "--reporter=dot"],
      {
        cwd: root,
        env: { ...process.env, SVC_E2E_BENCH: "1", SVC_E2E_TIMINGS: timingsFile },
        stdio: ["ignore", "inherit", "inherit"],
      },
    );
    child.once("error", reject);
    child.once("exit", (code) => (code === 0 ? resolve() : reject(new Error(`helm-e2e exited ${code}`))));
  });
}

/** Mean MiB of the Pods whose names start with `prefix` among keys starting with `label`. */
function meanMemory(t: Record<string, number>, label: string, prefix: string): number | undefined {
  const values = Object.entries(t)
    .filter(([k]) => k.startsWith(label) && k.slice(label.length).startsWith(prefix))
    .map(([, v]) => v);
  return values.length === 0 ? undefined : values.reduce((a, b) => a + b, 0) / values.length;
}

export default async function bench(): Promise<BenchReport> {
  const dir = await mkdtemp(join(tmpdir(), "svc-bench-cluster-"));
  try {
    const file = join(dir, "timings.json");
    await runE2e(file);
    const t = JSON.parse(await readFile(file, "utf8")) as Record<string, number>;
    const image = await ensureImageMetadata();
    const rows: BenchRow[] = [];
    const ratios: BenchRatio[] = [];
    const install = t["helm install to all Pods Ready (s)"];
    const baseline = t["baseline: bare Node Deployment to Ready (s)"];
    rows.push({ name: "helm install to all Pods Ready", note: `${install?.toFixed(1)} s` });
    rows.push({
      name: "baseline: bare Node Deployment (2 replicas) Ready",
      note: `${baseline?.toFixed(1)} s`,
    });
    if (install && baseline)
      ratios.push({ name: "install / bare Deployment", ratio: install / baseline, lowerIsBetter: true });
    for (const key of [
      "helm upgrade (auth) (s)",
      "helm upgrade: session calls",
      "helm upgrade: failed session calls",
      "helm upgrade (all) (s)",
      "helm upgrade (all): session calls",
      "helm upgrade (all): failed session calls",
    ]) {
      rows.push({ name: key, note: String(t[key]) });
    }
    const failed =
      (t["helm upgrade: failed session calls"] ?? 0) + (t["helm upgrade (all): failed session calls"] ?? 0);
    const calls =
      (t["helm upgrade: session calls"] ?? 0) + (t["helm upgrade (all): session calls"] ?? 0) || 1;
    ratios.push({
      name: "failed / all session calls during upgrade",
      ratio: failed / calls,
      goal: 0,
      lowerIsBetter: true,
    });
    const idle = "memory idle MiB: ";
    const busy = "memory 100 terminals MiB: ";
    const base = meanMemory(t, idle, "baseline-node-");
    for (const c of ["svc-auth-", "svc-proxy-", "svc-operator-"]) {
      const m = meanMemory(t, idle, c);
      const b = meanMemory(t, busy, c);
      rows.push({
        name: `${c}* memory, idle / 100 terminals`,
        note: `${m?.toFixed(1)} MiB / ${b?.toFixed(1)} MiB`,
      });
      if (m && base)
        ratios.push({ name: `${c}* idle memory / bare Node`, ratio: m / base, lowerIsBetter: true });
    }
    rows.push({ name: "baseline-node-* memory, idle", note: `${base?.toFixed(1)} MiB` });
    const proxyIdle = meanMemory(t, idle, "svc-proxy-");
    const proxyBusy = meanMemory(t, busy, "svc-proxy-");
    if (proxyIdle && proxyBusy) {
      ratios.push({
        name: "proxy memory with 100 terminals / idle",
        ratio: proxyBusy / proxyIdle,
        lowerIsBetter: true,
      });
    }
    const mib = image.uncompressedBytes / 2 ** 20;
    rows.push({ name: "image, uncompressed", note: `${mib.toFixed(1)} MiB (${image.reference})` });
    ratios.push({ name: "image size / 200 MiB budget", ratio: mib / 200, goal: 1, lowerIsBetter: true });
    return { title: "Kubernetes install (helm, single-node cluster)", rows, ratios };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
