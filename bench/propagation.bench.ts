// Propagation in Kubernetes mode, on a real kube-apiserver with the operator, `svcd auth` and `svcd
// proxy` running as processes (test/k8s-e2e-fixture.ts):
//   1. a Role changed → enforced by auth (the principals IssueUserCerts puts in a certificate, asked
//      through the proxy), from `kubectl apply` starting and from the apiserver accepting an API
//      write; baseline: the same API write → seen by a bare watch in this process. Goal p99 ≤ 500 ms.
//   2. 1,000 Roles created through the API in parallel → all in auth's cache (svc_source_objects)
//      and a certificate decision that needs the last one, vs the time the apiserver took to accept
//      them. Goal ≤ 1.2×.
import {
  CustomObjectsApi,
  type KubernetesObject,
  PatchStrategy,
  setHeaderOptions,
  Watch,
} from "@kubernetes/client-node";
import { openBackend } from "../core/backend/index.ts";
import { systemClock } from "../core/clock.ts";
import { loadKubeConfig } from "../core/sources/kube-api.ts";
import { setPassword } from "../server/auth/passwords.ts";
import { kubectl } from "../test/harness/kube.ts";
import { PG_URL_ENV, startPostgres } from "../test/harness/postgres.ts";
import { eventually, NS, ProxyUser, roleYaml, startE2ePlatform, userYaml } from "../test/k8s-e2e-fixture.ts";
import type { BenchReport, BenchRow } from "./report.ts";
import { percentile } from "./report.ts";

const SAMPLES = Number(process.env.SVC_BENCH_PROPAGATION_SAMPLES ?? 30);
const BULK = Number(process.env.SVC_BENCH_BULK_ROLES ?? 1000);
const PARALLEL = 32;
const PASSWORD = "propagation-bench-password";
const POLL_MS = 10;

const coords = { group: "svc.dev", version: "v1", namespace: NS, plural: "roles" };
const roleBody = (name: string, logins: string[]) => ({
  apiVersion: "svc.dev/v1",
  kind: "Role",
  metadata: { name, namespace: NS },
  spec: { allow: { logins, node_labels: { "*": "*" } } },
});

/** Resolves with the time `want` first held, polling every POLL_MS (bounded). */
async function until(want: () => Promise<boolean>, what: string, ms = 60_000): Promise<number> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await want()) return performance.now();
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
  throw new Error(`timed out: ${what}`);
}

