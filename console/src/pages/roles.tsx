// Roles, read-only: each role's allow and deny rules in words (logins, node labels, admin rights,
// workload identities) and its session options, with where the role is managed. Roles are changed
// where they live (Kubernetes or the manifests folder), never from the console.
import { api, unwrap } from "../api/client.ts";
import type { paths } from "../api/schema.d.ts";
import { EmptyState } from "../components/empty-state.tsx";
import { ErrorBanner } from "../components/error-banner.tsx";
import { Page } from "../components/page.tsx";
import { ManagedBadge, useList } from "./users-kit.tsx";
import "./users.css";

type RoleList = paths["/v1/webapi/admin/roles"]["get"]["responses"][200]["content"]["application/json"];
type RoleRow = RoleList["items"][number];

interface Conditions {
  logins?: string[];
  node_labels?: Record<string, string | string[]>;
  app_labels?: Record<string, string | string[]>;
  rules?: Array<{ resources: string[]; verbs: string[] }>;
  workload_spiffe_ids?: string[];
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

function conditionsOf(spec: Record<string, unknown>, key: "allow" | "deny"): Conditions | undefined {
  const c = spec[key];
  return isObject(c) ? (c as Conditions) : undefined;
}

function labelsText(labels: Record<string, string | string[]>, any = "any node"): string {
  if (labels["*"] === "*" || (Array.isArray(labels["*"]) && labels["*"].includes("*"))) return any;
  return Object.entries(labels)
    .map(([k, v]) => `${k}=${Array.isArray(v) ? v.join(" or ") : v}`)
    .join(", ");
}

const words = (list: string[], all: string): string => (list.includes("*") ? all : list.join(", "));

function ConditionRows(props: { title: string; c: Conditions | undefined }) {
  const c = props.c;
  if (!c) return null;
  const rows: Array<[string, string]> = [];
  if (c.logins?.length) rows.push(["Logins", c.logins.join(", ")]);
  if (c.node_labels && Object.keys(c.node_labels).length > 0)
    rows.push(["Nodes labelled", labelsText(c.node_labels)]);
  if (c.app_labels && Object.keys(c.app_labels).length > 0)
    rows.push(["Apps labelled", labelsText(c.app_labels, "any app")]);
  for (const r of c.rules ?? []) {
    rows.push(["May", `${words(r.verbs, "do anything")} on ${words(r.resources, "every resource")}`]);
  }
  if (c.workload_spiffe_ids?.length) rows.push(["Workload IDs", c.workload_spiffe_ids.join(", ")]);
  if (rows.length === 0) return null;
  return (
    <>
      <h3>{props.title}</h3>
      <dl>
        {rows.map(([k, v]) => (
          <div key={`${k}:${v}`}>
            <dt>{k}</dt>
            <dd class="mono">{v}</dd>
          </div>
        ))}
      </dl>
    </>
  );
}

const OPTION_LABELS: Record<string, string> = {
  max_session_ttl: "Longest session",
  permit_port_forwarding: "Port forwarding",
  permit_agent_forwarding: "Agent forwarding",
  permit_x11_forwarding: "X11 forwarding",
  permit_pty: "Terminal (PTY)",
  permit_user_rc: "~/.ssh/rc",
  require_mfa: "Requires MFA",
  lock: "Holders locked out",
};

function optionRows(spec: Record<string, unknown>): Array<[string, string]> {
  const o = spec["options"];
  if (!isObject(o)) return [];
  return Object.entries(o).map(([k, v]) => {
    const text =
      typeof v === "boolean"
        ? k.startsWith("permit_")
          ? v
            ? "allowed"
            : "not allowed"
          : v
            ? "yes"
            : "no"
        : String(v);
    return [OPTION_LABELS[k] ?? k, text];
  });
}

function RoleCard(props: { role: RoleRow }) {
  const spec = props.role.spec as Record<string, unknown>;
  const options = optionRows(spec);
  return (
    <details class="role-card" data-role={props.role.name}>
      <summary>
        <span class="mono">{props.role.name}</span>
        <ManagedBadge managedBy={props.role.managed_by} />
      </summary>
      <ConditionRows title="Allows" c={conditionsOf(spec, "allow")} />
      <ConditionRows title="Denies (always wins)" c={conditionsOf(spec, "deny")} />
      {options.length > 0 ? (
        <>
          <h3>Session options</h3>
          <dl>
            {options.map(([k, v]) => (
              <div key={k}>
                <dt>{k}</dt>
                <dd>{v}</dd>
              </div>
            ))}
          </dl>
        </>
      ) : null}
    </details>
  );
}

export default function RolesPage() {
  const list = useList(() => unwrap(api.GET("/v1/webapi/admin/roles")));
  return (
    <Page title="Roles">
      <ErrorBanner error={list.error} id="roles-error" />
      <p class="help">
        Roles are read-only here: change them where they are managed. Open a role to read its rules.
      </p>
      {list.items ? (
        list.items.length === 0 ? (
          <EmptyState title="No roles" />
        ) : (
          <div id="roles">
            {list.items.map((r) => (
              <RoleCard key={r.name} role={r} />
            ))}
          </div>
        )
      ) : list.error ? null : (
        <p aria-busy="true">Loading…</p>
      )}
    </Page>
  );
}
