// The supported CRD upgrade (docs/operator.md, "Upgrading the CRDs"): Helm installs charts/svc/crds/
// once and never upgrades them, so before `helm upgrade` the user runs
//   kubectl apply --server-side --force-conflicts -f charts/svc/crds/
// Tested from the previous CRD version (git commit ac94942), installed the way Helm installs CRDs
// (a create, field manager "helm"): objects made under the old CRDs are still served and valid
// after the command, the served schemas are exactly the new files', a field the installed CRD
// lacked is refused before and works after, and today's example objects pass server-side validation.
// A kind added since (Lock) has no CRD before; the same command creates it.
import { execFile } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse, stringify } from "yaml";
import { kindInfo, RESOURCE_KINDS, validateResource } from "../core/resources/index.ts";
import { type KubeCluster, kubectl, startKube } from "./harness/kube.ts";
import { examples, toYaml } from "./k8s-examples.ts";
import { must } from "./operator-fixture.ts";

const git = promisify(execFile);
const root = join(import.meta.dirname, "..");
const PREVIOUS = "ac94942";
const NS = "svc-crd-upgrade";
/** The documented command; the folder given absolute because the test runs elsewhere. */
const UPGRADE = ["apply", "--server-side", "--force-conflicts", "-f", `${join(root, "charts/svc/crds")}/`];

interface Crd {
  metadata: { name: string };
  spec: { versions: { name: string; schema: { openAPIV3Schema: Schema } }[] };
  status?: { storedVersions?: string[] };
}
interface Schema {
  properties?: Record<string, Schema>;
  items?: Schema;
  additionalProperties?: Schema | boolean;
}

/** Every property path of a schema ("spec.allow.logins[]"). */
function paths(s: Schema | undefined, prefix = ""): string[] {
  if (!s) return [];
  const out: string[] = [];
  for (const [k, v] of Object.entries(s.properties ?? {})) {
    const p = prefix ? `${prefix}.${k}` : k;
    out.push(p, ...paths(v, p));
  }
  if (s.items) out.push(...paths(s.items, `${prefix}[]`));
  if (typeof s.additionalProperties === "object") out.push(...paths(s.additionalProperties, `${prefix}{}`));
  return out;
}

