// What a schema cannot say. The operator turns these into Ready=False; auth ignores a resource
// that has any. Pure: the clock is passed in.
import type { Clock } from "../clock.ts";
import { parseDuration } from "../duration.ts";
import { compileAnchored, isRegexValue } from "../rbac/match.ts";
import { parseLogin } from "../rbac/template.ts";
import type { ConnectorSettings } from "./connector.ts";
import type { AnyResource, Role } from "./kinds.ts";
import { type RoleConditions, RULE_RESOURCES, RULE_VERBS } from "./role.ts";
import { ruleProblems } from "./rules.ts";

export interface SemanticContext {
  /** When given, a JoinToken whose expiry has passed is a problem. */
  clock?: Clock;
}

/** node_labels and app_labels: values are matched the same way, so they are checked the same way. */
function labelProblems(where: string, selector: RoleConditions["node_labels"]): string[] {
  const out: string[] = [];
  for (const [key, value] of Object.entries(selector ?? {})) {
    const values = Array.isArray(value) ? value : [value];
    values.forEach((v, i) => {
      const at = Array.isArray(value) ? `[${i}]` : "";
      if (isRegexValue(v) && compileAnchored(v) === null) {
        out.push(
          `${where}[${JSON.stringify(key)}]${at}: regular expression does not compile (or nests quantifiers)`,
        );
      }
    });
    if (key === "*" && !values.includes("*")) out.push(`${where}["*"]: the key "*" only takes the value "*"`);
  }
  return out;
}

function conditionProblems(where: string, c: RoleConditions | undefined): string[] {
  if (!c) return [];
  const out: string[] = [];
  c.logins?.forEach((login, i) => {
    const parsed = parseLogin(login);
    if (parsed.kind === "invalid") out.push(`${where}.logins[${i}]: ${parsed.reason}`);
  });
  out.push(...labelProblems(`${where}.node_labels`, c.node_labels));
  out.push(...labelProblems(`${where}.app_labels`, c.app_labels));
  c.rules?.forEach((rule, i) => {
    for (const r of rule.resources) {
      if (!(RULE_RESOURCES as readonly string[]).includes(r))
        out.push(`${where}.rules[${i}].resources: unknown resource "${r}"`);
    }
    for (const v of rule.verbs) {
      if (!(RULE_VERBS as readonly string[]).includes(v))
        out.push(`${where}.rules[${i}].verbs: unknown verb "${v}"`);
    }
  });
  c.workload_spiffe_ids?.forEach((id, i) => {
    if (!id.startsWith("/") && id !== "*")
      out.push(`${where}.workload_spiffe_ids[${i}]: a SPIFFE path starts with "/"`);
  });
  return out;
}

function roleProblems(role: Role): string[] {
  return [
    ...conditionProblems("spec.allow", role.spec.allow),
    ...conditionProblems("spec.deny", role.spec.deny),
  ];
}

const RESERVED_CONNECTOR_NAMES: readonly string[] = ["requests", "callback", "exchange", "saml"];

const SSO_TTL_MIN_MS = 5 * 60_000;
const SSO_TTL_MAX_MS = 30 * 86_400_000;

/** Identity providers are reached over HTTPS only; session caps stay within auth's own bounds. */
function connectorProblems(settings: ConnectorSettings): string[] {
  const out: string[] = [];
  for (const key of ["issuer_url", "endpoint_url", "api_endpoint_url"] as const) {
    const v = settings[key];
    if (v === undefined) continue;
    let ok = false;
    try {
      ok = new URL(v).protocol === "https:";
    } catch {
      ok = false;
    }
    if (!ok) out.push(`spec.settings.${key}: must be an https:// URL`);
  }
  if (settings.max_session_ttl !== undefined) {
    let ms = 0;
    try {
      ms = parseDuration(settings.max_session_ttl);
    } catch {
      ms = 0;
    }
    if (ms < SSO_TTL_MIN_MS || ms > SSO_TTL_MAX_MS)
      out.push("spec.settings.max_session_ttl: must be between 5m and 30d");
  }
  return out;
}

/** Problems the schema cannot express; [] when the resource is usable. */
export function semanticProblems(resource: AnyResource, ctx: SemanticContext = {}): string[] {
  const out = ruleProblems(resource);
  switch (resource.kind) {
    case "Role":
      out.push(...roleProblems(resource));
      break;
    case "Connector":
      // The proxy's SSO routes live beside /v1/webapi/sso/{connector}/...: a connector with one of
      // these names would lose its login route to them.
      if (RESERVED_CONNECTOR_NAMES.includes(resource.metadata.name)) {
        out.push(`metadata.name: "${resource.metadata.name}" is reserved by the proxy's SSO routes`);
      }
      if (resource.spec.type !== "saml" && resource.spec.client_secret_ref === undefined) {
        out.push("spec.client_secret_ref: required for github and oidc connectors");
      }
      out.push(...connectorProblems(resource.spec.settings));
      break;
    case "JoinToken": {
      const expires = Date.parse(resource.spec.expires);
      if (Number.isNaN(expires)) out.push("spec.expires: not a date-time");
      else if (ctx.clock && expires <= ctx.clock.now().getTime())
        out.push("spec.expires: already in the past");
      if (resource.spec.bot_name !== undefined && !resource.spec.roles.includes("bot")) {
        out.push("spec.bot_name: only meaningful with role bot");
      }
      break;
    }
    case "User":
      if (new Set(resource.spec.roles).size !== resource.spec.roles.length)
        out.push("spec.roles: duplicate entries");
      break;
    case "AgentIdentity":
    case "App":
    case "Lock":
      // An expired Lock is not a problem: it simply no longer counts (auth sweeps it away).
      break;
  }
  return out;
}
