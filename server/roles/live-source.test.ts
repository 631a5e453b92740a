import { describe, expect, it } from "vitest";
import { accessForUser } from "../../core/rbac/index.ts";
import { MemorySource } from "../../core/sources/memory.ts";
import type { SourceEvent } from "../../core/sources/source.ts";
import { LiveResources } from "./live-source.ts";

const DELETING = "2026-01-01T00:00:00Z";
const role = (name: string, logins: string[], deletionTimestamp?: string) => ({
  apiVersion: "svc.dev/v1",
  kind: "Role",
  metadata: { name, ...(deletionTimestamp ? { deletionTimestamp, finalizers: ["x/hold"] } : {}) },
  spec: { allow: { logins } },
});
const user = (roles: string[], deletionTimestamp?: string) => ({
  apiVersion: "svc.dev/v1",
  kind: "User",
  metadata: { name: "alice", ...(deletionTimestamp ? { deletionTimestamp, finalizers: ["x/hold"] } : {}) },
  spec: { roles },
});

describe("LiveResources (objects being deleted are gone for decisions)", () => {
  it("hides objects with a deletionTimestamp from get and list", () => {
    const inner = new MemorySource([role("dev", ["dev"]), role("ops", ["ops"], DELETING)]);
    const live = new LiveResources(inner);
    expect(live.get("Role", "dev")?.metadata.name).toBe("dev");
    expect(live.get("Role", "ops")).toBeUndefined();
    expect(inner.get("Role", "ops")).toBeDefined(); // the operator still sees it
    expect(live.list("Role").map((r) => r.metadata.name)).toEqual(["dev"]);
  });

  it("announces the start of a deletion as a delete, and not the final removal again", async () => {
    const inner = new MemorySource([user(["dev"])]);
    const live = new LiveResources(inner);
    const events: SourceEvent["type"][] = [];
    live.subscribe((e) => events.push(e.type));
    await inner.apply(JSON.parse(JSON.stringify(user(["dev"], DELETING))));
    await inner.remove("User", "alice");
    await inner.apply(JSON.parse(JSON.stringify(user(["ops"]))));
    expect(events).toEqual(["delete", "add"]);
  });
});

describe("accessForUser with objects being deleted", () => {
  it("a Role being deleted grants no login, even read straight from the source", () => {
    const inner = new MemorySource([role("dev", ["dev"]), role("ops", ["ops"], DELETING)]);
    const u = new MemorySource([user(["dev", "ops"])]).get("User", "alice");
    if (!u) throw new Error("no user");
    const { checker, missingRoles } = accessForUser(u, (r) => inner.get("Role", r));
    expect(checker.loginsFor()).toEqual(["dev"]);
    expect(missingRoles).toEqual(["ops"]);
  });

  it("a User being deleted has no roles", () => {
    const inner = new MemorySource([role("dev", ["dev"]), user(["dev"], DELETING)]);
    const u = inner.get("User", "alice");
    if (!u) throw new Error("no user");
    expect(accessForUser(u, (r) => inner.get("Role", r)).checker.loginsFor()).toEqual([]);
  });
});
