// The operator when things around it fail, on a real kube-apiserver (operators in this process,
// as their own least-privilege identity): a deleted User's finalizer goes after bounded retries
// when auth is unreachable (Warning Event, metric); a leader whose Lease calls hang stops leading
// before another process may acquire; /readyz follows informer staleness (leader) and apiserver
// reachability (standby); --preset-roles decides whether admin/access exist without objects.
import { createServer } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RESOURCE_KINDS } from "../core/resources/index.ts";
import { loadKubeConfig } from "../core/sources/kube-api.ts";
import { type OperatorHandle, type OperatorOptions, runOperator } from "../operator/main.ts";
import { REVOKE_SESSIONS_FINALIZER } from "../operator/reconcilers/index.ts";
import { kubectl } from "./harness/kube.ts";
import { startTcpGate, type TcpGate } from "./harness/tcp-gate.ts";
import {
  capturingLogger,
  eventually,
  installBasics,
  jsonpath,
  must,
  NS,
  type OperatorTestCluster,
  sleep,
  startOperatorCluster,
} from "./operator-fixture.ts";

/** A port nothing listens on (auth "unreachable"). */
async function closedPort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
  const port = (srv.address() as { port: number }).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

async function diag(op: OperatorHandle, path: string): Promise<{ status: number; body: string }> {
  try {
    const r = await fetch(`http://127.0.0.1:${op.diagnosticsPort}${path}`, {
      signal: AbortSignal.timeout(5_000),
    });
    return { status: r.status, body: await r.text() };
  } catch {
    return { status: 0, body: "" };
  }
}

