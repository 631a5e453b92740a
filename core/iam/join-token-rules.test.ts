import { describe, expect, it } from "vitest";
import { AccessDeniedError } from "../errors.ts";
import { iamAllowRulesOf } from "./join-token-rules.ts";

const allow = [{ aws_account: "123456789012", aws_arn: "arn:aws:sts::123456789012:assumed-role/n/*" }];

describe("iamAllowRulesOf", () => {
  it("returns the rules of a node IAM token", () => {
    expect(iamAllowRulesOf({ join_method: "iam", roles: ["node"], allow })).toEqual(allow);
  });
  it.each([
    [
      "a token-method token",
      { join_method: "token" as const, roles: ["node" as const], allow },
      /not for the IAM/,
    ],
    ["a bot token", { join_method: "iam" as const, roles: ["node" as const, "bot" as const], allow }, /bots/],
    [
      "a token without rules",
      { join_method: "iam" as const, roles: ["node" as const], allow: [] },
      /no IAM allow/,
    ],
  ])("refuses %s", (_why, spec, message) => {
    expect(() => iamAllowRulesOf(spec)).toThrow(AccessDeniedError);
    expect(() => iamAllowRulesOf(spec)).toThrow(message);
  });
});
