import { describe, expect, it } from "vitest";
import { BadParameterError } from "../errors.ts";
import {
  type AnyResource,
  kindInfo,
  parseResource,
  presets,
  publicConnectorView,
  RESOURCE_KINDS,
  validateResource,
} from "./index.ts";

const V = "svc.dev/v1";
const HASH = "a".repeat(64);

/** One valid example per kind, the base the invalid cases mutate. */
function valid(): Record<string, Record<string, unknown>> {
  return {
    Role: {
      apiVersion: V,
      kind: "Role",
      metadata: { name: "dev", labels: { team: "a" } },
      spec: {
        allow: {
          logins: ["{{internal.logins}}", "ubuntu"],
          node_labels: { env: ["staging", "^dev-[0-9]+$"], "*": "*" },
          rules: [{ resources: ["nodes"], verbs: ["list", "read"] }],
          workload_spiffe_ids: ["/svc/ci/*"],
        },
        deny: { logins: ["root"] },
        options: { max_session_ttl: "8h", require_mfa: true },
      },
    },
    User: {
      apiVersion: V,
      kind: "User",
      metadata: { name: "alice" },
      spec: { roles: ["access"], traits: { logins: ["alice", "ubuntu"] } },
    },
    Connector: {
      apiVersion: V,
      kind: "Connector",
      metadata: { name: "github" },
      spec: {
        type: "github",
        display_name: "GitHub",
        settings: {
          client_id: "abc",
          redirect_url: "https://proxy.example/v1/webapi/github/callback",
          org: "acme",
        },
        client_secret_ref: { secret_name: "github-oauth", key: "client_secret" },
        claims_to_roles: [{ claim: "acme/admins", value: "true", roles: ["admin"] }],
      },
    },
    JoinToken: {
      apiVersion: V,
      kind: "JoinToken",
      metadata: { name: "node-1" },
      spec: { roles: ["node"], join_method: "token", secret_hash: HASH, expires: "2030-01-01T00:00:00Z" },
    },
    AgentIdentity: {
      apiVersion: V,
      kind: "AgentIdentity",
      metadata: { name: "ci-bot", generation: 2, managedFields: [{ manager: "kubectl" }] },
      spec: { roles: ["access"], cert_ttl: "2h", renewal: { fraction: 0.3 } },
      status: {
        observedGeneration: 2,
        conditions: [
          {
            type: "Ready",
            status: "True",
            reason: "Reconciled",
            message: "",
            lastTransitionTime: "2026-01-01T00:00:00Z",
          },
        ],
      },
    },
    Lock: {
      apiVersion: V,
      kind: "Lock",
      metadata: { name: "lock-mallory" },
      spec: { target: { user: "mallory" }, message: "investigating", expires: "2030-01-01T00:00:00Z" },
    },
    App: {
      apiVersion: V,
      kind: "App",
      metadata: { name: "grafana", labels: { env: "staging" } },
      spec: {
        uri: "https://grafana.internal:3000/base",
        public_addr: "dash.proxy.example",
        description: "Dashboards",
        rewrite: {
          headers: [
            { name: "X-Forwarded-User", value: "{{user}}" },
            { name: "X-Teams", value: "teams={{internal.teams}};gh={{ external.github_login }}" },
          ],
          redirect: ["grafana.internal", "10.0.0.7"],
        },
      },
    },
  };
}

function errorsOf(obj: unknown): string[] {
  const r = validateResource(obj);
  return r.ok ? [] : r.errors;
}

describe("validateResource: valid examples", () => {
  it.each(RESOURCE_KINDS)("%s validates", (kind) => {
    const result = validateResource(valid()[kind]);
    expect(result).toMatchObject({ ok: true });
  });

  it("applies schema defaults without touching the input", () => {
    const input = valid()["User"]!;
    const result = validateResource(input);
    if (!result.ok) throw new Error(result.errors.join("; "));
    expect(result.resource.kind === "User" && result.resource.spec.local_login).toBe(true);
    expect((input["spec"] as Record<string, unknown>)["local_login"]).toBeUndefined();
    const bot = validateResource(valid()["AgentIdentity"]);
    expect(bot.ok && bot.resource.kind === "AgentIdentity" && bot.resource.spec.allow_workload_svids).toBe(
      false,
    );
  });

  it("presets validate", () => {
    const list = presets();
    expect(list.map((r) => r.metadata.name)).toEqual(["admin", "access"]);
    for (const preset of list) expect(validateResource(preset)).toMatchObject({ ok: true });
  });

  it("accepts a token for a bot with a bot name and an iam token with allow rules", () => {
    const t = valid()["JoinToken"]!;
    expect(
      errorsOf({ ...t, spec: { ...(t["spec"] as object), roles: ["node", "bot"], bot_name: "ci" } }),
    ).toEqual([]);
    const iam = {
      roles: ["node"],
      join_method: "iam",
      allow: [{ aws_account: "123456789012", aws_arn: "arn:aws:sts::123456789012:assumed-role/n/*" }],
      expires: "2030-01-01T00:00:00+02:00",
    };
    expect(errorsOf({ ...t, spec: iam })).toEqual([]);
  });

  it("accepts saml and oidc connectors with their own settings and a file secret reference", () => {
    const c = valid()["Connector"]!;
    const oidc = {
      type: "oidc",
      display_name: "Okta",
      settings: {
        client_id: "x",
        issuer_url: "https://idp.example",
        redirect_url: "https://p/cb",
        scopes: ["openid"],
      },
      client_secret_ref: { file: "secrets/okta" },
    };
    expect(errorsOf({ ...c, spec: oidc })).toEqual([]);
    const saml = {
      type: "saml",
      display_name: "ADFS",
      settings: { entity_id: "https://p/saml", sso_url: "https://idp/sso" },
    };
    expect(errorsOf({ ...c, spec: saml })).toEqual([]);
  });
});