describe("operator robustness (real kube-apiserver)", () => {
  let cluster: OperatorTestCluster | undefined;
  let gate: TcpGate | undefined;
  const running = new Set<OperatorHandle>();
  const logs: string[] = [];
  const admin = () => cluster?.adminKubeconfig ?? "";
  const apply = (yaml: string) => must(kubectl(admin(), ["-n", NS, "apply", "-f", "-"], yaml));

  const start = async (o: Partial<OperatorOptions> & { through?: boolean } = {}) => {
    const { through, ...rest } = o;
    const kubeconfig = through
      ? (gate?.kubeconfigThrough(cluster?.operatorKubeconfig ?? "") ?? "")
      : cluster?.operatorKubeconfig;
    const op = await runOperator({
      kubeConfig: loadKubeConfig(kubeconfig),
      namespace: NS,
      clusterName: "robust-test",
      identity: `robust-${running.size}-${Date.now()}`,
      leaseDurationMs: 4_000,
      renewDeadlineMs: 3_000,
      retryPeriodMs: 500,
      recheckMs: 1_000,
      resyncMs: 60_000,
      logger: capturingLogger(logs),
      diagnosticsAddr: "127.0.0.1:0",
      ...rest,
    });
    running.add(op);
    return op;
  };
  const stop = async (op: OperatorHandle) => {
    running.delete(op);
    await op.stop();
  };

  beforeAll(async () => {
    cluster = await startOperatorCluster();
    await installBasics(cluster.adminKubeconfig);
    const port = Number(new URL(cluster.kube?.url ?? "https://127.0.0.1:0").port);
    gate = await startTcpGate(port);
  }, 300_000);

  afterAll(async () => {
    for (const op of running) await op.stop();
    await gate?.close();
    await cluster?.stop();
  }, 120_000);

  it("auth unreachable: a deleted User's finalizer goes after bounded retries, with a Warning Event and a metric", async () => {
    const op = await start({ authAddr: `127.0.0.1:${await closedPort()}`, finalizerTimeoutMs: 3_000 });
    try {
      await apply(
        "apiVersion: svc.dev/v1\nkind: User\nmetadata:\n  name: gone-user\nspec:\n  roles: [access]\n",
      );
      await eventually("finalizer added", async () =>
        (await jsonpath(admin(), "users.svc.dev/gone-user", "{.metadata.finalizers}")).includes(
          REVOKE_SESSIONS_FINALIZER,
        )
          ? true
          : undefined,
      );
      const t0 = Date.now();
      await must(kubectl(admin(), ["-n", NS, "delete", "users.svc.dev/gone-user", "--wait=false"]));
      await eventually(
        "User deleted despite auth being unreachable",
        async () => {
          const r = await kubectl(admin(), ["-n", NS, "get", "users.svc.dev/gone-user"]);
          return r.code !== 0 && r.stderr.includes("NotFound") ? true : undefined;
        },
        60_000,
      );
      const tookMs = Date.now() - t0;
      // Bounded: the 3 s limit plus the queue's backoff step, well under a minute.
      expect(tookMs).toBeGreaterThan(2_500);
      expect(tookMs).toBeLessThan(30_000);
      const events = JSON.parse(
        await must(
          kubectl(admin(), [
            "-n",
            NS,
            "get",
            "events",
            "--field-selector=involvedObject.name=gone-user,reason=SessionsNotRevoked",
            "-o",
            "json",
          ]),
        ),
      ) as { items: { type: string; message: string }[] };
      expect(events.items).toHaveLength(1);
      expect(events.items[0]?.type).toBe("Warning");
      expect(events.items[0]?.message).toMatch(
        /gave up revoking the sessions of user "gone-user" after \d+ tries/,
      );
      const metrics = (await diag(op, "/metrics")).body;
      expect(metrics).toMatch(
        /svc_operator_finalizer_skipped_total\{[^}]*finalizer="svc.dev\/revoke-sessions"[^}]*\} 1/,
      );
      console.log(`finalizer released ${tookMs} ms after delete with auth unreachable`);
    } finally {
      await stop(op);
    }
  }, 120_000);

  it("--preset-roles: with false a User naming admin is UnknownRole, with true it is Valid", async () => {
    await apply(
      "apiVersion: svc.dev/v1\nkind: User\nmetadata:\n  name: preset-user\nspec:\n  roles: [admin]\n",
    );
    const reason = () =>
      jsonpath(admin(), "users.svc.dev/preset-user", '{.status.conditions[?(@.type=="Ready")].reason}');
    const off = await start({ presetRoles: false });
    await eventually("UnknownRole without presets", async () =>
      (await reason()) === "UnknownRole" ? true : undefined,
    );
    await stop(off);
    const on = await start({ presetRoles: true });
    await eventually("Valid with presets", async () => ((await reason()) === "Valid" ? true : undefined));
    await stop(on);
  }, 120_000);

  it("/readyz: the leader turns 503 while its informers are stale (apiserver cut) and 200 once they are current", async () => {
    gate?.mode("open");
    // Long lease: the leader keeps leading through the cut, so only staleness can fail readiness.
    const op = await start({
      through: true,
      leaseDurationMs: 60_000,
      renewDeadlineMs: 50_000,
      retryPeriodMs: 1_000,
      staleAfterMs: 2_000,
    });
    try {
      expect((await diag(op, "/healthz")).status).toBe(200);
      await eventually("leader ready", async () =>
        (await diag(op, "/readyz")).status === 200 ? true : undefined,
      );
      const cutAt = Date.now();
      gate?.mode("cut");
      await eventually("leader not ready while cut", async () =>
        (await diag(op, "/readyz")).status === 503 ? true : undefined,
      );
      const notReadyAfterMs = Date.now() - cutAt;
      expect(op.isLeader()).toBe(true);
      expect((await diag(op, "/healthz")).status).toBe(200);
      const metrics = (await diag(op, "/metrics")).body;
      const stale = [
        ...metrics.matchAll(/svc_operator_informer_stale_seconds\{[^}]*kind="(\w+)"[^}]*\} ([\d.e+-]+)/g),
      ];
      expect(stale.length).toBe(RESOURCE_KINDS.length);
      expect(Math.max(...stale.map((m) => Number(m[2])))).toBeGreaterThanOrEqual(2);
      expect(metrics).toMatch(/svc_operator_ready\{[^}]*\} 0/);
      const reopenAt = Date.now();
      gate?.mode("open");
      await eventually("leader ready again", async () =>
        (await diag(op, "/readyz")).status === 200 ? true : undefined,
      );
      console.log(
        `leader /readyz 503 ${notReadyAfterMs} ms after the cut (stale-after 2 s), 200 again ${Date.now() - reopenAt} ms after reopening`,
      );
    } finally {
      await stop(op);
    }
  }, 120_000);

  it("/readyz of a standby follows whether it reaches the apiserver", async () => {
    gate?.mode("open");
    const leader = await start();
    await eventually("leader", async () => (leader.isLeader() ? true : undefined));
    const standby = await start({ through: true });
    try {
      await eventually("standby ready", async () =>
        (await diag(standby, "/readyz")).status === 200 ? true : undefined,
      );
      expect(standby.isLeader()).toBe(false);
      gate?.mode("cut");
      await eventually("standby not ready when cut", async () =>
        (await diag(standby, "/readyz")).status === 503 ? true : undefined,
      );
      gate?.mode("open");
      await eventually("standby ready again", async () =>
        (await diag(standby, "/readyz")).status === 200 ? true : undefined,
      );
    } finally {
      await stop(standby);
      await stop(leader);
    }
  }, 120_000);

  it("a leader whose Lease calls hang stops leading before another operator acquires the Lease", async () => {
    gate?.mode("open");
    const stalled = await start({ through: true });
    await eventually("first leads", async () => (stalled.isLeader() ? true : undefined));
    const other = await start();
    await sleep(1_500);
    expect(other.isLeader()).toBe(false);
    let stalledStoppedAt: number | undefined;
    let otherStartedAt: number | undefined;
    let overlapMs = 0;
    let last = Date.now();
    const stallAt = Date.now();
    gate?.mode("stall");
    try {
      while (Date.now() - stallAt < 30_000 && otherStartedAt === undefined) {
        const now = Date.now();
        const a = stalled.isLeader();
        const b = other.isLeader();
        if (a && b) overlapMs += now - last;
        if (!a && stalledStoppedAt === undefined) stalledStoppedAt = now;
        if (b && otherStartedAt === undefined) otherStartedAt = now;
        last = now;
        await sleep(10);
      }
      expect(otherStartedAt).toBeDefined();
      expect(stalledStoppedAt).toBeDefined();
      expect(overlapMs).toBe(0);
      expect(stalledStoppedAt ?? Infinity).toBeLessThan(otherStartedAt ?? 0);
      // It stepped down within the renew deadline (3 s) of its last renewal, plus a retry period.
      expect((stalledStoppedAt ?? 0) - stallAt).toBeLessThan(3_000 + 500 + 1_000);
      console.log(
        `stalled leader stopped ${(stalledStoppedAt ?? 0) - stallAt} ms after the stall; the other led after ${(otherStartedAt ?? 0) - stallAt} ms`,
      );
    } finally {
      gate?.mode("cut"); // ends the stalled connections so the stalled operator stops promptly
      await stop(other);
      await stop(stalled);
      gate?.mode("open");
    }
  }, 120_000);
});
