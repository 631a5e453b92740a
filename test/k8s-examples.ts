// Valid example objects of every kind, shared by the Kubernetes tests (CRDs and source). Fields
// added to a kind later stay out of its example: the CRD upgrade test creates the examples under
// the previous CRDs (k8s-crds.test.ts covers the newer fields, e.g. Role app_labels).
import { stringify } from "yaml";
import type { ResourceKind } from "../core/resources/index.ts";

export const V = "svc.dev/v1";
export const HASH = "b".repeat(64);

export type Manifest = { apiVersion: string; kind: string; metadata: Record<string, unknown> } & Record<
  string,
  unknown
>;

export function examples(): Record<ResourceKind, Manifest> {
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
        },
        deny: { logins: ["root"] },
        options: { max_session_ttl: "8h", require_mfa: true },
      },
    },
    User: {
      apiVersion: V,
      kind: "User",
      metadata: { name: "alice" },
      spec: { roles: ["dev"], traits: { logins: ["alice", "ubuntu"] } },
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
      metadata: { name: "ci-bot" },
      spec: { roles: ["dev"], cert_ttl: "2h", renewal: { fraction: 0.3 } },
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
        uri: "http://grafana.monitoring.svc:3000",
        description: "Dashboards",
        rewrite: {
          headers: [{ name: "X-Forwarded-User", value: "{{user}}" }],
          redirect: ["grafana.monitoring.svc"],
        },
      },
    },
  };
}

/** Multi-document YAML of the given objects. */
export function toYaml(...objects: unknown[]): string {
  return objects.map((o) => stringify(o)).join("---\n");
}
