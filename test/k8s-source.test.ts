// KubernetesSource and SecretCaKeyStore on a real kube-apiserver. The source runs as the
// operator's identity with only the RBAC below, so a missing permission fails a test. Changes are
// made with the real kubectl, as a user would.
import { resolve } from "node:path";
import { CustomObjectsApi } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SecretCaKeyStore } from "../core/ca/secret-store.ts";
import { BadParameterError, NotFoundError, PreconditionFailedError, type SvcError } from "../core/errors.ts";
import { type AnyResource, RESOURCE_KINDS, type ResourceKind, type Role } from "../core/resources/index.ts";
import { loadKubeConfig } from "../core/sources/kube-api.ts";
import { KubernetesSource } from "../core/sources/kubernetes.ts";
import type { SourceEvent } from "../core/sources/source.ts";
import { crdName } from "../scripts/gen-crds.ts";
import { type KubeCluster, type KubectlResult, kubectl, startKube } from "./harness/kube.ts";
import { examples, type Manifest, toYaml, V } from "./k8s-examples.ts";

const NS = "svc-source-test";
const CRD_DIR = resolve(import.meta.dirname, "..", "crds");
const WAIT_MS = 60_000;

const rbac = `
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: { name: svc-source, namespace: ${NS} }
rules:
  - apiGroups: [svc.dev]
    resources: [roles, users, connectors, jointokens, agentidentities, locks, apps]
    verbs: [get, list, watch, create, update, delete]
  - apiGroups: [svc.dev]
    resources: [roles/status, users/status, connectors/status, jointokens/status, agentidentities/status, locks/status, apps/status]
    verbs: [patch]
  - apiGroups: [""]
    resources: [secrets]
    verbs: [get, create]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: { name: svc-source, namespace: ${NS} }
roleRef: { apiGroup: rbac.authorization.k8s.io, kind: Role, name: svc-source }
subjects:
  - kind: ServiceAccount
    name: svc-operator
    namespace: svc-system
`;

let kube: KubeCluster | undefined;
let source: KubernetesSource | undefined;
const events: Array<SourceEvent & { at: number }> = [];
const watchErrors: SvcError[] = [];

const k = (): KubeCluster => {
  if (!kube) throw new Error("cluster did not start");
  return kube;
};
const src = (): KubernetesSource => {
  if (!source) throw new Error("source did not start");
  return source;
};
const admin = (args: string[], input?: string): Promise<KubectlResult> =>
  kubectl(k().adminKubeconfig, ["-n", NS, ...args], input);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `check` until it returns a value (bounded). */
async function eventually<T>(what: string, check: () => T | undefined, timeoutMs = WAIT_MS): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = check();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

function role(name: string, spec: Record<string, unknown>): Manifest {
  return { apiVersion: V, kind: "Role", metadata: { name }, spec };
}

function findEvent(type: SourceEvent["type"], kind: ResourceKind, name: string, after: number) {
  return events.find(
    (e) => e.type === type && e.resource.kind === kind && e.resource.metadata.name === name && e.at >= after,
  );
}

beforeAll(async () => {
  kube = await startKube({ users: [{ name: "nobody" }, { name: "lister" }] });
  expect((await kubectl(k().adminKubeconfig, ["create", "namespace", NS])).code).toBe(0);
  expect((await kubectl(k().adminKubeconfig, ["apply", "-f", CRD_DIR])).code).toBe(0);
  const established = await kubectl(k().adminKubeconfig, [
    "wait",
    "--for=condition=Established",
    "--timeout=120s",
    ...RESOURCE_KINDS.map((kind) => `crd/${crdName(kind)}`),
  ]);
  expect(established.stderr).toBe("");
  const granted = await kubectl(k().adminKubeconfig, ["apply", "-f", "-"], rbac);
  expect(granted.stderr).toBe("");

  // One object exists before the source starts: the first list must bring it.
  expect((await admin(["apply", "-f", "-"], toYaml(examples().User))).code).toBe(0);

  source = new KubernetesSource({
    kubeConfig: loadKubeConfig(k().operatorKubeconfig),
    namespace: NS,
    backoffInitialMs: 200,
    backoffMaxMs: 2_000,
    resyncMs: 2_000,
    onWatchError: (_kind, err) => watchErrors.push(err),
  });
  source.subscribe((e) => events.push({ ...e, at: Date.now() }));
  await source.start();
});