type Mutation = [string, string, (o: Record<string, unknown>) => void, string];
const spec = (o: Record<string, unknown>) => o["spec"] as Record<string, unknown>;

const invalid: Mutation[] = [
  ["Role", "unknown spec field", (o) => (spec(o)["extra"] = 1), "spec.extra: unexpected property"],
  [
    "Role",
    "login of wrong type",
    (o) => (spec(o)["allow"] = { logins: [42] }),
    "spec.allow.logins[0]: expected string",
  ],
  [
    "Role",
    "label value of wrong type",
    (o) => (spec(o)["allow"] = { node_labels: { env: 3 } }),
    "spec.allow.node_labels.env",
  ],
  [
    "Role",
    "rule without verbs",
    (o) => (spec(o)["allow"] = { rules: [{ resources: ["nodes"] }] }),
    "spec.allow.rules[0].verbs",
  ],
  [
    "Role",
    "bad duration",
    (o) => (spec(o)["options"] = { max_session_ttl: "forever" }),
    "spec.options.max_session_ttl",
  ],
  ["Role", "zero duration", (o) => (spec(o)["options"] = { max_session_ttl: "0h" }), "longer than 0s"],
  [
    "Role",
    "name too long",
    (o) => ((o["metadata"] as Record<string, unknown>)["name"] = "a".repeat(254)),
    "metadata.name",
  ],
  [
    "Role",
    "upper-case name",
    (o) => ((o["metadata"] as Record<string, unknown>)["name"] = "Dev"),
    "DNS-1123",
  ],
  ["Role", "unknown top-level field", (o) => (o["extra"] = true), "extra: unexpected property"],
  ["Role", "missing spec", (o) => delete o["spec"], "spec"],
  ["Role", "wrong apiVersion", (o) => (o["apiVersion"] = "svc.dev/v2"), "apiVersion"],
  ["Role", "unknown kind", (o) => (o["kind"] = "Node"), "kind: must be one of"],
  [
    "User",
    "user name longer than 64",
    (o) => ((o["metadata"] as Record<string, unknown>)["name"] = "u".repeat(65)),
    "metadata.name",
  ],
  ["User", "roles missing", (o) => delete spec(o)["roles"], "spec.roles"],
  ["User", "trait not a list", (o) => (spec(o)["traits"] = { logins: "alice" }), "spec.traits.logins"],
  [
    "User",
    "credentials in the resource",
    (o) => (spec(o)["password"] = "x"),
    "spec.password: unexpected property",
  ],
  [
    "Connector",
    "inline client secret",
    (o) => ((spec(o)["settings"] as Record<string, unknown>)["client_secret"] = "s3cr3t"),
    "spec.settings.client_secret: inline secrets are not allowed",
  ],
  [
    "Connector",
    "inline secret at spec level",
    (o) => (spec(o)["client_secret"] = "s3cr3t"),
    "spec.client_secret: inline secrets are not allowed",
  ],
  [
    "Connector",
    "unknown type",
    (o) => (spec(o)["type"] = "ldap"),
    'spec.type: must be one of "github", "oidc", "saml"',
  ],
  [
    "Connector",
    "half a secret reference",
    (o) => (spec(o)["client_secret_ref"] = { secret_name: "x" }),
    "spec.client_secret_ref",
  ],
  [
    "Connector",
    "both kinds of reference",
    (o) => (spec(o)["client_secret_ref"] = { secret_name: "x", key: "k", file: "f" }),
    "spec.client_secret_ref",
  ],
  ["Connector", "oidc without issuer", (o) => (spec(o)["type"] = "oidc"), "spec.settings.issuer_url"],
  ["JoinToken", "token without hash", (o) => delete spec(o)["secret_hash"], "spec.secret_hash: required"],
  [
    "JoinToken",
    "hash not hex",
    (o) => (spec(o)["secret_hash"] = "Z".repeat(64)),
    "spec.secret_hash: must be a sha256",
  ],
  [
    "JoinToken",
    "iam without allow",
    (o) => (spec(o)["join_method"] = "iam"),
    "spec.allow: join_method iam needs",
  ],
  [
    "JoinToken",
    "iam with empty allow",
    (o) => Object.assign(spec(o), { join_method: "iam", allow: [] }),
    "spec.allow",
  ],
  [
    "JoinToken",
    "aws account not 12 digits",
    (o) => Object.assign(spec(o), { join_method: "iam", allow: [{ aws_account: "123" }] }),
    "spec.allow[0].aws_account: must be a 12-digit",
  ],
  ["JoinToken", "bot without bot_name", (o) => (spec(o)["roles"] = ["bot"]), "spec.bot_name: required"],
  ["JoinToken", "unknown join role", (o) => (spec(o)["roles"] = ["proxy"]), "spec.roles[0]"],
  ["JoinToken", "no roles", (o) => (spec(o)["roles"] = []), "spec.roles"],
  ["JoinToken", "expiry not a date-time", (o) => (spec(o)["expires"] = "tomorrow"), "spec.expires"],
  ["JoinToken", "expiry without zone", (o) => (spec(o)["expires"] = "2030-01-01T00:00:00"), "spec.expires"],
  ["AgentIdentity", "cert ttl above 24h", (o) => (spec(o)["cert_ttl"] = "25h"), "spec.cert_ttl: at most 24h"],
  [
    "AgentIdentity",
    "renewal fraction out of range",
    (o) => (spec(o)["renewal"] = { fraction: 0.95 }),
    "spec.renewal.fraction",
  ],
  ["AgentIdentity", "no roles", (o) => (spec(o)["roles"] = []), "spec.roles"],
  ["Lock", "no target", (o) => (spec(o)["target"] = {}), "spec.target: names exactly one"],
  [
    "Lock",
    "two targets",
    (o) => (spec(o)["target"] = { user: "mallory", node: "n1" }),
    "spec.target: names exactly one",
  ],
  ["Lock", "unknown target", (o) => (spec(o)["target"] = { team: "x" }), "spec.target"],
  ["Lock", "expiry without zone", (o) => (spec(o)["expires"] = "2030-01-01T00:00:00"), "spec.expires"],
  [
    "App",
    "dotted name (it is the default host label)",
    (o) => ((o["metadata"] as Record<string, unknown>)["name"] = "grafana.eu"),
    "metadata.name: must be a lower-case DNS-1123 label",
  ],
  [
    "App",
    "name longer than a DNS label",
    (o) => ((o["metadata"] as Record<string, unknown>)["name"] = "a".repeat(64)),
    "metadata.name",
  ],
  ["App", "uri missing", (o) => delete spec(o)["uri"], "spec.uri"],
  ["App", "ftp uri", (o) => (spec(o)["uri"] = "ftp://files.internal/"), "spec.uri"],
  ["App", "uri with credentials", (o) => (spec(o)["uri"] = "http://bob:pw@grafana.internal"), "spec.uri"],
  ["App", "uri with a query", (o) => (spec(o)["uri"] = "http://grafana.internal/?org=1"), "spec.uri"],
  ["App", "uri with a fragment", (o) => (spec(o)["uri"] = "http://grafana.internal/#x"), "spec.uri"],
  [
    "App",
    "uri with a bad port",
    (o) => (spec(o)["uri"] = "http://grafana.internal:99999"),
    "spec.uri: not a URL",
  ],
  [
    "App",
    "upper-case public_addr",
    (o) => (spec(o)["public_addr"] = "Dash.proxy.example"),
    "spec.public_addr",
  ],
  [
    "App",
    "public_addr with a single label",
    (o) => (spec(o)["public_addr"] = "dash"),
    "spec.public_addr: must be a host name under the proxy's public host",
  ],
  [
    "App",
    "rewrite of the assertion header (any case)",
    (o) => (spec(o)["rewrite"] = { headers: [{ name: "SVC-JWT-Assertion", value: "forged" }] }),
    'spec.rewrite.headers[0].name: "SVC-JWT-Assertion" is a header the proxy owns',
  ],
  [
    "App",
    "rewrite of Host",
    (o) => (spec(o)["rewrite"] = { headers: [{ name: "host", value: "evil" }] }),
    "is a header the proxy owns",
  ],
  [
    "App",
    "the same header twice",
    (o) =>
      (spec(o)["rewrite"] = {
        headers: [
          { name: "X-User", value: "a" },
          { name: "x-user", value: "b" },
        ],
      }),
    'spec.rewrite.headers[1].name: "x-user" is named twice',
  ],
  [
    "App",
    "a header value with CR LF",
    (o) => (spec(o)["rewrite"] = { headers: [{ name: "X-User", value: "a\r\nX-Admin: 1" }] }),
    "spec.rewrite.headers[0].value: must not contain control characters",
  ],
  [
    "App",
    "a header name with a space",
    (o) => (spec(o)["rewrite"] = { headers: [{ name: "X User", value: "a" }] }),
    "spec.rewrite.headers[0].name: must be an HTTP header name",
  ],
  [
    "App",
    "an unknown template",
    (o) => (spec(o)["rewrite"] = { headers: [{ name: "X-User", value: "{{secret.key}}" }] }),
    'spec.rewrite.headers[0].value: "secret.key" is not user',
  ],
  [
    "App",
    "an unbalanced template",
    (o) => (spec(o)["rewrite"] = { headers: [{ name: "X-User", value: "{{user}" }] }),
    "spec.rewrite.headers[0].value: unbalanced",
  ],
  [
    "App",
    "a redirect host with a scheme",
    (o) => (spec(o)["rewrite"] = { redirect: ["https://grafana.internal"] }),
    "spec.rewrite.redirect[0]: must be a lower-case host name",
  ],
  [
    "App",
    "a redirect host with a port",
    (o) => (spec(o)["rewrite"] = { redirect: ["grafana.internal:3000"] }),
    "spec.rewrite.redirect[0]",
  ],
  ["App", "unknown spec field", (o) => (spec(o)["port"] = 80), "spec.port: unexpected property"],
  [
    "AgentIdentity",
    "bad condition status",
    (o) => ((o["status"] as { conditions: { status: string }[] }).conditions[0]!.status = "Yes"),
    "status.conditions[0].status",
  ],
];

