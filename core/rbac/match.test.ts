import { describe, expect, it } from "vitest";
import { compileAnchored, globMatch, isSafePattern, MAX_MATCH_INPUT, matchValue } from "./match.ts";

describe("matchValue", () => {
  it.each([
    ["*", "anything", true],
    ["*", "", true],
    ["prod", "prod", true],
    ["prod", "production", false],
    ["pro*", "production", false], // "*" is only special alone: values are exact otherwise
    ["^prod.*$", "production", true],
    ["^prod$", "production", false],
    ["^a|b$", "ab", false],
    ["^a|b$", "b", true],
    ["^(unclosed$", "(unclosed", false],
    ["^", "^", true], // too short to be a regex: exact match
  ])("%s vs %s -> %s", (pattern, value, expected) => {
    expect(matchValue(pattern, value)).toBe(expected);
  });

  it("never runs on values longer than the limit", () => {
    expect(matchValue("^.*$", "x".repeat(MAX_MATCH_INPUT))).toBe(true);
    expect(matchValue("^.*$", "x".repeat(MAX_MATCH_INPUT + 1))).toBe(false);
  });

  it("compiles each pattern once", () => {
    expect(compileAnchored("^cache-me$")).toBe(compileAnchored("^cache-me$"));
  });
});

describe("isSafePattern", () => {
  it.each([
    ["(a+)+", false],
    ["(a*)*b", false],
    ["(x|y+){2,}", false],
    ["(a)\\1", false],
    ["(?<n>a)\\k<n>", false],
    ["a+b*", true],
    ["(eu|us)-[a-z]+-[0-9]", true],
    ["(ab)+", true],
    ["((a+))+", false],
    ["(a(b+)c)*", false],
    ["([a+]b)+", true],
    ["(\\+b)+", true],
    ["(a+)?", true],
    ["(a|a)*b", false],
    ["(eu|us)-[a-z]+", true],
  ])("%s -> %s", (pattern, safe) => {
    expect(isSafePattern(pattern)).toBe(safe);
  });

  it("refused patterns never match", () => {
    expect(compileAnchored("^(a+)+$")).toBeNull();
    expect(matchValue("^(a+)+$", `${"a".repeat(40)}!`)).toBe(false);
  });
});

describe("globMatch", () => {
  it.each([
    ["*", "anything/at/all", true],
    ["arn:aws:iam::123456789012:role/*", "arn:aws:iam::123456789012:role/nodes", true],
    ["arn:aws:iam::123456789012:role/*", "arn:aws:iam::999999999999:role/nodes", false],
    ["a?c", "abc", true],
    ["a?c", "ac", false],
    ["a.c", "abc", false],
    ["(x)+", "(x)+", true],
    ["[ab]", "a", false],
    ["exact", "exact", true],
  ])("%s vs %s -> %s", (pattern, value, expected) => {
    expect(globMatch(pattern, value)).toBe(expected);
  });
});
