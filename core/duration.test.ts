import { describe, expect, it } from "vitest";
import { formatDuration, isDuration, parseDuration } from "./duration.ts";
import { BadParameterError } from "./errors.ts";

describe("parseDuration", () => {
  it.each([
    ["30s", 30_000],
    ["30m", 1_800_000],
    ["8h", 28_800_000],
    ["1h30m", 5_400_000],
    ["2d", 172_800_000],
    ["1d2h3m4s", 93_784_000],
    ["0s", 0],
  ])("%s -> %d ms", (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it.each([
    "",
    "1",
    "h",
    "1.5h",
    "-1h",
    "1H",
    "1ms",
    "1h ",
    " 1h",
    "1y",
    "abc",
    "9".repeat(70) + "h",
    "99999999999999999d",
  ])("rejects %j with BadParameterError", (text) => {
    expect(() => parseDuration(text)).toThrow(BadParameterError);
    expect(isDuration(text)).toBe(false);
  });
});

describe("formatDuration", () => {
  it.each([
    [0, "0s"],
    [999, "0s"],
    [30_000, "30s"],
    [5_400_000, "1h30m"],
    [93_784_000, "26h3m4s"],
    [43_200_000, "12h"],
  ])("%d ms -> %s", (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });

  it("round-trips through parseDuration", () => {
    for (const ms of [1000, 61_000, 3_661_000, 86_400_000])
      expect(parseDuration(formatDuration(ms))).toBe(ms);
  });

  it("rejects negative and non-finite values", () => {
    expect(() => formatDuration(-1)).toThrow(BadParameterError);
    expect(() => formatDuration(Number.NaN)).toThrow(BadParameterError);
  });
});
