// The Helm chart: `helm lint`, `helm template`, and the rendered CRDs, RBAC, ConfigMap and Services
// applied to a real kube-apiserver (Deployments server-side dry-run: no scheduler runs here). The
// chart's operator RBAC must be exactly what the tests run the operator with (operator/rbac.yaml).
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse, parseAllDocuments, stringify } from "yaml";
import { RESOURCE_KINDS } from "../core/resources/index.ts";
import type { PolicyRule } from "../operator/rbac.ts";
import { checkConfig } from "../server/config.ts";
import { kubectl } from "./harness/kube.ts";
import { toolPath } from "./harness/tools.ts";
import { must, NS, type OperatorTestCluster, startOperatorCluster } from "./operator-fixture.ts";

const run = promisify(execFile);
const root = join(import.meta.dirname, "..");
const chart = join(root, "charts", "svc");
// The defaults plus the one required value (the PostgreSQL Secret's name).
const values = join(chart, "ci", "default-values.yaml");

interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string };
  [key: string]: unknown;
}

async function helm(args: string[]): Promise<string> {
  const { stdout } = await run(toolPath("helm"), args, { maxBuffer: 32 * 1024 * 1024 });
  return stdout;
}

describe("Helm chart charts/svc", () => {
  let cluster: OperatorTestCluster | undefined;
  let rendered: K8sObject[] = [];
  const admin = () => cluster?.adminKubeconfig ?? "";
  // Kubernetes kinds only: the chart also ships svc.dev Roles (the presets), counted apart.
  const ofKind = (kind: string) =>
    rendered.filter((o) => o.kind === kind && !o.apiVersion.startsWith("svc.dev/"));
  const presetRoles = () => rendered.filter((o) => o.apiVersion.startsWith("svc.dev/") && o.kind === "Role");
  const named = (kind: string, name: string) => ofKind(kind).find((o) => o.metadata.name === name);

  beforeAll(async () => {
    const text = await helm(["template", "svc", chart, "--namespace", NS, "--include-crds", "-f", values]);
    rendered = parseAllDocuments(text)
      .map((d) => d.toJS() as K8sObject | null)
      .filter((o): o is K8sObject => o !== null);
    cluster = await startOperatorCluster();
  });

  afterAll(async () => {
    await cluster?.stop();
  });

  it("passes helm lint", async () => {
    const out = await helm(["lint", chart, "--strict", "-f", values]);
    expect(out).toMatch(/1 chart\(s\) linted, 0 chart\(s\) failed/);
  });

  it("renders the operator, auth and proxy with Services, ServiceAccounts, RBAC and the CRDs", () => {
    expect(
      ofKind("Deployment")
        .map((d) => d.metadata.name)
        .sort(),
    ).toEqual(["svc-auth", "svc-operator", "svc-proxy"]);
    expect(
      ofKind("Service")
        .map((d) => d.metadata.name)
        .sort(),
    ).toEqual([
      "svc-auth",
      "svc-auth-diagnostics",
      "svc-operator-diagnostics",
      "svc-proxy",
      "svc-proxy-diagnostics",
    ]);
    expect(ofKind("ServiceAccount").length).toBe(3);
    // One Role per component, all generated from operator/rbac.ts.
    expect(ofKind("Role").length).toBe(3);
    expect(ofKind("RoleBinding").length).toBe(3);
    expect(ofKind("CustomResourceDefinition").length).toBe(RESOURCE_KINDS.length);
  });

  it("gives the operator exactly the RBAC the tests run it with", () => {
    const plain = parseAllDocuments(readFileSync(join(root, "operator", "rbac.yaml"), "utf8")).map(
      (d) => d.toJS() as K8sObject & { rules?: unknown; subjects?: unknown },
    );
    const role = named("Role", "svc-operator") as (K8sObject & { rules?: unknown }) | undefined;
    const binding = named("RoleBinding", "svc-operator") as (K8sObject & { subjects?: unknown }) | undefined;
    expect(role?.rules).toEqual(plain.find((d) => d.kind === "Role")?.rules);
    expect(binding?.subjects).toEqual(plain.find((d) => d.kind === "RoleBinding")?.subjects);
  });

  it("lets auth change only the proxy identity, CA rotation state and first-admin Secrets, by name (plus create, which takes no name)", () => {
    const role = named("Role", "svc-auth") as (K8sObject & { rules?: PolicyRule[] }) | undefined;
    const secretRules = (role?.rules ?? []).filter((r) => r.resources.includes("secrets"));
    expect(secretRules).toEqual([
      { apiGroups: [""], resources: ["secrets"], verbs: ["get", "create"] },
      {
        apiGroups: [""],
        resources: ["secrets"],
        verbs: ["get", "update"],
        resourceNames: ["svc-proxy-identity"],
      },
      // The CA rotation state, named after the CA Secrets' prefix (auth's ca_store.secret_prefix).
      {
        apiGroups: [""],
        resources: ["secrets"],
        verbs: ["get", "update"],
        resourceNames: ["svc-ca-rotation"],
      },
      // The first admin's reset-link Secret, by name (auth.first_admin.secret_name in the config).
      {
        apiGroups: [""],
        resources: ["secrets"],
        verbs: ["get", "update", "delete"],
        resourceNames: ["svc-first-admin"],
      },
    ]);
    // The name the proxy mounts is the name auth may update.
    expect(JSON.stringify(named("Deployment", "svc-proxy"))).toContain('"secretName":"svc-proxy-identity"');
  });

  it("renders a config svcd accepts; proxy.trustedProxies reaches proxy.trusted_proxies", async () => {
    const configOf = (objects: K8sObject[]) => {
      const cm = objects.find((o) => o.kind === "ConfigMap" && o.metadata.name === "svc-config") as
        | (K8sObject & { data: Record<string, string> })
        | undefined;
      return checkConfig(parse(cm?.data["svc.yaml"] ?? ""), "chart");
    };
    expect(configOf(rendered).proxy.trusted_proxies).toBeUndefined();
    const text = await helm([
      "template",
      "svc",
      chart,
      "--namespace",
      NS,
      "-f",
      values,
      "--set",
      "proxy.trustedProxies={10.244.0.0/16,192.0.2.10}",
    ]);
    const objects = parseAllDocuments(text)
      .map((d) => d.toJS() as K8sObject | null)
      .filter((o): o is K8sObject => o !== null);
    expect(configOf(objects).proxy.trusted_proxies).toEqual(["10.244.0.0/16", "192.0.2.10"]);
  });

  it("mounts auth's PostgreSQL URL from the Secret as a file (backend.url_file) and gives the proxy none", () => {
    const auth = JSON.stringify(named("Deployment", "svc-auth"));
    const proxy = JSON.stringify(named("Deployment", "svc-proxy"));
    expect(auth).toContain('"secretName":"svc-postgres"');
    expect(proxy).not.toContain("svc-postgres");
    expect(JSON.stringify(named("ConfigMap", "svc-config"))).toContain("url_file: /var/run/svc/postgres/url");
  });

  it("applies to a real apiserver: CRDs, RBAC, ConfigMap, Services; Deployments pass a server-side dry run", async () => {
    const ns = await kubectl(admin(), ["create", "namespace", NS]);
    if (ns.code !== 0 && !ns.stderr.includes("AlreadyExists")) throw new Error(ns.stderr);
    const yaml = (objs: K8sObject[]) => objs.map((o) => stringify(o)).join("---\n");
    await must(
      kubectl(admin(), ["apply", "--server-side", "-f", "-"], yaml(ofKind("CustomResourceDefinition"))),
    );
    await must(
      kubectl(admin(), [
        "wait",
        "--for=condition=Established",
        "--timeout=60s",
        "crd",
        "-l",
        "app.kubernetes.io/part-of=svc",
      ]),
    );
    const applied = rendered.filter(
      (o) => !["CustomResourceDefinition", "Deployment", "Pod"].includes(o.kind),
    );
    await must(kubectl(admin(), ["apply", "-f", "-"], yaml(applied)));
    // The preset Roles land as svc.dev Roles with their login templates intact.
    expect(presetRoles().map((r) => r.metadata.name)).toEqual(["admin", "access"]);
    const adminRole = await must(kubectl(admin(), ["get", "roles.svc.dev", "admin", "-n", NS, "-o", "json"]));
    expect(JSON.parse(adminRole).spec.allow.logins).toContain("{{internal.logins}}");
    const dry = await must(
      kubectl(
        admin(),
        ["apply", "--dry-run=server", "-f", "-"],
        yaml([...ofKind("Deployment"), ...ofKind("Pod")]),
      ),
    );
    expect(dry).toContain("deployment.apps/svc-operator");
    // The chart's RBAC is what the operator identity now has.
    const can = async (verb: string, what: string) =>
      (
        await kubectl(cluster?.operatorKubeconfig ?? "", ["auth", "can-i", "-n", NS, verb, what])
      ).stdout.trim();
    expect(await can("patch", "roles.svc.dev/status")).toBe("yes");
    expect(await can("watch", "jointokens.svc.dev")).toBe("yes");
    expect(await can("list", "secrets")).toBe("no");
    // auth's identity, bound by the same rendered chart: the proxy identity Secret by name only.
    const authCan = async (verb: string, what: string) =>
      (
        await kubectl(admin(), [
          "auth",
          "can-i",
          "-n",
          NS,
          `--as=system:serviceaccount:${NS}:svc-auth`,
          verb,
          what,
        ])
      ).stdout.trim();
    expect(await authCan("update", "secrets/svc-proxy-identity")).toBe("yes");
    expect(await authCan("update", "secrets/svc-ca-host")).toBe("no");
    expect(await authCan("create", "secrets")).toBe("yes");
    expect(await authCan("create", "users.svc.dev")).toBe("yes");
    expect(await authCan("create", "roles.svc.dev")).toBe("no");
  });
});
