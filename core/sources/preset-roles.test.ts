import { describe, expect, it } from "vitest";
import { API_VERSION, type Role } from "../resources/index.ts";
import { MemorySource } from "./memory.ts";
import { PRESET_ROLE_NAMES, WithPresetRoles } from "./preset-roles.ts";
import type { SourceEvent } from "./source.ts";

const role = (name: string, extra: Partial<Role["metadata"]> = {}): Role => ({
  apiVersion: API_VERSION,
  kind: "Role",
  metadata: { name, ...extra },
  spec: { allow: { logins: ["ops"] } },
});

describe("WithPresetRoles", () => {
  it("adds the presets a source lacks; a Role of the same name replaces one", async () => {
    const inner = new MemorySource([role("dev"), role("admin")]);
    const src = new WithPresetRoles(inner);
    expect(PRESET_ROLE_NAMES).toEqual(["admin", "access"]);
    expect(
      src
        .list("Role")
        .map((r) => r.metadata.name)
        .sort(),
    ).toEqual(["access", "admin", "dev"]);
    // the custom resource wins over the preset
    expect(src.get("Role", "admin")?.spec.allow?.logins).toEqual(["ops"]);
    expect(src.get("Role", "access")?.metadata.labels?.["svc.dev/preset"]).toBe("true");
    expect(src.get("Role", "nope")).toBeUndefined();
    expect(src.list("User")).toEqual([]);
  });

  it("a deleted (or deleting) replacement gives the preset back, announced as an update", async () => {
    const inner = new MemorySource([role("admin")]);
    const src = new WithPresetRoles(inner);
    const events: SourceEvent[] = [];
    src.subscribe((e) => events.push(e));
    await src.apply(role("admin", { deletionTimestamp: "2026-01-01T00:00:00Z" }));
    expect(src.get("Role", "admin")?.metadata.labels?.["svc.dev/preset"]).toBe("true");
    expect(src.list("Role").filter((r) => r.metadata.name === "admin")).toHaveLength(1);
    await src.remove("Role", "admin");
    expect(events.map((e) => [e.type, e.resource.metadata.labels?.["svc.dev/preset"]])).toEqual([
      ["update", "true"],
      ["update", "true"],
    ]);
    expect(src.get("Role", "admin")?.metadata.labels?.["svc.dev/preset"]).toBe("true");
    // other kinds and other names pass through
    await src.apply(role("dev"));
    expect(events.at(-1)?.type).toBe("add");
  });
});