describe("validateResource: invalid examples", () => {
  it.each(invalid)("%s: %s", (kind, _label, mutate, expected) => {
    const obj = structuredClone(valid()[kind]!);
    mutate(obj);
    const errors = errorsOf(obj);
    expect(
      errors.some((e) => e.includes(expected)),
      errors.join("\n"),
    ).toBe(true);
  });

  it("rejects non-objects", () => {
    for (const v of [null, 3, "x", []]) expect(errorsOf(v)).toEqual(["(root): must be an object"]);
  });

  it("never echoes an inline secret value", () => {
    const obj = structuredClone(valid()["Connector"]!);
    (spec(obj)["settings"] as Record<string, unknown>)["client_secret"] = "s3cr3t-value";
    expect(errorsOf(obj).join(" ")).not.toContain("s3cr3t-value");
    expect(() => parseResource(obj)).toThrow(BadParameterError);
    try {
      parseResource(obj);
    } catch (err) {
      expect(String(err)).not.toContain("s3cr3t-value");
    }
  });
});

describe("parseResource", () => {
  it("returns the typed resource", () => {
    const r: AnyResource = parseResource(valid()["Role"]);
    expect(r.kind).toBe("Role");
  });

  it("throws BadParameterError naming kind, object and field", () => {
    const obj = structuredClone(valid()["User"]!);
    spec(obj)["roles"] = "admin";
    expect(() => parseResource(obj)).toThrow(/invalid User "alice": spec\.roles/);
  });
});

