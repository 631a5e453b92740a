// Generated manifests stay in step with their sources: the operator's RBAC (plain and chart
// templates) with operator/rbac.ts, and the chart's CRDs with crds/.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { RESOURCE_KINDS } from "../core/resources/index.ts";
import { expectedFiles, staleFiles } from "../operator/gen-manifests.ts";
import { operatorRules } from "../operator/rbac.ts";

const root = join(import.meta.dirname, "..");

describe("generated operator manifests", () => {
  it("are up to date (run node operator/gen-manifests.ts when this fails)", () => {
    expect(staleFiles()).toEqual([]);
  });

  it("copy every CRD into the chart byte for byte", () => {
    const crds = [...expectedFiles().keys()].filter((p) => p.startsWith("charts/svc/crds/"));
    expect(crds.length).toBe(RESOURCE_KINDS.length);
    for (const p of crds) {
      const name = p.slice("charts/svc/crds/".length);
      expect(readFileSync(join(root, p), "utf8")).toBe(readFileSync(join(root, "crds", name), "utf8"));
    }
  });

  it("give the operator a namespaced Role bound to its ServiceAccount, without list/watch on Secrets", () => {
    const docs = parseAllDocuments(readFileSync(join(root, "operator", "rbac.yaml"), "utf8")).map((d) =>
      d.toJS(),
    );
    expect(docs.map((d) => d.kind)).toEqual(["ServiceAccount", "Role", "RoleBinding"]);
    const role = docs[1];
    expect(role.rules).toEqual(operatorRules("svc-operator"));
    const secretRules = operatorRules("x").filter((r) => r.resources.includes("secrets"));
    expect(secretRules.flatMap((r) => r.verbs).sort()).toEqual(["create", "get"]);
    expect(docs[2].subjects).toEqual([
      { kind: "ServiceAccount", name: "svc-operator", namespace: "svc-system" },
    ]);
  });
});
