import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FolderSource } from "./folder.ts";
import type { SourceEvent } from "./source.ts";

const role = (name: string, login: string): string => `apiVersion: svc.dev/v1
kind: Role
metadata:
  name: ${name}
spec:
  allow:
    logins: ["${login}"]
    node_labels:
      env: ["dev"]
`;

async function until(cond: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error("condition not reached in time");
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe("FolderSource", () => {
  let dir: string;
  let source: FolderSource;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "svc-folder-"));
  });
  afterEach(async () => {
    await source?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it("loads multi-document manifests and reports synced", async () => {
    await writeFile(join(dir, "roles.yaml"), `${role("dev", "ubuntu")}---\n${role("ops", "root")}`);
    source = new FolderSource({ dir });
    await source.start();
    expect(source.synced()).toBe(true);
    expect(
      source
        .list("Role")
        .map((r) => r.metadata.name)
        .sort(),
    ).toEqual(["dev", "ops"]);
    expect(source.get("Role", "ops")?.spec.allow?.logins).toEqual(["root"]);
    expect(source.problems()).toEqual([]);
  });

  it("keeps the last good version of a document that turns bad and reports file and index", async () => {
    const file = join(dir, "roles.yaml");
    await writeFile(file, `${role("dev", "ubuntu")}---\n${role("ops", "root")}`);
    source = new FolderSource({ dir, debounceMs: 20 });
    await source.start();
    const events: SourceEvent[] = [];
    source.subscribe((e) => events.push(e));

    // Second document gets a wrong type; the first changes validly.
    await writeFile(
      file,
      `${role("dev", "admin")}---\n${role("ops", "root").replace('logins: ["root"]', "logins: 7")}`,
    );
    await until(() => source.get("Role", "dev")?.spec.allow?.logins?.[0] === "admin");
    expect(source.get("Role", "ops")?.spec.allow?.logins).toEqual(["root"]);
    const problems = source.problems();
    expect(problems).toHaveLength(1);
    expect(problems[0]?.origin).toBe(file);
    expect(problems[0]?.document).toBe(1);
    expect(problems[0]?.reason).toMatch(/logins/);
    expect(events.map((e) => `${e.type}:${e.resource.metadata.name}`)).toEqual(["update:dev"]);
  });

  it("survives YAML syntax errors and removes resources whose file is deleted", async () => {
    const a = join(dir, "a.yaml");
    await writeFile(a, role("dev", "ubuntu"));
    source = new FolderSource({ dir, debounceMs: 20 });
    await source.start();
    await writeFile(a, "kind: Role\nmetadata: [unclosed\n");
    await until(() => source.problems().length > 0);
    expect(source.get("Role", "dev")).toBeDefined();
    await rm(a);
    await until(() => source.get("Role", "dev") === undefined);
    expect(source.list("Role")).toEqual([]);
  });

  it("reports duplicates and keeps the first by path order", async () => {
    await writeFile(join(dir, "a.yaml"), role("dev", "first"));
    await writeFile(join(dir, "b.yaml"), role("dev", "second"));
    source = new FolderSource({ dir });
    await source.start();
    expect(source.get("Role", "dev")?.spec.allow?.logins).toEqual(["first"]);
    expect(source.problems()[0]?.reason).toMatch(/duplicate Role\/dev/);
  });

  it("writes managed resources atomically and refuses to overwrite hand-written ones", async () => {
    await writeFile(join(dir, "hand.yaml"), role("dev", "ubuntu"));
    source = new FolderSource({ dir });
    await source.start();
    await source.apply({
      apiVersion: "svc.dev/v1",
      kind: "User",
      metadata: { name: "alice" },
      spec: { roles: ["dev"], traits: { logins: ["alice"] } },
    });
    const file = join(dir, "managed", "user-alice.yaml");
    expect(await readFile(file, "utf8")).toMatch(/name: alice/);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(source.get("User", "alice")?.spec.roles).toEqual(["dev"]);

    const dev = source.get("Role", "dev");
    expect(dev).toBeDefined();
    if (dev) await expect(source.apply(dev)).rejects.toThrow(/hand\.yaml/);
    await expect(source.remove("Role", "dev")).rejects.toThrow(/hand\.yaml/);
    await source.remove("User", "alice");
    expect(source.get("User", "alice")).toBeUndefined();
    await expect(source.remove("User", "alice")).rejects.toThrow(/not found/);
  });

  it("reads Apps and reports one that reserves a proxy header, keeping the good ones", async () => {
    const app = (name: string, header: string) => `apiVersion: svc.dev/v1
kind: App
metadata:
  name: ${name}
  labels: {env: staging}
spec:
  uri: http://127.0.0.1:8080
  rewrite:
    headers: [{name: ${header}, value: "{{user}}"}]
`;
    await writeFile(
      join(dir, "apps.yaml"),
      `${app("grafana", "X-User")}---\n${app("forged", "Svc-Jwt-Assertion")}`,
    );
    source = new FolderSource({ dir });
    await source.start();
    expect(source.list("App").map((a) => a.metadata.name)).toEqual(["grafana"]);
    expect(source.get("App", "grafana")?.spec.uri).toBe("http://127.0.0.1:8080");
    expect(source.get("App", "grafana")?.metadata.labels).toEqual({ env: "staging" });
    const problems = source.problems();
    expect(problems).toHaveLength(1);
    expect(problems[0]?.reason).toContain('"Svc-Jwt-Assertion" is a header the proxy owns');
  });

  it("refuses to write an invalid resource", async () => {
    source = new FolderSource({ dir });
    await source.start();
    const bad = { apiVersion: "svc.dev/v1", kind: "User", metadata: { name: "bob" }, spec: { roles: "x" } };
    // Deliberately wrong shape, as a caller holding unchecked input might pass.
    await expect(source.apply(bad as unknown as Parameters<typeof source.apply>[0])).rejects.toThrow(
      /invalid User/,
    );
  });
});
