import { describe, expect, it } from "vitest";
import { compareVersions, versionVerdict } from "./version-policy.ts";

describe("compareVersions (semver precedence)", () => {
  it.each([
    ["1.0.0", "1.0.0", 0],
    ["1.0.0", "1.0.1", -1],
    ["1.10.0", "1.9.9", 1],
    ["v2.0.0", "1.99.99", 1],
    ["1.0.0-rc.1", "1.0.0", -1],
    ["1.0.0-alpha", "1.0.0-alpha.1", -1],
    ["1.0.0-alpha.2", "1.0.0-alpha.10", -1],
    ["1.0.0-alpha.beta", "1.0.0-beta", -1],
    ["1.0.0+build.5", "1.0.0", 0],
  ])("%s vs %s -> %i", (a, b, want) => {
    expect(compareVersions(a, b)).toBe(want);
    expect(compareVersions(b, a)).toBe(-want || 0);
  });

  it("refuses what is not a version", () => {
    expect(() => compareVersions("1.0", "1.0.0")).toThrow(/not a semantic version/);
  });
});

describe("versionVerdict", () => {
  it("below minimum is unsupported, below recommended is a warning, else ok", () => {
    expect(versionVerdict("0.1.0", { minimum: "0.2.0", recommended: "0.3.0" })).toEqual({
      kind: "unsupported",
      minimum: "0.2.0",
    });
    expect(versionVerdict("0.2.5", { minimum: "0.2.0", recommended: "0.3.0" })).toEqual({
      kind: "upgrade_recommended",
      recommended: "0.3.0",
    });
    expect(versionVerdict("0.3.0", { minimum: "0.2.0", recommended: "0.3.0" })).toEqual({ kind: "ok" });
    expect(versionVerdict("0.3.0", {})).toEqual({ kind: "ok" });
  });
});
