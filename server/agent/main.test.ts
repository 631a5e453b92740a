// The --labels flag form that `svcd agent` passes to runAgent.
import { describe, expect, it } from "vitest";
import { BadParameterError } from "../../core/errors.ts";
import { parseLabels } from "./main.ts";

describe("parseLabels", () => {
  it("reads k=v pairs separated by commas", () => {
    expect(parseLabels("env=prod, team=core,empty=")).toEqual({ env: "prod", team: "core", empty: "" });
    expect(parseLabels("")).toEqual({});
  });
  it("refuses an item without a key", () => {
    expect(() => parseLabels("env")).toThrow(BadParameterError);
    expect(() => parseLabels("=x")).toThrow(BadParameterError);
  });
});
