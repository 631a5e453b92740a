// docs/install-kubernetes.md, run as written: its ```sh commands are read from the file and run
// with bash against a real kube-apiserver (test/harness/kube.ts), the pinned helm first on PATH, in
// a scratch folder where `charts/` is this repository's. Commands that need Pods to run (rollout
// status, `helm test`, the reset link, port-forward, `svcd agent`) are left to the end-to-end
// cluster test; everything else in the guide runs here, in the guide's order.
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRootCa, generateEcdsaP256, issueTlsServerCert, privateKeyToPem } from "../core/certs/x509.ts";
import { systemClock } from "../core/clock.ts";
import { type DocCommand, docCommands, root } from "./chart-helm.ts";
import { type KubeCluster, kubectl, startKube } from "./harness/kube.ts";
import { toolPath } from "./harness/tools.ts";

const run = promisify(execFile);

describe("docs/install-kubernetes.md, command by command", () => {
  let kube: KubeCluster;
  let cwd = "";
  let guide: DocCommand[] = [];
  const ran = new Set<DocCommand>();

  /** The guide's commands in a section (by number) that start with `prefix`. */
  const pick = (section: string, prefix: string) => {
    const found = guide.filter((c) => c.section.startsWith(`${section}. `) && c.text.startsWith(prefix));
    if (found.length === 0)
      throw new Error(`docs/install-kubernetes.md §${section} has no "${prefix}" command`);
    return found;
  };

  async function sh(script: string): Promise<{ stdout: string; stderr: string }> {
    try {
      return await run("bash", ["-euo", "pipefail", "-c", script], {
        cwd,
        env: {
          ...process.env,
          KUBECONFIG: kube.adminKubeconfig,
          PATH: `${dirname(toolPath("helm"))}:${process.env["PATH"] ?? ""}`,
        },
        maxBuffer: 16 * 1024 * 1024,
      });
    } catch (err) {
      const e = err as { stderr?: string; stdout?: string };
      throw new Error(`${script}\nfailed: ${e.stderr ?? ""}${e.stdout ?? ""}`);
    }
  }

  /** Runs guide commands in order, each as written; returns the last one's output. */
  async function runAll(commands: DocCommand[], rewrite: (t: string) => string = (t) => t) {
    let last = { stdout: "", stderr: "" };
    for (const c of commands) {
      last = await sh(rewrite(c.text));
      ran.add(c);
    }
    return last;
  }

  const get = async (args: string[]) => {
    const r = await kubectl(kube.adminKubeconfig, args);
    if (r.code !== 0) throw new Error(r.stderr);
    return r.stdout;
  };

  beforeAll(async () => {
    guide = docCommands(await readFile(join(root, "docs", "install-kubernetes.md"), "utf8"));
    kube = await startKube();
    cwd = await mkdtemp(join(tmpdir(), "svc-guide-"));
    await symlink(join(root, "charts"), join(cwd, "charts"));
    // The kinds the guide's optional objects use (ServiceMonitor, Certificate, Gateway API).
    const { stdout } = await run("bash", [join(root, "scripts", "tools", "third-party-crds.sh")]);
    await sh(`kubectl apply --server-side -f ${stdout.trim()}`);
    // The certificate files §2 turns into a Secret (a public CA would have issued them).
    const ca = generateEcdsaP256();
    const caPem = await createRootCa({
      privateKey: ca.privateKey,
      commonName: "Guide CA",
      clock: systemClock,
    });
    const key = generateEcdsaP256();
    const cert = await issueTlsServerCert(
      { certPem: caPem, privateKey: ca.privateKey },
      {
        publicKey: key.publicKey,
        commonName: "svc.example.com",
        dnsNames: ["svc.example.com"],
        clock: systemClock,
      },
    );
    await writeFile(join(cwd, "tls.crt"), cert);
    await writeFile(join(cwd, "tls.key"), privateKeyToPem(key.privateKey));
  });

  afterAll(async () => {
    await kube?.stop();
    if (cwd) await rm(cwd, { recursive: true, force: true });
  });

  it("§1 namespace (PSA restricted) and database Secret, §2 the TLS Secret, §3 helm install", async () => {
    await runAll(guide.filter((c) => c.section.startsWith("1. ")));
    expect(await get(["get", "namespace", "svc-system", "-o", "jsonpath={.metadata.labels}"])).toContain(
      '"pod-security.kubernetes.io/enforce":"restricted"',
    );
    const url = await get([
      "-n",
      "svc-system",
      "get",
      "secret",
      "svc-postgres",
      "-o",
      "jsonpath={.data.url}",
    ]);
    expect(Buffer.from(url, "base64").toString()).toMatch(/^postgres:\/\/svc:/);
    await runAll(pick("2", "kubectl -n svc-system create secret tls"));
    const out = await runAll(pick("3", "helm install"));
    // NOTES.txt: the reset-link command of §4, exactly.
    expect(out.stdout).toContain(pick("4", "kubectl -n svc-system get secret svc-first-admin")[0]?.text);
    expect(out.stderr).not.toMatch(/PodSecurity|violate/);
    expect(await get(["-n", "svc-system", "get", "deployments", "-o", "name"])).toBe(
      "deployment.apps/svc-auth\ndeployment.apps/svc-operator\ndeployment.apps/svc-proxy\n",
    );
    const config = await get([
      "-n",
      "svc-system",
      "get",
      "configmap",
      "svc-config",
      "-o",
      "jsonpath={.data.svc\\.yaml}",
    ]);
    expect(config).toContain('public_addr: "svc.example.com:443"');
  });

  it("§4 a User, §5 Ingress / TLSRoute / HTTPRoute / LoadBalancer, §7 CRDs then upgrade, §11 ServiceMonitors", async () => {
    await runAll(pick("4", "kubectl -n svc-system apply"));
    expect(
      await get(["-n", "svc-system", "get", "users.svc.dev", "alice", "-o", "jsonpath={.spec.roles}"]),
    ).toBe('["access"]');
    await runAll([...pick("5", "helm upgrade"), ...pick("5", "kubectl -n svc-system get service")]);
    await runAll(guide.filter((c) => c.section.startsWith("7. ")));
    await runAll(pick("11", "helm upgrade"));
    const names = await get([
      "-n",
      "svc-system",
      "get",
      "ingresses,tlsroutes,httproutes,backendtlspolicies,servicemonitors.monitoring.coreos.com",
      "-o",
      "name",
    ]);
    expect(names.trim().split("\n").sort()).toEqual([
      "backendtlspolicy.gateway.networking.k8s.io/svc-proxy",
      "httproute.gateway.networking.k8s.io/svc-proxy",
      "ingress.networking.k8s.io/svc-proxy",
      "servicemonitor.monitoring.coreos.com/svc-auth",
      "servicemonitor.monitoring.coreos.com/svc-operator",
      "servicemonitor.monitoring.coreos.com/svc-proxy",
      "tlsroute.gateway.networking.k8s.io/svc-proxy",
    ]);
    // --reuse-values kept every earlier choice: the LoadBalancer and the public TLS Secret.
    expect(
      await get(["-n", "svc-system", "get", "service", "svc-proxy", "-o", "jsonpath={.spec.type}"]),
    ).toBe("LoadBalancer");
    const ingressTls = await get([
      "-n",
      "svc-system",
      "get",
      "ingress",
      "svc-proxy",
      "-o",
      "jsonpath={.spec.tls}",
    ]);
    expect(ingressTls).toContain('"secretName":"svc-public-tls"');
    expect(await get(["-n", "svc-system", "get", "deployment", "svc-proxy", "-o", "json"])).toContain(
      '"secretName": "svc-public-tls"',
    );
  });

  it("§6 a JoinToken as the guide writes it is accepted by the CRD", async () => {
    // The three commands share shell variables: one script, as a user's shell would.
    const join6 = guide.filter((c) => c.section.startsWith("6. "));
    const upToApply = join6.slice(
      0,
      join6.findIndex((c) => c.text.startsWith("kubectl -n svc-system apply")) + 1,
    );
    expect(upToApply.length).toBe(3);
    await sh(upToApply.map((c) => c.text).join("\n"));
    for (const c of upToApply) ran.add(c);
    const spec = JSON.parse(
      await get(["-n", "svc-system", "get", "jointoken", "web-1", "-o", "jsonpath={.spec}"]),
    );
    expect(spec.secret_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(Date.parse(spec.expires)).toBeGreaterThan(Date.now());
  });

  it("§8 helm uninstall keeps the CRDs, CA Secrets and the first admin; §9 backup and restore; §10 reinstall in evaluation mode", async () => {
    // A CA Secret as the operator creates it (no operator runs here).
    await get([
      "-n",
      "svc-system",
      "create",
      "secret",
      "generic",
      "svc-ca-host",
      "--from-literal=ca.json={}",
    ]);
    await get(["-n", "svc-system", "label", "secret", "svc-ca-host", "svc.dev/ca=host"]);
    const out = await runAll(pick("8", "helm uninstall"));
    expect(out.stdout).toMatch(/kept due to the resource policy:\s*\[User\] admin/);
    expect(
      await get(["-n", "svc-system", "get", "deployments,services,configmaps", "-o", "name"]),
    ).not.toMatch(/svc-(auth|proxy|operator|config)/);
    expect(await get(["-n", "svc-system", "get", "users.svc.dev", "-o", "name"])).toBe(
      "user.svc.dev/admin\nuser.svc.dev/alice\n",
    );
    expect(await get(["get", "crd", "-l", "app.kubernetes.io/part-of=svc", "-o", "name"])).toContain(
      "users.svc.dev",
    );

    await runAll(pick("9", "kubectl -n svc-system get secrets"));
    expect(await readFile(join(cwd, "svc-ca-backup.yaml"), "utf8")).toContain("svc-ca-host");
    await get(["-n", "svc-system", "delete", "secret", "svc-ca-host"]);
    await runAll(pick("9", "kubectl -n svc-system create"));
    const restored = await get([
      "-n",
      "svc-system",
      "get",
      "secret",
      "svc-ca-host",
      "-o",
      "jsonpath={.data.ca\\.json}",
    ]);
    expect(Buffer.from(restored, "base64").toString()).toBe("{}");

    // A reinstall into the same namespace adopts the kept first-admin User.
    const evaluation = await runAll(pick("10", "helm install"));
    expect(evaluation.stdout).toContain("EVALUATION MODE");
    const config = await get([
      "-n",
      "svc-system",
      "get",
      "configmap",
      "svc-config",
      "-o",
      "jsonpath={.data.svc\\.yaml}",
    ]);
    expect(config).toContain("type: sqlite");
    expect(
      await get(["-n", "svc-system", "get", "deployment", "svc-auth", "-o", "jsonpath={.spec.replicas}"]),
    ).toBe("1");
  });

  it("§2 the cert-manager install (into a namespace of its own)", async () => {
    await sh("kubectl create namespace svc-cm");
    await runAll(pick("2", "helm install"), (t) => t.replaceAll("svc-system", "svc-cm"));
    const cert = JSON.parse(
      await get(["-n", "svc-cm", "get", "certificates.cert-manager.io", "svc-public-tls", "-o", "json"]),
    );
    expect(cert.spec).toMatchObject({ dnsNames: ["svc.example.com"], issuerRef: { name: "letsencrypt" } });
  });

  it("charts/svc/README.md shows only commands of the guide (so they run here too)", async () => {
    const readme = docCommands(await readFile(join(root, "charts", "svc", "README.md"), "utf8"));
    expect(readme.length).toBeGreaterThan(0);
    for (const c of readme) expect(guide.map((g) => g.text)).toContain(c.text);
  });

  it("leaves to the end-to-end cluster test only the commands that need running Pods", () => {
    const left = guide.filter((c) => !ran.has(c)).map((c) => c.text.split("\n")[0]);
    expect(left).toEqual([
      "kubectl -n svc-system rollout status deployment/svc-operator deployment/svc-auth deployment/svc-proxy",
      "helm test svc --namespace svc-system",
      "kubectl -n svc-system get secret svc-first-admin -o jsonpath='{.data.reset-url}' | base64 -d",
      "kubectl -n svc-system port-forward service/svc-proxy 3080:443",
      "kubectl -n svc-system wait --for=condition=Ready jointoken/web-1",
      "kubectl -n svc-system get secret svc-proxy-identity -o jsonpath='{.data.ca\\.crt}' | base64 -d > host-ca.pem",
      'echo "web-1.$secret"',
      "svcd agent --proxy svc.example.com:443 --tunnel --ca-file host-ca.pem \\",
    ]);
  });
});