describe("kindInfo and public views", () => {
  it("describes every kind for the CRD generator", () => {
    for (const kind of RESOURCE_KINDS) {
      const info = kindInfo[kind];
      expect(info.kind).toBe(kind);
      expect(info.plural).toMatch(/^[a-z]+$/);
      expect(info.categories.length).toBeGreaterThan(0);
      expect(info.printerColumns.every((c) => c.jsonPath.startsWith("."))).toBe(true);
      // Structural subset: no $ref anywhere in the spec/status schemas.
      expect(JSON.stringify([info.specSchema, info.statusSchema])).not.toContain("$ref");
      expect(JSON.stringify(info.specSchema)).not.toContain("patternProperties");
    }
  });

  it("publicConnectorView carries name, type and display name only", () => {
    const c = parseResource(valid()["Connector"]);
    if (c.kind !== "Connector") throw new Error("expected a Connector");
    expect(publicConnectorView(c)).toEqual({ name: "github", type: "github", display_name: "GitHub" });
  });
});

describe("validateResource robustness", () => {
  const junk: unknown[] = [null, 1, "x", [], {}, { a: 1 }, [1, "a"], true];
  it.each(RESOURCE_KINDS)("%s: junk metadata/spec/status never throws and never validates", (kind) => {
    for (const metadata of junk) {
      for (const spec of junk) {
        for (const status of junk) {
          const result = validateResource({ apiVersion: "svc.dev/v1", kind, metadata, spec, status });
          expect(result.ok).toBe(false);
        }
      }
    }
  });
});
