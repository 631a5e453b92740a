import { describe, expect, it } from "vitest";
import { readyOf, readyTransition, withReady } from "./conditions.ts";

const t0 = new Date("2026-01-01T00:00:00Z");
const t1 = new Date("2026-01-01T01:00:00Z");

describe("Ready condition", () => {
  it("sets lastTransitionTime on the first write and keeps it while the status stays", () => {
    const first = withReady(undefined, { status: "False", reason: "InvalidRegex", message: "bad" }, 1, t0);
    expect(readyOf(first)).toEqual({
      type: "Ready",
      status: "False",
      reason: "InvalidRegex",
      message: "bad",
      lastTransitionTime: t0.toISOString(),
      observedGeneration: 1,
    });
    const same = withReady(first, { status: "False", reason: "UnknownRole", message: "other" }, 2, t1);
    expect(readyOf(same)?.lastTransitionTime).toBe(t0.toISOString());
    expect(readyOf(same)?.observedGeneration).toBe(2);
    const flipped = withReady(same, { status: "True", reason: "Valid", message: "ok" }, 3, t1);
    expect(readyOf(flipped)?.lastTransitionTime).toBe(t1.toISOString());
  });

  it("keeps other condition types", () => {
    const other = {
      type: "Synced",
      status: "True" as const,
      reason: "X",
      message: "",
      lastTransitionTime: t0.toISOString(),
    };
    const out = withReady([other], { status: "True", reason: "Valid", message: "" }, undefined, t1);
    expect(out).toContainEqual(other);
    expect(out.length).toBe(2);
  });

  it("counts a change of status or reason as a transition, not a new message", () => {
    const c = withReady(undefined, { status: "False", reason: "Expired", message: "a" }, 1, t0);
    expect(readyTransition(undefined, { status: "True", reason: "Valid", message: "" })).toBe(true);
    expect(readyTransition(c, { status: "False", reason: "Expired", message: "b" })).toBe(false);
    expect(readyTransition(c, { status: "False", reason: "Used", message: "a" })).toBe(true);
    expect(readyTransition(c, { status: "True", reason: "Expired", message: "a" })).toBe(true);
  });
});
