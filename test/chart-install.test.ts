// The Helm chart installed for real on a real kube-apiserver (test/harness/kube.ts) with the
// charts/svc/ci values: every option on and evaluation mode, each into a namespace that enforces
// Pod Security "restricted"; the third-party kinds (ServiceMonitor, cert-manager Certificate,
// Gateway API routes) validated against their real CRDs, which scripts/tools/third-party-crds.sh
// fetches from the Go module proxy. No kubelet runs here, so every Pod the chart would run is also
// created as a server-side dry run to meet PSA's enforcement (Deployments only get warnings).
// test/chart-guide.test.ts runs the commands of docs/install-kubernetes.md.
import { execFile } from "node:child_process";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { chart, ci, helm, type K8sObject, podSpecs, render, root } from "./chart-helm.ts";
import { type KubeCluster, kubectl, startKube } from "./harness/kube.ts";

const run = promisify(execFile);

describe("charts/svc installed on a real apiserver", () => {
  let kube: KubeCluster;
  const env = () => ({ ...process.env, KUBECONFIG: kube.adminKubeconfig });
  const must = async (p: ReturnType<typeof kubectl>) => {
    const r = await p;
    if (r.code !== 0) throw new Error(`kubectl: ${r.stderr}`);
    return r.stdout;
  };
  const admin = (args: string[], stdin?: string) => must(kubectl(kube.adminKubeconfig, args, stdin));

  /** A namespace enforcing Pod Security "restricted" (latest), as the issue asks of every install. */
  async function restrictedNamespace(ns: string): Promise<void> {
    await admin(["create", "namespace", ns]);
    await admin(["label", "namespace", ns, "pod-security.kubernetes.io/enforce=restricted"]);
    await admin(["label", "namespace", ns, "pod-security.kubernetes.io/enforce-version=latest"]);
  }

  async function install(release: string, ns: string, args: string[]) {
    const r = await helm(["install", release, chart, "--namespace", ns, ...args], env());
    if (r.code !== 0) throw new Error(`helm install: ${r.stderr}`);
    return r;
  }

  beforeAll(async () => {
    kube = await startKube();
    const { stdout } = await run("bash", [join(root, "scripts", "tools", "third-party-crds.sh")]);
    const dir = stdout.trim();
    for (const f of readdirSync(dir).filter((x) => x.endsWith(".yaml"))) {
      await admin(["apply", "--server-side", "-f", join(dir, f)]);
    }
    await admin(["wait", "--for=condition=Established", "--timeout=120s", "crd", "--all"]);
  });

  afterAll(async () => {
    await kube?.stop();
  });

  it("every option on (ServiceMonitor, Certificate, Ingress, HTTPRoute, BackendTLSPolicy, TLSRoute, LoadBalancer) installs", async () => {
    await restrictedNamespace("svc-all");
    const r = await install("svc", "svc-all", ["-f", ci("all-options")]);
    expect(r.stderr).not.toMatch(/PodSecurity|violate/);
    const kinds = await admin([
      "-n",
      "svc-all",
      "get",
      "servicemonitors.monitoring.coreos.com,certificates.cert-manager.io,ingresses,httproutes,backendtlspolicies,tlsroutes,pdb",
      "-o",
      "name",
    ]);
    expect(kinds.trim().split("\n").sort()).toEqual([
      "backendtlspolicy.gateway.networking.k8s.io/svc-proxy",
      "certificate.cert-manager.io/svc-public-tls",
      "httproute.gateway.networking.k8s.io/svc-proxy",
      "ingress.networking.k8s.io/svc-proxy",
      "poddisruptionbudget.policy/svc-auth",
      "poddisruptionbudget.policy/svc-operator",
      "poddisruptionbudget.policy/svc-proxy",
      "servicemonitor.monitoring.coreos.com/svc-auth",
      "servicemonitor.monitoring.coreos.com/svc-operator",
      "servicemonitor.monitoring.coreos.com/svc-proxy",
      "tlsroute.gateway.networking.k8s.io/svc-proxy",
    ]);
    const svc = JSON.parse(await admin(["-n", "svc-all", "get", "service", "svc-proxy", "-o", "json"]));
    expect(svc.spec).toMatchObject({ type: "LoadBalancer", externalTrafficPolicy: "Local" });
    expect(svc.spec.ports[0].nodePort).toBe(30443);
  });

  it("evaluation mode installs without a database Secret", async () => {
    await restrictedNamespace("svc-eval");
    const r = await install("svc", "svc-eval", ["-f", ci("evaluation")]);
    expect(r.stdout).toContain("EVALUATION MODE");
    expect(await admin(["-n", "svc-eval", "get", "pvc", "-o", "name"])).toBe(
      "persistentvolumeclaim/svc-auth-state\n",
    );
  });

  it("every Pod the chart runs is admitted by Pod Security 'restricted' (and an unhardened one is not)", async () => {
    const asPods = (objects: K8sObject[]) =>
      podSpecs(objects).map(({ owner, metadata, spec }) => ({
        apiVersion: "v1",
        kind: "Pod",
        metadata: {
          name: owner.split("/")[1]?.concat("-psa") ?? "x",
          namespace: "svc-psa",
          labels: metadata.labels ?? {},
        },
        spec,
      }));
    await restrictedNamespace("svc-psa");
    for (const values of ["default", "all-options", "evaluation"] as const) {
      const pods = asPods(await render(["-f", ci(values)]));
      expect(pods.length).toBe(4);
      const yaml = pods.map((p) => stringify(p)).join("---\n");
      const r = await kubectl(kube.adminKubeconfig, ["apply", "--dry-run=server", "-f", "-"], yaml);
      expect(r.code, `${values}: ${r.stderr}`).toBe(0);
      expect(r.stderr).not.toMatch(/PodSecurity|violate/);
    }
    // The check has teeth: the same Pod with a capability added is refused by the namespace.
    const [pod] = asPods(await render(["-f", ci("default")]));
    const bad = structuredClone(pod);
    const c = bad?.spec.containers[0];
    if (!bad || !c) throw new Error("no Pod rendered");
    c.securityContext = { ...c.securityContext, capabilities: { drop: ["ALL"], add: ["NET_ADMIN"] } };
    const refused = await kubectl(
      kube.adminKubeconfig,
      ["apply", "--dry-run=server", "-f", "-"],
      stringify(bad),
    );
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/violates PodSecurity "restricted:latest"/);
  });
});
