import { describe, expect, it } from "vitest";
import { expandLogin, parseLogin } from "./template.ts";

describe("parseLogin", () => {
  it.each([
    ["root", "literal"],
    ["{{internal.logins}}", "template"],
    ["{{ external.github_login }}", "template"],
    ["pre-{{internal.logins}}-post", "template"],
    ["{{internal.logins}}{{internal.x}}", "invalid"],
    ["{{env.HOME}}", "invalid"],
    ["{{internal}}", "invalid"],
    ["{{internal.logins", "invalid"],
    ["internal.logins}}", "invalid"],
    ["{{internal.a}}}", "invalid"],
  ])("%s is %s", (text, kind) => {
    expect(parseLogin(text).kind).toBe(kind);
  });
});

describe("expandLogin", () => {
  const internal = { logins: ["alice", "ops"], empty: [] };
  const external = { github_login: ["octo"] };
  it.each([
    ["root", ["root"]],
    ["{{internal.logins}}", ["alice", "ops"]],
    ["x-{{internal.logins}}", ["x-alice", "x-ops"]],
    ["{{internal.missing}}", []],
    ["{{internal.empty}}", []],
    ["{{external.github_login}}", ["octo"]],
    ["{{external.logins}}", []],
    ["{{internal.github_login}}", []],
    ["{{internal.toString}}", []],
    ["{{bogus.logins}}", []],
  ])("%s -> %j", (text, expected) => {
    expect(expandLogin(text, internal, external)).toEqual(expected);
  });

  it("yields only plain OS logins from trait values (a provider's group cannot name a node principal)", () => {
    const groups = {
      groups: ["dev", "root@prod-1", "a b", "-oProxyCommand", "x".repeat(33), "", "ok_1.x", "é"],
    };
    expect(expandLogin("{{external.groups}}", {}, groups)).toEqual(["dev", "ok_1.x"]);
    expect(expandLogin("{{external.groups}}@prod-1", {}, { groups: ["root"] })).toEqual([]);
  });
});
