import { describe, expect, it } from "vitest";
import { checkResource } from "./common.ts";

const role = (allow: unknown) => ({
  apiVersion: "svc.dev/v1",
  kind: "Role",
  metadata: {
    name: "r",
    namespace: "svc-system",
    uid: "u",
    generation: 3,
    managedFields: [{ manager: "kubectl" }],
  },
  spec: { allow },
});

describe("checkResource", () => {
  it("accepts an object as the apiserver returns it", () => {
    const out = checkResource("Role", role({ logins: ["{{internal.logins}}"] }));
    expect(out.ok).toBe(true);
  });

  it("maps semantic problems to reasons a user can act on", () => {
    const reason = (allow: unknown) => {
      const out = checkResource("Role", role(allow));
      return out.ok ? "ok" : out.state.reason;
    };
    expect(reason({ node_labels: { env: "^dev-(x$" } })).toBe("InvalidRegex");
    expect(reason({ logins: ["{{foo.bar}}"] })).toBe("UnknownTrait");
    expect(reason({ rules: [{ resources: ["nodez"], verbs: ["list"] }] })).toBe("UnknownRuleTarget");
  });

  it("reports schema failures as InvalidSpec with the field", () => {
    const out = checkResource("Role", role({ logins: "not-a-list" }));
    expect(out.ok).toBe(false);
    if (!out.ok) {
      expect(out.state.reason).toBe("InvalidSpec");
      expect(out.state.message).toContain("logins");
    }
  });

  it("names the App problem in the reason: URI, reserved header, header template; else InvalidSpec", () => {
    const reason = (spec: Record<string, unknown>) => {
      const out = checkResource("App", {
        apiVersion: "svc.dev/v1",
        kind: "App",
        metadata: { name: "grafana", uid: "u" },
        spec: { uri: "http://grafana.internal:3000", ...spec },
      });
      return out.ok ? "ok" : `${out.state.reason}: ${out.state.message}`;
    };
    expect(reason({})).toBe("ok");
    expect(reason({ uri: "http://grafana.internal:99999" })).toMatch(/^InvalidURI: spec\.uri: not a URL/);
    expect(reason({ uri: "gopher://grafana.internal" })).toMatch(/^InvalidURI: spec\.uri/);
    const header = (name: string, value: string) => ({ rewrite: { headers: [{ name, value }] } });
    expect(reason(header("Svc-Jwt-Assertion", "x"))).toMatch(/^ReservedHeader: .*the proxy owns/);
    expect(reason(header("X-User", "{{secret.x}}"))).toMatch(/^InvalidHeaderTemplate: /);
    expect(reason(header("X-User", "{{user"))).toMatch(/^InvalidHeaderTemplate: .*unbalanced/);
    expect(reason({ public_addr: "dash" })).toMatch(/^InvalidSpec: spec\.public_addr/);
  });

  it("refuses an object of another kind", () => {
    const out = checkResource("User", role({}));
    expect(out.ok).toBe(false);
  });
});