afterAll(async () => {
  await source?.stop();
  await kube?.stop();
});

describe("KubernetesSource on a real kube-apiserver", () => {
  it("waitSynced resolves after every kind's first list, which brings existing objects", async () => {
    await src().waitSynced(AbortSignal.timeout(WAIT_MS));
    expect(src().synced()).toBe(true);
    const alice = src().get("User", "alice");
    expect(alice?.spec.roles).toEqual(["dev"]);
    expect(alice?.metadata.namespace).toBe(NS);
    expect(src().list("Role")).toEqual([]);
    expect(src().problems()).toEqual([]);
  });

  it("kubectl apply -> add event and cache entry; update -> update event; delete -> gone", async () => {
    const t0 = Date.now();
    const applied = await admin(
      ["apply", "-f", "-"],
      toYaml(role("ops", { allow: { logins: ["ops"], node_labels: { env: "prod" } }, options: {} })),
    );
    expect(applied.stderr).toBe("");
    const tKubectl = Date.now();
    const added = await eventually("add of Role ops", () => findEvent("add", "Role", "ops", t0));
    console.log(
      `propagation kubectl apply -> source cache: ${added.at - t0} ms from the apply command's start, ` +
        `${added.at - tKubectl} ms after kubectl exited`,
    );
    expect(src().get("Role", "ops")?.spec.allow?.logins).toEqual(["ops"]);
    // Defaults are applied by the apiserver (structural schema) and kept.
    expect(src().get("Role", "ops")?.spec.options?.max_session_ttl).toBe("12h");

    const t1 = Date.now();
    const updated = await admin(
      ["apply", "-f", "-"],
      toYaml(role("ops", { allow: { logins: ["ops", "deploy"], node_labels: { env: "prod" } } })),
    );
    expect(updated.stderr).toBe("");
    const upd = await eventually("update of Role ops", () => findEvent("update", "Role", "ops", t1));
    expect((upd.resource as Role).spec.allow?.logins).toEqual(["ops", "deploy"]);
    expect(src().get("Role", "ops")?.spec.allow?.logins).toEqual(["ops", "deploy"]);

    const t2 = Date.now();
    expect((await admin(["delete", "roles.svc.dev", "ops"])).code).toBe(0);
    await eventually("delete of Role ops", () => findEvent("delete", "Role", "ops", t2));
    expect(src().get("Role", "ops")).toBeUndefined();
  });

  it("measures propagation without kubectl's start-up: API create -> cache event", async () => {
    const api = loadKubeConfig(k().adminKubeconfig).makeApiClient(CustomObjectsApi);
    const delays: number[] = [];
    for (let i = 0; i < 10; i++) {
      const name = `lat-${i}`;
      const t0 = Date.now();
      await api.createNamespacedCustomObject({
        group: "svc.dev",
        version: "v1",
        namespace: NS,
        plural: "roles",
        body: role(name, { allow: { logins: ["x"] } }),
      });
      const added = await eventually(`add of ${name}`, () => findEvent("add", "Role", name, t0));
      delays.push(added.at - t0);
    }
    delays.sort((a, b) => a - b);
    console.log(
      `propagation API create -> source cache over ${delays.length} creates: ` +
        `p50 ${delays[Math.floor(delays.length / 2)]} ms, max ${delays.at(-1)} ms`,
    );
    expect(
      src()
        .list("Role")
        .filter((r) => r.metadata.name.startsWith("lat-")),
    ).toHaveLength(10);
  });

  it("reports an object that passes the CRD schema but fails semanticProblems, and keeps it out", async () => {
    const res = await admin(
      ["apply", "-f", "-"],
      toYaml(role("badregex", { allow: { logins: ["x"], node_labels: { env: "^(unclosed$" } } })),
    );
    expect(res.stderr).toBe("");
    const problem = await eventually("problem for badregex", () =>
      src()
        .problems()
        .find((p) => p.name === "badregex"),
    );
    expect(problem).toMatchObject({ origin: `${NS}/badregex`, kind: "Role" });
    expect(problem.reason).toMatch(/node_labels\["env"\].*does not compile/);
    expect(src().get("Role", "badregex")).toBeUndefined();
    // Deleting it clears the problem.
    expect((await admin(["delete", "roles.svc.dev", "badregex"])).code).toBe(0);
    await eventually("problem cleared", () =>
      src()
        .problems()
        .some((p) => p.name === "badregex")
        ? undefined
        : true,
    );
  });

  it("reads Apps: an App applied with kubectl arrives with its labels; one with an unknown header template (the CRD admits it) is kept out", async () => {
    const app = examples().App;
    const forged = {
      ...app,
      metadata: { name: "forged" },
      spec: { uri: "http://127.0.0.1:9", rewrite: { headers: [{ name: "X-User", value: "{{token}}" }] } },
    };
    const res = await admin(["apply", "-f", "-"], toYaml(app, forged));
    expect(res.stderr).toBe("");
    const got = await eventually("App grafana", () => src().get("App", "grafana"));
    expect(got.metadata.labels).toEqual({ env: "staging" });
    expect(got.spec.uri).toBe("http://grafana.monitoring.svc:3000");
    const problem = await eventually("problem for forged", () =>
      src()
        .problems()
        .find((p) => p.name === "forged"),
    );
    expect(problem.reason).toContain('"token" is not user');
    expect(src().get("App", "forged")).toBeUndefined();
    expect((await admin(["delete", "apps.svc.dev", "grafana", "forged"])).code).toBe(0);
    await eventually("App grafana gone", () => (src().get("App", "grafana") ? undefined : true));
  });

  it("never caches kubectl's last-applied copy (it can hold a pruned inline secret)", async () => {
    const connector: Manifest = {
      ...examples().Connector,
      metadata: { name: "lastapplied" },
    };
    const spec = structuredClone(connector["spec"]) as { settings: Record<string, string> };
    spec.settings["client_secret"] = "hunter2-annotation";
    const res = await admin(["apply", "--validate=ignore", "-f", "-"], toYaml({ ...connector, spec }));
    expect(res.code).toBe(0);
    // The apiserver pruned the field from spec, but kubectl's annotation still carries it.
    const stored = await admin(["get", "connectors.svc.dev", "lastapplied", "-o", "json"]);
    expect(stored.stdout).toContain("hunter2-annotation");
    const cached = await eventually("lastapplied in cache", () => src().get("Connector", "lastapplied"));
    expect(cached.spec.settings).not.toHaveProperty("client_secret");
    expect(JSON.stringify(cached)).not.toContain("hunter2");
  });

  it("keeps the last good version when an object turns invalid, and takes the fixed one", async () => {
    const good = role("keep", { allow: { logins: ["good"] } });
    expect((await admin(["apply", "-f", "-"], toYaml(good))).code).toBe(0);
    await eventually("keep in cache", () => src().get("Role", "keep"));

    const bad = role("keep", { allow: { logins: ["bad"], node_labels: { env: "^(a+)+$" } } });
    expect((await admin(["apply", "-f", "-"], toYaml(bad))).code).toBe(0);
    await eventually("problem for keep", () =>
      src()
        .problems()
        .find((p) => p.name === "keep"),
    );
    expect(src().get("Role", "keep")?.spec.allow?.logins).toEqual(["good"]);

    const fixed = role("keep", { allow: { logins: ["fixed"] } });
    expect((await admin(["apply", "-f", "-"], toYaml(fixed))).code).toBe(0);
    await eventually("fixed keep", () =>
      src().get("Role", "keep")?.spec.allow?.logins?.[0] === "fixed" ? true : undefined,
    );
    expect(
      src()
        .problems()
        .filter((p) => p.name === "keep"),
    ).toEqual([]);
  });

  it("writes through apply()/remove(): read-your-writes, typed errors", async () => {
    const all = examples();
    const token = { ...all.JoinToken, metadata: { name: "written" } } as unknown as AnyResource;
    await src().apply(token);
    expect(src().get("JoinToken", "written")?.spec.join_method).toBe("token");
    const got = await admin(["get", "jointokens.svc.dev", "written", "-o", "jsonpath={.spec.roles}"]);
    expect(got.stdout).toBe('["node"]');

    // Replace: spec changes, the operator's finalizer survives.
    expect(
      (
        await admin([
          "patch",
          "jointokens.svc.dev",
          "written",
          "--type=merge",
          "-p",
          '{"metadata":{"finalizers":["svc.dev/test"]}}',
        ])
      ).code,
    ).toBe(0);
    const changed = structuredClone(token) as unknown as { spec: { node_labels?: Record<string, string> } };
    changed.spec.node_labels = { zone: "a" };
    await src().apply(changed as unknown as AnyResource);
    expect(src().get("JoinToken", "written")?.spec.node_labels).toEqual({ zone: "a" });
    expect(src().get("JoinToken", "written")?.metadata.finalizers).toEqual(["svc.dev/test"]);

    // Status through the status subresource.
    await src().patchStatus("JoinToken", "written", { phase: "Used", used: true });
    const phase = await admin(["get", "jt", "written", "-o", "jsonpath={.status.phase}"]);
    expect(phase.stdout).toBe("Used");
    await expect(src().patchStatus("JoinToken", "nope", { phase: "Used" })).rejects.toBeInstanceOf(
      NotFoundError,
    );
    await expect(
      src().patchStatus("JoinToken", "written", { phase: "Lost" } as unknown as { phase: "Used" }),
    ).rejects.toBeInstanceOf(BadParameterError);

    // Remove with a finalizer: the object is being deleted (the operator would finish it).
    await src().remove("JoinToken", "written");
    expect(src().get("JoinToken", "written")?.metadata.deletionTimestamp).toBeDefined();
    expect(
      (
        await admin([
          "patch",
          "jointokens.svc.dev",
          "written",
          "--type=merge",
          "-p",
          '{"metadata":{"finalizers":null}}',
        ])
      ).code,
    ).toBe(0);
    await eventually("written gone", () => (src().get("JoinToken", "written") ? undefined : true));
    await expect(src().remove("JoinToken", "written")).rejects.toBeInstanceOf(NotFoundError);

    await expect(
      src().apply({ ...all.Role, spec: { allow: { logins: 5 } } } as unknown as AnyResource),
    ).rejects.toBeInstanceOf(BadParameterError);
  });

  it("recovers after an apiserver restart: a change made afterwards arrives", async () => {
    const errorsBefore = watchErrors.length;
    await k().restartApiserver();
    const t0 = Date.now();
    const res = await admin(
      ["apply", "-f", "-"],
      toYaml(role("after-restart", { allow: { logins: ["r"] } })),
    );
    expect(res.stderr).toBe("");
    const added = await eventually("add after restart", () => findEvent("add", "Role", "after-restart", t0));
    console.log(`after restart: change visible ${added.at - t0} ms after the apply command started`);
    expect(src().get("Role", "after-restart")).toBeDefined();
    // The restart was seen as watch failures, which the backoff recovered from.
    expect(watchErrors.length).toBeGreaterThan(errorsBefore);
    // What was there before the restart is still there.
    expect(src().get("User", "alice")).toBeDefined();
    expect(src().get("Role", "keep")?.spec.allow?.logins).toEqual(["fixed"]);
  });

  it("a deletion its watch never saw is caught by the next list (snapshot), after a watch error", async () => {
    // "lister" may list but not watch Roles: every watch fails (403), the informer is replaced
    // after the backoff and lists again; only that list can reveal the deletion.
    const grant = `
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: { name: list-only, namespace: ${NS} }
rules: [{ apiGroups: [svc.dev], resources: [roles], verbs: [get, list] }]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: { name: list-only, namespace: ${NS} }
roleRef: { apiGroup: rbac.authorization.k8s.io, kind: Role, name: list-only }
subjects: [{ kind: User, name: lister, apiGroup: rbac.authorization.k8s.io }]
`;
    expect((await kubectl(k().adminKubeconfig, ["apply", "-f", "-"], grant)).stderr).toBe("");
    expect(
      (await admin(["apply", "-f", "-"], toYaml(role("doomed", { allow: { logins: ["d"] } })))).code,
    ).toBe(0);
    const errors: SvcError[] = [];
    const listOnly = new KubernetesSource({
      kubeConfig: loadKubeConfig(k().kubeconfigFor("lister")),
      namespace: NS,
      kinds: ["Role"],
      backoffInitialMs: 100,
      backoffMaxMs: 400,
      resyncMs: 0,
      onWatchError: (_kind, err) => errors.push(err),
    });
    const deleted: string[] = [];
    listOnly.subscribe((e) => {
      if (e.type === "delete") deleted.push(e.resource.metadata.name);
    });
    await listOnly.start();
    try {
      await listOnly.waitSynced(AbortSignal.timeout(WAIT_MS));
      expect(listOnly.get("Role", "doomed")).toBeDefined();
      await eventually("a watch error", () => (errors.length > 0 ? true : undefined));
      expect(errors[0]?.code).toBe("access_denied");
      expect((await admin(["delete", "roles.svc.dev", "doomed"])).code).toBe(0);
      await eventually("doomed removed by a relist", () =>
        listOnly.get("Role", "doomed") ? undefined : true,
      );
      expect(deleted).toContain("doomed");
    } finally {
      await listOnly.stop();
    }
  });

  it("waitSynced rejects on abort when the identity may not list (403 reported, typed)", async () => {
    const errors: SvcError[] = [];
    const denied = new KubernetesSource({
      kubeConfig: loadKubeConfig(k().kubeconfigFor("nobody")),
      namespace: NS,
      kinds: ["Role"],
      backoffInitialMs: 100,
      backoffMaxMs: 500,
      onWatchError: (_kind, err) => errors.push(err),
    });
    await denied.start();
    try {
      await expect(denied.waitSynced(AbortSignal.timeout(3_000))).rejects.toBeDefined();
      expect(denied.synced()).toBe(false);
      expect(errors.length).toBeGreaterThan(0);
      expect(errors[0]?.code).toBe("access_denied");
    } finally {
      await denied.stop();
    }
  });
});

