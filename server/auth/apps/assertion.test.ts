// rewrite.headers templates: what an app may be told about the user, and what never reaches it.
import { describe, expect, it } from "vitest";
import { fillHeaders } from "./assertion.ts";

const user = {
  username: "dana",
  internal: { teams: ["ops", "db"], evil: ["x\r\nX-Admin: yes"], uni: ["zoë"] },
  external: { groups: ["admins"] },
};

describe("fillHeaders", () => {
  it("fills {{user}}, internal and external traits, several expressions and literal text", () => {
    expect(
      fillHeaders(
        [
          { name: "X-User", value: "{{user}}" },
          { name: "X-Who", value: "{{ user }}/{{internal.teams}} via {{external.groups}}" },
          { name: "X-Static", value: "plain" },
        ],
        user,
      ),
    ).toEqual([
      { name: "X-User", value: "dana" },
      { name: "X-Who", value: "dana/ops,db via admins" },
      { name: "X-Static", value: "plain" },
    ]);
  });

  it("leaves out a header whose trait is missing, whose expression is unknown, or whose value would not be a header value", () => {
    expect(
      fillHeaders(
        [
          { name: "X-Missing", value: "{{internal.nope}}" },
          { name: "X-Wrong-Namespace", value: "{{external.teams}}" },
          { name: "X-Unknown", value: "{{secrets.token}}" },
          { name: "X-Unbalanced", value: "{{user}" },
          { name: "X-Injected", value: "{{internal.evil}}" },
          { name: "X-Unicode", value: "{{internal.uni}}" },
        ],
        user,
      ),
    ).toEqual([]);
  });
});
