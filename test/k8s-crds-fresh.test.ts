// crds/ must be exactly what scripts/gen-crds.ts makes from the current schemas: a stale CRD would
// let the apiserver accept objects auth then refuses (or the reverse). No apiserver needed.
import { execFile } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { RESOURCE_KINDS } from "../core/resources/index.ts";
import { crdName, DEFAULT_CRD_DIR, generateCrds, printerColumns, staleCrds } from "../scripts/gen-crds.ts";

const run = promisify(execFile);
const script = resolve(import.meta.dirname, "..", "scripts", "gen-crds.ts");
const work = mkdtempSync(join(tmpdir(), "svc-crds-fresh-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

async function check(dir: string): Promise<{ code: number; stderr: string }> {
  try {
    await run(process.execPath, [script, "--check", "--dir", dir]);
    return { code: 0, stderr: "" };
  } catch (err) {
    const e = err as { code?: number; stderr?: string };
    return { code: e.code ?? -1, stderr: e.stderr ?? "" };
  }
}

describe("crds/", () => {
  it("is fresh: `gen-crds.ts --check` exits 0 on the committed folder", async () => {
    expect(staleCrds(DEFAULT_CRD_DIR)).toEqual([]);
    expect((await check(DEFAULT_CRD_DIR)).code).toBe(0);
  });

  it("--check fails, naming the file, when a CRD is edited, missing or extra", async () => {
    const copy = join(work, "edited");
    cpSync(DEFAULT_CRD_DIR, copy, { recursive: true });
    const file = join(copy, "roles.svc.dev.yaml");
    writeFileSync(file, readFileSync(file, "utf8").replace("maxLength: 253", "maxLength: 254"));
    const edited = await check(copy);
    expect(edited.code).toBe(1);
    expect(edited.stderr).toContain("roles.svc.dev.yaml");

    const missing = join(work, "missing");
    cpSync(DEFAULT_CRD_DIR, missing, { recursive: true });
    rmSync(join(missing, "users.svc.dev.yaml"));
    writeFileSync(join(missing, "old.svc.dev.yaml"), "kind: CustomResourceDefinition\n");
    expect(staleCrds(missing)).toEqual(["old.svc.dev.yaml", "users.svc.dev.yaml"]);
    expect((await check(missing)).code).toBe(1);
  });

  it("has one namespaced v1 CRD per kind with status, columns incl. Ready, short names and the category", () => {
    const files = generateCrds();
    expect([...files.keys()].sort()).toEqual(RESOURCE_KINDS.map((k) => `${crdName(k)}.yaml`).sort());
    for (const kind of RESOURCE_KINDS) {
      const crd = parse(files.get(`${crdName(kind)}.yaml`) ?? "");
      expect(crd.apiVersion).toBe("apiextensions.k8s.io/v1");
      expect(crd.spec.scope).toBe("Namespaced");
      expect(crd.spec.names.categories).toEqual(["svcdev"]);
      expect(crd.spec.names.shortNames.length).toBeGreaterThan(0);
      const [version] = crd.spec.versions;
      expect(version.subresources).toEqual({ status: {} });
      const names = version.additionalPrinterColumns.map((c: { name: string }) => c.name);
      expect(names).toContain("Ready");
      expect(names).toEqual(printerColumns(kind).map((c) => c.name));
      // apiextensions v1 refuses `additionalProperties: false` next to `properties`.
      expect(JSON.stringify(version.schema)).not.toContain('"additionalProperties":false');
    }
  });
});