describe("SecretCaKeyStore on a real kube-apiserver", () => {
  it("creates a typed, labelled, immutable Secret once; a second createOnce is 'exists' and changes nothing", async () => {
    const store = new SecretCaKeyStore({ kubeConfig: loadKubeConfig(k().operatorKubeconfig), namespace: NS });
    const first = new TextEncoder().encode('{"ca":"first"}');
    const second = new TextEncoder().encode('{"ca":"second"}');
    expect(await store.get("ssh-user")).toBeUndefined();
    expect(await store.createOnce("ssh-user", first)).toBe("created");
    expect(await store.createOnce("ssh-user", second)).toBe("exists");
    expect(Buffer.from((await store.get("ssh-user")) ?? []).toString()).toBe('{"ca":"first"}');

    const secret = JSON.parse((await admin(["get", "secret", "svc-ca-ssh-user", "-o", "json"])).stdout);
    expect(secret.type).toBe("svc.dev/ca");
    expect(secret.immutable).toBe(true);
    expect(secret.metadata.labels).toMatchObject({
      "app.kubernetes.io/part-of": "svc",
      "svc.dev/ca": "ssh-user",
    });
    expect(Buffer.from(secret.data["ca.json"], "base64").toString()).toBe('{"ca":"first"}');
    // Even an admin cannot change it in place.
    const edit = await admin([
      "patch",
      "secret",
      "svc-ca-ssh-user",
      "--type=merge",
      "-p",
      JSON.stringify({ data: { "ca.json": Buffer.from("x").toString("base64") } }),
    ]);
    expect(edit.code).not.toBe(0);
    expect(edit.stderr).toMatch(/immutable/i);

    await expect(store.get("Bad Name")).rejects.toBeInstanceOf(BadParameterError);
  });

  it("refuses a same-named Secret that is not a CA, and never puts key bytes in errors", async () => {
    expect(
      (await admin(["create", "secret", "generic", "svc-ca-foreign", "--from-literal=ca.json=not-ours"]))
        .code,
    ).toBe(0);
    const store = new SecretCaKeyStore({ kubeConfig: loadKubeConfig(k().operatorKubeconfig), namespace: NS });
    await expect(store.get("foreign")).rejects.toBeInstanceOf(PreconditionFailedError);

    const elsewhere = new SecretCaKeyStore({
      kubeConfig: loadKubeConfig(k().operatorKubeconfig),
      namespace: "no-such-namespace",
    });
    const secretBytes = new TextEncoder().encode("TOP-SECRET-KEY-MATERIAL");
    const err = await elsewhere.createOnce("host", secretBytes).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(err).toBeDefined();
    expect(String(err?.message)).not.toContain("TOP-SECRET");
    expect(String(err?.message)).not.toContain(Buffer.from(secretBytes).toString("base64"));
  });
});