async function authRoleCount(diagPort: number): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${diagPort}/metrics`)).text();
  const m =
    /svc_source_objects\{kind="Role",component="auth"\} (\d+)|svc_source_objects\{component="auth",kind="Role"\} (\d+)/.exec(
      text,
    );
  return Number(m?.[1] ?? m?.[2] ?? 0);
}

export default async function propagationBench(): Promise<BenchReport> {
  const pg = process.env[PG_URL_ENV] ? undefined : await startPostgres();
  const p = await startE2ePlatform({ pgUrl: pg?.url ?? process.env[PG_URL_ENV] ?? "" });
  const stopWatch: Array<() => void> = [];
  try {
    await p.applyCrds();
    p.startOperator();
    p.startAuth();
    p.startProxy();
    p.startMounting();
    const ready = async (port: number) => ((await p.diag(port, "/readyz")) === 200 ? true : undefined);
    await eventually("auth ready", () => ready(p.ports.authDiag), 300_000);
    await eventually("proxy ready", () => ready(p.ports.proxyDiag), 300_000);

    const admin = p.kube.adminKubeconfig;
    const ok = async (yaml: string) => {
      const r = await kubectl(admin, ["apply", "-f", "-"], yaml);
      if (r.code !== 0) throw new Error(r.stderr);
    };
    await ok(`${roleYaml("prop", ["l-0"])}---\n${userYaml("bench", ["prop", `bulk-${BULK - 1}`])}`);
    const backend = await openBackend(
      { type: "postgres", connectionString: p.pgUrl, schema: p.schema },
      { clock: systemClock },
    );
    try {
      await setPassword(backend, "bench", PASSWORD);
    } finally {
      await backend.close();
    }
    const user = new ProxyUser(p.ports.proxy, await p.hostCaPem());
    await eventually("bench logs in", async () =>
      (await user.login("bench", PASSWORD)) === 200 ? true : undefined,
    );
    const has = (login: string) => async () => {
      const v = await user.principals();
      return Array.isArray(v) && v.includes(login);
    };
    await until(has("l-0"), "first grant");

    // A bare watch in this process: when the apiserver delivers a change to any watcher.
    const kc = loadKubeConfig(admin);
    const api = kc.makeApiClient(CustomObjectsApi);
    const seenByWatch = new Map<string, number>();
    const watch = await new Watch(kc).watch(
      `/apis/svc.dev/v1/namespaces/${NS}/roles`,
      {},
      (_type: string, obj: KubernetesObject & { spec?: { allow?: { logins?: string[] } } }) => {
        for (const l of obj.spec?.allow?.logins ?? [])
          if (!seenByWatch.has(l)) seenByWatch.set(l, performance.now());
      },
      () => undefined,
    );
    stopWatch.push(() => watch.abort());

    // 1a. kubectl apply → enforced (kubectl's own start-up included, as a user experiences it).
    // Baseline: the kubectl process itself, start to exit (the change is accepted before it exits).
    const kubectlMs: number[] = [];
    const kubectlExitMs: number[] = [];
    for (let i = 1; i <= SAMPLES; i++) {
      const login = `k-${i}`;
      const t0 = performance.now();
      const enforced = until(has(login), login);
      await ok(roleYaml("prop", [login]));
      kubectlExitMs.push(performance.now() - t0);
      kubectlMs.push((await enforced) - t0);
    }
    // 1b. API write sent → enforced; baselines: → accepted (response), → seen by a bare watch.
    const apiMs: number[] = [];
    const acceptedMs: number[] = [];
    const watchMs: number[] = [];
    for (let i = 1; i <= SAMPLES; i++) {
      const login = `a-${i}`;
      const sent = performance.now();
      // A merge patch of the spec: no resourceVersion, so the operator's status writes never conflict.
      await api.patchNamespacedCustomObject(
        { ...coords, name: "prop", body: { spec: roleBody("prop", [login]).spec } },
        setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
      );
      acceptedMs.push(performance.now() - sent);
      apiMs.push((await until(has(login), login)) - sent);
      const seen = seenByWatch.get(login);
      if (seen !== undefined) watchMs.push(seen - sent);
    }

    // 2. 1,000 Roles through the API, PARALLEL at a time.
    const before = await authRoleCount(p.ports.authDiag);
    const start = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: PARALLEL }, async () => {
        for (let i = next++; i < BULK; i = next++) {
          await api.createNamespacedCustomObject({ ...coords, body: roleBody(`bulk-${i}`, [`bulk-${i}`]) });
        }
      }),
    );
    const accepted = performance.now();
    const [allCached, lastDecided] = await Promise.all([
      until(
        async () => (await authRoleCount(p.ports.authDiag)) >= before + BULK,
        "all Roles cached",
        300_000,
      ),
      until(has(`bulk-${BULK - 1}`), "last Role decided", 300_000),
    ]);
    const enforced = Math.max(allCached, lastDecided);

    const row = (name: string, s: number[], note?: string): BenchRow => ({
      name,
      p50Ms: percentile(s, 50),
      p99Ms: percentile(s, 99),
      ...(note ? { note } : {}),
    });
    const acceptMs = accepted - start;
    const enforceMs = enforced - start;
    return {
      title: "propagation: Role change -> enforced by auth (real apiserver, svcd auth + proxy processes)",
      rows: [
        row(
          "kubectl apply -> enforced (IssueUserCerts)",
          kubectlMs,
          `${SAMPLES} samples, kubectl start-up included`,
        ),
        row("baseline: kubectl apply start -> exit", kubectlExitMs, `${SAMPLES} samples`),
        row("API write sent -> enforced", apiMs, `${SAMPLES} samples`),
        row("baseline: API write sent -> accepted", acceptedMs, `${SAMPLES} samples`),
        row("baseline: API write sent -> bare watch event", watchMs, `${watchMs.length} samples`),
        {
          name: `${BULK} Roles: apiserver accepted all`,
          p50Ms: acceptMs,
          p99Ms: acceptMs,
          note: `${PARALLEL} in parallel`,
        },
        {
          name: `${BULK} Roles: all in auth's cache + last decided`,
          p50Ms: enforceMs,
          p99Ms: enforceMs,
          note: `cache ${(allCached - start).toFixed(0)} ms, decision ${(lastDecided - start).toFixed(0)} ms`,
        },
      ],
      ratios: [
        {
          name: "kubectl apply -> enforced p99 / 500 ms",
          ratio: percentile(kubectlMs, 99) / 500,
          goal: 1,
          lowerIsBetter: true,
        },
        {
          name: "API sent -> enforced p99 / 500 ms",
          ratio: percentile(apiMs, 99) / 500,
          goal: 1,
          lowerIsBetter: true,
        },
        {
          name: "kubectl -> enforced p50 / kubectl exit p50",
          ratio: percentile(kubectlMs, 50) / percentile(kubectlExitMs, 50),
        },
        {
          name: "API -> enforced p50 / bare watch p50",
          ratio: percentile(apiMs, 50) / Math.max(1, percentile(watchMs, 50)),
        },
        {
          name: `${BULK} Roles enforced / accepted`,
          ratio: enforceMs / acceptMs,
          goal: 1.2,
          lowerIsBetter: true,
        },
      ],
    };
  } finally {
    for (const s of stopWatch) s();
    await p.stop();
    await pg?.stop();
  }
}
