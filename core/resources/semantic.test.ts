import { describe, expect, it } from "vitest";
import { ManualClock } from "../clock.ts";
import { type AnyResource, parseResource, presets, semanticProblems } from "./index.ts";

const V = "svc.dev/v1";

function role(spec: Record<string, unknown>): AnyResource {
  return parseResource({ apiVersion: V, kind: "Role", metadata: { name: "r" }, spec });
}

describe("semanticProblems", () => {
  it("presets have none", () => {
    for (const p of presets()) expect(semanticProblems(p)).toEqual([]);
  });

  it.each([
    [
      { allow: { node_labels: { env: "^(unclosed$" } } },
      'spec.allow.node_labels["env"]: regular expression does not compile',
    ],
    [
      { deny: { node_labels: { env: ["ok", "^[z-a]$"] } } },
      'spec.deny.node_labels["env"][1]: regular expression',
    ],
    [{ allow: { logins: ["{{secret.logins}}"] } }, "spec.allow.logins[0]"],
    [{ allow: { logins: ["{{internal.logins}}{{external.x}}"] } }, "only one"],
    [{ allow: { logins: ["{{internal.logins"] } }, "unbalanced"],
    [{ allow: { node_labels: { "*": "prod" } } }, 'the key "*" only takes the value "*"'],
    [{ allow: { rules: [{ resources: ["secrets"], verbs: ["list"] }] } }, 'unknown resource "secrets"'],
    [{ allow: { rules: [{ resources: ["users"], verbs: ["patch"] }] } }, 'unknown verb "patch"'],
    [{ allow: { workload_spiffe_ids: ["svc/ci"] } }, 'starts with "/"'],
    [
      { allow: { app_labels: { env: "^(unclosed$" } } },
      'spec.allow.app_labels["env"]: regular expression does not compile',
    ],
    [
      { deny: { app_labels: { env: ["ok", "^(a+)+$"] } } },
      'spec.deny.app_labels["env"][1]: regular expression',
    ],
    [{ allow: { app_labels: { "*": "grafana" } } }, 'spec.allow.app_labels["*"]: the key "*" only takes'],
  ])("role %j -> %s", (spec, expected) => {
    const problems = semanticProblems(role(spec));
    expect(
      problems.some((p) => p.includes(expected)),
      problems.join("\n"),
    ).toBe(true);
  });

  it("accepts good templates, regexes and globs", () => {
    const r = role({
      allow: {
        logins: ["{{internal.logins}}", "{{ external.github_login }}", "dev-{{internal.logins}}", "root"],
        node_labels: { env: ["^prod|staging$", "*"], region: "eu-1" },
        app_labels: { "*": "*", team: ["^(web|data)$", "ops"] },
        workload_spiffe_ids: ["/svc/*"],
      },
      deny: { app_labels: { env: "prod" } },
    });
    expect(semanticProblems(r)).toEqual([]);
  });

  it("flags an expired JoinToken given a clock, not without one", () => {
    const token = parseResource({
      apiVersion: V,
      kind: "JoinToken",
      metadata: { name: "t" },
      spec: {
        roles: ["node"],
        join_method: "token",
        secret_hash: "b".repeat(64),
        expires: "2026-01-01T00:00:00Z",
      },
    });
    expect(semanticProblems(token)).toEqual([]);
    expect(semanticProblems(token, { clock: new ManualClock(Date.UTC(2025, 0, 1)) })).toEqual([]);
    expect(semanticProblems(token, { clock: new ManualClock(Date.UTC(2026, 0, 2)) })).toEqual([
      "spec.expires: already in the past",
    ]);
  });

  it("flags an iam token without allow rules even when it skipped validation", () => {
    const token = {
      apiVersion: V,
      kind: "JoinToken",
      metadata: { name: "t" },
      spec: { roles: ["node"], join_method: "iam", expires: "2030-01-01T00:00:00Z" },
    } as AnyResource;
    expect(semanticProblems(token)).toContain("spec.allow: join_method iam needs at least one allow rule");
  });

  it("flags github/oidc connectors without a secret reference", () => {
    const c = parseResource({
      apiVersion: V,
      kind: "Connector",
      metadata: { name: "gh" },
      spec: {
        type: "github",
        display_name: "GitHub",
        settings: { client_id: "x", redirect_url: "https://p/cb" },
      },
    });
    expect(semanticProblems(c)).toEqual(["spec.client_secret_ref: required for github and oidc connectors"]);
  });

  it.each(["requests", "callback", "exchange", "saml"])(
    "refuses the connector name %s, which the proxy's SSO routes use",
    (name) => {
      const c = parseResource({
        apiVersion: V,
        kind: "Connector",
        metadata: { name },
        spec: {
          type: "saml",
          display_name: "Corp",
          settings: { entity_id: "https://p/sp", sso_url: "https://idp/sso" },
        },
      });
      expect(semanticProblems(c)).toEqual([`metadata.name: "${name}" is reserved by the proxy's SSO routes`]);
    },
  );
});
