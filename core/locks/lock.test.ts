import { describe, expect, it } from "vitest";
import { type LockRecord, lockCovering, lockFromProto, lockToProto } from "./lock.ts";

const NOW = new Date("2026-06-01T12:00:00Z");
const base = { message: "m", createdBy: "admin", createdAt: new Date("2026-06-01T00:00:00Z") };
const lock = (name: string, target: LockRecord["target"], expires?: Date): LockRecord => ({
  name,
  target,
  ...base,
  ...(expires ? { expires } : {}),
});

describe("lockCovering", () => {
  const locks = [
    lock("u", { user: "alice" }),
    lock("r", { role: "ops" }),
    lock("b", { bot: "ci" }),
    lock("n", { node: "node-1" }),
    lock("k", { keyId: "user:carol:session:0123456789abcdef" }),
  ];

  it.each([
    [{ user: "alice" }, "u"],
    [{ user: "bob", roles: ["dev", "ops"] }, "r"],
    [{ bot: "ci", roles: ["dev"] }, "b"],
    [{ user: "bob", node: "node-1" }, "n"],
    [{ user: "carol", keyId: "user:carol:session:0123456789abcdef" }, "k"],
  ])("%j is covered by lock %s", (subject, name) => {
    expect(lockCovering(locks, subject, NOW)?.name).toBe(name);
  });

  it.each([
    [{ user: "bob", roles: ["dev"], node: "node-2" }],
    [{ bot: "alice" }],
    [{ user: "ci" }],
    [{ keyId: "user:carol:session:ffffffffffffffff" }],
    [{}],
  ])("%j is not covered", (subject) => {
    expect(lockCovering(locks, subject, NOW)).toBeUndefined();
  });

  it("an expired lock no longer counts; one expiring later does", () => {
    const expired = [lock("old", { user: "alice" }, new Date(NOW.getTime() - 1))];
    expect(lockCovering(expired, { user: "alice" }, NOW)).toBeUndefined();
    const exact = [lock("edge", { user: "alice" }, NOW)];
    expect(lockCovering(exact, { user: "alice" }, NOW)).toBeUndefined();
    const later = [lock("later", { user: "alice" }, new Date(NOW.getTime() + 1))];
    expect(lockCovering(later, { user: "alice" }, NOW)?.name).toBe("later");
  });
});

describe("proto conversion", () => {
  it("round-trips every target kind", () => {
    const targets: LockRecord["target"][] = [
      { user: "a" },
      { role: "r" },
      { bot: "b" },
      { node: "n" },
      { keyId: "bot:b:gen:3" },
    ];
    for (const target of targets) {
      const l = lock("x", target, new Date("2026-07-01T00:00:00.000Z"));
      const wire = lockToProto(l);
      const back = lockFromProto({
        ...wire,
        target: { user: "", role: "", bot: "", node: "", key_id: "", ...wire.target },
      } as Parameters<typeof lockFromProto>[0]);
      expect(back).toEqual(l);
    }
  });

  it("an empty expiry is no expiry; a target-less lock is refused", () => {
    const wire = {
      name: "x",
      target: { user: "a", role: "", bot: "", node: "", key_id: "" },
      message: "",
      expires: "",
      created_by: "auth",
      created_at: "2026-06-01T00:00:00.000Z",
    };
    expect(lockFromProto(wire).expires).toBeUndefined();
    expect(() => lockFromProto({ ...wire, target: null })).toThrow(/no target/);
  });
});
