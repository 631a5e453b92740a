// The Kubernetes test harness against itself: a real kube-apiserver + etcd, driven by real kubectl.
// Proves what later tests rely on: admin can write, the operator identity has only what RBAC
// grants it, and the apiserver comes back after a restart.
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type KubeCluster, kubectl, OPERATOR_USER, startKube } from "./harness/kube.ts";
import { toolPath, toolVersions } from "./harness/tools.ts";

const NS = "svc-harness";

const rbac = `
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: { name: secret-reader, namespace: ${NS} }
rules:
  - apiGroups: [""]
    resources: [secrets]
    verbs: [get, list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: { name: svc-operator-secret-reader, namespace: ${NS} }
roleRef: { apiGroup: rbac.authorization.k8s.io, kind: Role, name: secret-reader }
subjects:
  - kind: ServiceAccount
    name: svc-operator
    namespace: svc-system
`;

describe("kube harness (real kube-apiserver + etcd)", () => {
  let kube: KubeCluster | undefined;
  const cluster = (): KubeCluster => {
    if (!kube) throw new Error("cluster did not start");
    return kube;
  };

  beforeAll(async () => {
    kube = await startKube({ users: [{ name: "alice", groups: ["developers"] }] });
  });

  afterAll(async () => {
    const dir = kube?.dir;
    await kube?.stop();
    if (dir) expect(existsSync(dir)).toBe(false);
  });

  it("serves the pinned version over TLS on loopback", async () => {
    const k = cluster();
    expect(k.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    expect(k.caPem).toContain("BEGIN CERTIFICATE");
    const v = await kubectl(k.adminKubeconfig, ["get", "--raw", "/version"]);
    expect(v.stderr).toBe("");
    expect(JSON.parse(v.stdout).gitVersion).toMatch(/^v1\.\d+\.\d+/);
  });

  it("admin creates a namespace and a ConfigMap with kubectl", async () => {
    const k = cluster();
    const ns = await kubectl(k.adminKubeconfig, ["create", "namespace", NS]);
    expect(ns.stderr).toBe("");
    expect(ns.code).toBe(0);
    const cm = await kubectl(k.adminKubeconfig, [
      "-n",
      NS,
      "create",
      "configmap",
      "greeting",
      "--from-literal=hello=world",
    ]);
    expect(cm.code).toBe(0);
    const got = await kubectl(k.adminKubeconfig, [
      "-n",
      NS,
      "get",
      "configmap",
      "greeting",
      "-o",
      "jsonpath={.data.hello}",
    ]);
    expect(got.stdout).toBe("world");
    const secret = await kubectl(k.adminKubeconfig, [
      "-n",
      NS,
      "create",
      "secret",
      "generic",
      "s1",
      "--from-literal=k=v",
    ]);
    expect(secret.code).toBe(0);
  });

  it("the operator identity is forbidden until a Role and RoleBinding grant it", async () => {
    const k = cluster();
    const whoami = await kubectl(k.operatorKubeconfig, [
      "auth",
      "whoami",
      "-o",
      "jsonpath={.status.userInfo.username}",
    ]);
    expect(whoami.stdout).toBe(OPERATOR_USER);

    const before = await kubectl(k.operatorKubeconfig, ["-n", NS, "get", "secrets"]);
    expect(before.code).not.toBe(0);
    expect(before.stderr).toMatch(/forbidden/i);
    expect(before.stderr).toContain(OPERATOR_USER);

    const apply = await kubectl(k.adminKubeconfig, ["apply", "-f", "-"], rbac);
    expect(apply.stderr).toBe("");
    expect(apply.code).toBe(0);

    const after = await kubectl(k.operatorKubeconfig, ["-n", NS, "get", "secrets", "-o", "name"]);
    expect(after.stderr).toBe("");
    expect(after.stdout.trim()).toBe("secret/s1");
    // The grant is namespaced and read-only: nothing more than the manifest says.
    const elsewhere = await kubectl(k.operatorKubeconfig, ["-n", "default", "get", "secrets"]);
    expect(elsewhere.stderr).toMatch(/forbidden/i);
    const write = await kubectl(k.operatorKubeconfig, ["-n", NS, "delete", "secret", "s1"]);
    expect(write.stderr).toMatch(/forbidden/i);
  });

  it("a declared static user gets its groups and nothing else", async () => {
    const k = cluster();
    const who = await kubectl(k.kubeconfigFor("alice"), [
      "auth",
      "whoami",
      "-o",
      "jsonpath={.status.userInfo.groups}",
    ]);
    expect(who.stdout).toContain("developers");
    expect(who.stdout).toContain("system:authenticated");
    const denied = await kubectl(k.kubeconfigFor("alice"), ["-n", NS, "get", "configmaps"]);
    expect(denied.stderr).toMatch(/forbidden/i);
    expect(() => k.kubeconfigFor("nobody")).toThrow(/no static user nobody/);
  });

  it("a real ServiceAccount token (TokenRequest) authenticates as that account", async () => {
    const k = cluster();
    const path = await k.serviceAccountKubeconfig(NS, "robot");
    const who = await kubectl(path, ["auth", "whoami", "-o", "jsonpath={.status.userInfo.username}"]);
    expect(who.stderr).toBe("");
    expect(who.stdout).toBe(`system:serviceaccount:${NS}:robot`);
    const denied = await kubectl(path, ["-n", NS, "get", "secrets"]);
    expect(denied.stderr).toMatch(/forbidden/i);
  });

  it("kubectl works again after restartApiserver(), with the data intact", async () => {
    const k = cluster();
    await k.restartApiserver();
    const got = await kubectl(k.adminKubeconfig, [
      "-n",
      NS,
      "get",
      "configmap",
      "greeting",
      "-o",
      "jsonpath={.data.hello}",
    ]);
    expect(got.stderr).toBe("");
    expect(got.stdout).toBe("world");
    const after = await kubectl(k.operatorKubeconfig, ["-n", NS, "get", "secrets", "-o", "name"]);
    expect(after.stdout.trim()).toBe("secret/s1");
  });
});

describe("toolPath", () => {
  it("says to run make provision when a tool is missing, and honours KUBEBUILDER_ASSETS", () => {
    const empty = mkdtempSync(join(tmpdir(), "svc-tools-"));
    try {
      const env = { HOME: empty, SVC_CACHE_DIR: join(empty, "cache") };
      expect(() => toolPath("kube-apiserver", env)).toThrow(/make provision/);
      expect(() => toolPath("grpcurl", env)).toThrow(/grpcurl not found/);
      // KUBEBUILDER_ASSETS is only a fallback source for the apiserver and etcd, and only when it holds them.
      expect(() => toolPath("etcd", { ...env, KUBEBUILDER_ASSETS: empty })).toThrow(/KUBEBUILDER_ASSETS/);
      const real = toolPath("etcd");
      const assets = join(real, "..");
      expect(toolPath("etcd", { ...env, KUBEBUILDER_ASSETS: assets })).toBe(real);
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
    expect(toolVersions()["K8S_VERSION"]).toMatch(/^v1\.\d+\.\d+$/);
  });
});