describe("CRD upgrade from the previous version with the documented command", () => {
  let kube: KubeCluster | undefined;
  const admin = () => kube?.adminKubeconfig ?? "";
  const oldCrds = new Map<string, string>();
  const installed = new Map<string, string>();

  beforeAll(async () => {
    kube = await startKube();
    await must(kubectl(admin(), ["create", "namespace", NS]));
    const { stdout } = await git("git", ["ls-tree", "--name-only", PREVIOUS, "charts/svc/crds/"], {
      cwd: root,
    });
    for (const path of stdout.split("\n").filter((l) => l.endsWith(".yaml"))) {
      oldCrds.set(
        path,
        (await git("git", ["show", `${PREVIOUS}:${path}`], { cwd: root, maxBuffer: 16 << 20 })).stdout,
      );
    }
  }, 300_000);

  afterAll(async () => {
    await kube?.stop();
  }, 60_000);

  it("objects made under the old CRDs survive the upgrade; new schemas are served; current objects validate", async () => {
    // Kinds added since (Lock) have no CRD before the upgrade: the command creates theirs.
    const oldKinds = RESOURCE_KINDS.filter((k) =>
      oldCrds.has(`charts/svc/crds/${kindInfo[k].plural}.svc.dev.yaml`),
    );
    expect(oldCrds.size).toBe(oldKinds.length);
    expect(oldKinds.length).toBeGreaterThanOrEqual(5);
    // As `helm install` puts crds/ in: a plain create by the field manager "helm". The CRDs of
    // ac94942 equal today's, so the Role CRD goes in without `spec.options.lock`, standing for a
    // field a later version adds: the upgrade must make it work.
    for (const [path, text] of oldCrds) {
      let body = text;
      if (path.endsWith("/roles.svc.dev.yaml")) {
        const crd = parse(text) as Crd;
        for (const v of crd.spec.versions) {
          const options = v.schema.openAPIV3Schema.properties?.["spec"]?.properties?.["options"];
          if (options?.properties) delete options.properties["lock"];
        }
        body = stringify(crd);
      }
      installed.set(path, body);
      await must(kubectl(admin(), ["create", "--field-manager=helm", "-f", "-"], body));
    }
    const crdNames = RESOURCE_KINDS.map((k) => `crd/${kindInfo[k].plural}.svc.dev`);
    const oldCrdNames = oldKinds.map((k) => `crd/${kindInfo[k].plural}.svc.dev`);
    await must(kubectl(admin(), ["wait", "--for=condition=Established", "--timeout=120s", ...oldCrdNames]));
    const before = examples();
    await must(kubectl(admin(), ["-n", NS, "create", "-f", "-"], toYaml(...oldKinds.map((k) => before[k]))));
    const locked = (name: string) =>
      `apiVersion: svc.dev/v1\nkind: Role\nmetadata:\n  name: ${name}\nspec:\n  allow:\n    logins: [x]\n  options:\n    lock: true\n`;
    const lockOf = async (name: string) =>
      await must(
        kubectl(admin(), ["-n", NS, "get", `roles.svc.dev/${name}`, "-o", "jsonpath={.spec.options.lock}"]),
      );
    // Before the upgrade the apiserver refuses the field it does not know (kubectl's strict
    // field validation).
    const refused = await kubectl(admin(), ["-n", NS, "apply", "-f", "-"], locked("lock-before"));
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('unknown field "spec.options.lock"');

    // The documented command.
    const t0 = Date.now();
    const upgrade = await kubectl(admin(), UPGRADE);
    expect(upgrade.code, upgrade.stderr).toBe(0);
    await must(kubectl(admin(), ["wait", "--for=condition=Established", "--timeout=120s", ...crdNames]));
    console.log(`CRD upgrade command took ${Date.now() - t0} ms`);

    let added = 0;
    for (const file of readdirSync(join(root, "charts/svc/crds")).filter((f) => f.endsWith(".yaml"))) {
      const wanted = parse(readFileSync(join(root, "charts/svc/crds", file), "utf8")) as Crd;
      const old = parse(installed.get(`charts/svc/crds/${file}`) ?? "") as Crd | null;
      const served = JSON.parse(
        await must(kubectl(admin(), ["get", `crd/${wanted.metadata.name}`, "-o", "json"])),
      ) as Crd;
      // What the apiserver serves now is the new file's schema, field for field.
      for (const v of wanted.spec.versions) {
        const s = served.spec.versions.find((x) => x.name === v.name);
        expect(s?.schema.openAPIV3Schema, `${file} ${v.name}`).toEqual(v.schema.openAPIV3Schema);
        const oldV = old?.spec.versions.find((x) => x.name === v.name);
        const oldPaths = new Set(paths(oldV?.schema.openAPIV3Schema));
        const newPaths = paths(v.schema.openAPIV3Schema).filter((p) => !oldPaths.has(p));
        added += newPaths.length;
        for (const p of newPaths) expect(paths(s?.schema.openAPIV3Schema)).toContain(p);
      }
      expect(served.status?.storedVersions).toEqual(["v1"]);
    }
    console.log(`schema properties new since the installed CRDs: ${added}`);
    expect(added).toBeGreaterThanOrEqual(1);
    // The new field now works.
    await must(kubectl(admin(), ["-n", NS, "apply", "-f", "-"], locked("lock-after")));
    expect(await lockOf("lock-after")).toBe("true");
    await must(kubectl(admin(), ["-n", NS, "apply", "-f", "-"], locked("lock-before")));
    expect(await lockOf("lock-before")).toBe("true");

    // Objects created under the old CRDs: still served, and valid for today's code.
    for (const kind of oldKinds) {
      const name = String(before[kind].metadata["name"]);
      const obj = JSON.parse(
        await must(
          kubectl(admin(), ["-n", NS, "get", `${kindInfo[kind].plural}.svc.dev/${name}`, "-o", "json"]),
        ),
      ) as Record<string, unknown> & { metadata: Record<string, unknown> };
      delete obj.metadata["managedFields"];
      const checked = validateResource(obj);
      expect(checked.ok, `${kind}/${name}: ${checked.ok ? "" : checked.errors.join("; ")}`).toBe(true);
    }
    // Every current field validates server-side under the upgraded CRDs.
    const dry = await kubectl(
      admin(),
      ["-n", NS, "apply", "--server-side", "--dry-run=server", "-f", "-"],
      toYaml(...Object.values(examples())),
    );
    expect(dry.code, dry.stderr).toBe(0);
    // Running it again changes nothing and still succeeds (safe before every helm upgrade).
    const again = await kubectl(admin(), UPGRADE);
    expect(again.code, again.stderr).toBe(0);
  }, 300_000);
});
