// Leader election between real operator processes (node operator/cli.ts operator ...) as the
// operator identity: one leads and reconciles, the other waits; SIGKILL the leader and the other
// takes over once the Lease has run out; SIGTERM releases the Lease so a successor starts at once.
import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { kubectl } from "./harness/kube.ts";
import {
  eventually,
  installBasics,
  jsonpath,
  must,
  NS,
  type OperatorTestCluster,
  sleep,
  startOperatorCluster,
} from "./operator-fixture.ts";

const LEASE_SECONDS = 4;
const cli = join(import.meta.dirname, "..", "operator", "cli.ts");

interface OperatorProcess {
  identity: string;
  child: ChildProcess;
  logs: string[];
  exited: Promise<number | null>;
}

describe("operator leader election (two processes, one Lease)", () => {
  let cluster: OperatorTestCluster | undefined;
  const procs: OperatorProcess[] = [];
  const admin = () => cluster?.adminKubeconfig ?? "";

  function launch(identity: string): OperatorProcess {
    const child = spawn(
      process.execPath,
      [
        cli,
        "operator",
        `--kubeconfig=${cluster?.operatorKubeconfig}`,
        `--namespace=${NS}`,
        "--cluster-name=leader-test",
        `--identity=${identity}`,
        `--lease-duration=${LEASE_SECONDS}`,
        "--renew-deadline=3",
        "--retry-period=0.5",
      ],
      { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, SVC_LOG_LEVEL: "info" } },
    );
    const logs: string[] = [];
    const collect = (chunk: Buffer) => logs.push(...chunk.toString().split("\n").filter(Boolean));
    child.stdout?.on("data", collect);
    child.stderr?.on("data", collect);
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    const p = { identity, child, logs, exited };
    procs.push(p);
    return p;
  }

  const holder = async () =>
    (
      await kubectl(admin(), [
        "-n",
        NS,
        "get",
        "lease",
        "svc-operator",
        "-o",
        "jsonpath={.spec.holderIdentity}",
      ])
    ).stdout.trim();
  const logged = (p: OperatorProcess, msg: string) => p.logs.some((l) => l.includes(`"msg":"${msg}"`));

  beforeAll(async () => {
    cluster = await startOperatorCluster();
    await installBasics(cluster.adminKubeconfig);
  });

  afterAll(async () => {
    for (const p of procs) {
      if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill("SIGKILL");
      await p.exited;
    }
    await cluster?.stop();
  });

  it("one of two operators leads and reconciles; the other only waits", async () => {
    const a = launch("op-a");
    const b = launch("op-b");
    const leaderId = await eventually(
      "a lease holder",
      async () => {
        const h = await holder();
        return h === "op-a" || h === "op-b" ? h : undefined;
      },
      90_000,
    );
    const leader = leaderId === "op-a" ? a : b;
    const follower = leaderId === "op-a" ? b : a;
    await eventually(
      "leader's controller",
      async () => (logged(leader, "controller started") ? true : undefined),
      90_000,
    );
    await must(
      kubectl(
        admin(),
        ["-n", NS, "apply", "-f", "-"],
        "apiVersion: svc.dev/v1\nkind: Role\nmetadata: { name: r1 }\nspec: { allow: { logins: [a] } }\n",
      ),
    );
    await must(
      kubectl(admin(), ["-n", NS, "wait", "--for=condition=Ready", "--timeout=60s", "roles.svc.dev/r1"]),
    );
    // Several lease periods later the follower still has not started working.
    await sleep(LEASE_SECONDS * 1000 + 1000);
    expect(await holder()).toBe(leaderId);
    expect(logged(follower, "became leader")).toBe(false);
    expect(logged(follower, "controller started")).toBe(false);
  });

  it("killing the leader hands the Lease to the other within about the lease duration", async () => {
    const leaderId = await holder();
    const leader = procs.find((p) => p.identity === leaderId);
    const follower = procs.find((p) => p.identity !== leaderId && p.child.exitCode === null);
    if (!leader || !follower) throw new Error("expected a leader and a follower");
    leader.child.kill("SIGKILL");
    await leader.exited;
    const killedAt = Date.now();
    await eventually(
      "takeover",
      async () => ((await holder()) === follower.identity ? true : undefined),
      60_000,
    );
    const takeoverMs = Date.now() - killedAt;
    // The follower may take over only after the Lease ran out as it observed it; generous upper
    // bound for a loaded machine (retry period + apiserver latency).
    expect(takeoverMs).toBeLessThan(LEASE_SECONDS * 1000 + 15_000);
    expect(await jsonpath(admin(), "lease/svc-operator", "{.spec.leaseTransitions}")).not.toBe("0");
    await eventually("new leader's controller", async () =>
      logged(follower, "controller started") ? true : undefined,
    );
    await must(
      kubectl(
        admin(),
        ["-n", NS, "apply", "-f", "-"],
        "apiVersion: svc.dev/v1\nkind: Role\nmetadata: { name: r2 }\nspec: { allow: { logins: [b] } }\n",
      ),
    );
    await must(
      kubectl(admin(), ["-n", NS, "wait", "--for=condition=Ready", "--timeout=60s", "roles.svc.dev/r2"]),
    );
  });

  it("SIGTERM releases the Lease, so the next operator leads without waiting it out", async () => {
    const leaderId = await holder();
    const leader = procs.find((p) => p.identity === leaderId);
    if (!leader) throw new Error("no leader");
    leader.child.kill("SIGTERM");
    expect(await leader.exited).toBe(0);
    expect(logged(leader, "released leadership")).toBe(true);
    expect(await holder()).toBe("");
    const c = launch("op-c");
    await eventually("op-c leads", async () => ((await holder()) === "op-c" ? true : undefined), 60_000);
    await eventually("op-c's controller", async () => (logged(c, "controller started") ? true : undefined));
  });
});
