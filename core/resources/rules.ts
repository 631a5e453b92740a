// JavaScript mirrors of the CEL rules (x-kubernetes-validations) and of the few limits the schema
// cannot state, so the folder source refuses exactly what the apiserver refuses.
import { parseDuration } from "../duration.ts";
import { MAX_CERT_TTL } from "./agent-identity.ts";
import { appProblems } from "./app-rules.ts";
import type { AnyResource, Connector, JoinToken } from "./kinds.ts";
import { LOCK_TARGET_FIELDS, lockTargetField } from "./lock.ts";

function secretRefProblems(c: Connector): string[] {
  const ref = c.spec.client_secret_ref;
  if (!ref) return [];
  const byFile = ref.file !== undefined;
  const bySecret = ref.secret_name !== undefined || ref.key !== undefined;
  if (byFile && !bySecret) return [];
  if (!byFile && ref.secret_name !== undefined && ref.key !== undefined) return [];
  return ["spec.client_secret_ref: needs either secret_name and key, or file"];
}

function connectorProblems(c: Connector): string[] {
  const out = secretRefProblems(c);
  const s = c.spec.settings;
  if (c.spec.type !== "saml" && (s.client_id === undefined || s.redirect_url === undefined)) {
    out.push("spec.settings: github and oidc connectors need client_id and redirect_url");
  }
  if (c.spec.type === "oidc" && s.issuer_url === undefined)
    out.push("spec.settings.issuer_url: required for oidc");
  if (
    c.spec.type === "saml" &&
    (s.entity_id === undefined || (s.sso_url === undefined && s.idp_metadata_url === undefined))
  ) {
    out.push("spec.settings: saml connectors need entity_id and sso_url or idp_metadata_url");
  }
  return out;
}

function joinTokenProblems(t: JoinToken): string[] {
  const out: string[] = [];
  if (t.spec.join_method === "token" && t.spec.secret_hash === undefined) {
    out.push("spec.secret_hash: required for join_method token");
  }
  if (t.spec.join_method === "iam" && (t.spec.allow === undefined || t.spec.allow.length === 0)) {
    out.push("spec.allow: join_method iam needs at least one allow rule");
  }
  if (t.spec.roles.includes("bot") && t.spec.bot_name === undefined)
    out.push("spec.bot_name: required for role bot");
  if (new Set(t.spec.roles).size !== t.spec.roles.length) out.push("spec.roles: duplicate entries");
  return out;
}

function durationProblem(path: string, text: string | undefined, maxText?: string): string[] {
  if (text === undefined) return [];
  try {
    const ms = parseDuration(text);
    if (ms <= 0) return [`${path}: must be longer than 0s`];
    if (maxText !== undefined && ms > parseDuration(maxText)) return [`${path}: at most ${maxText}`];
    return [];
  } catch {
    return [`${path}: invalid duration ${JSON.stringify(text)}`];
  }
}

/** Rule violations that make a resource invalid (validateResource fails on them). */
export function ruleProblems(resource: AnyResource): string[] {
  switch (resource.kind) {
    case "Connector":
      return connectorProblems(resource);
    case "JoinToken":
      return joinTokenProblems(resource);
    case "AgentIdentity":
      return durationProblem("spec.cert_ttl", resource.spec.cert_ttl, MAX_CERT_TTL);
    case "Role":
      return durationProblem("spec.options.max_session_ttl", resource.spec.options?.max_session_ttl);
    case "User":
      return [];
    case "Lock":
      return (LOCK_TARGET_FIELDS as readonly string[]).includes(lockTargetField(resource.spec.target))
        ? []
        : [lockTargetField(resource.spec.target)];
    case "App":
      return appProblems(resource);
  }
}

const INLINE_SECRET_KEY = /secret|password|passwd|private_?key|api_?key|token/i;

/** Names spec keys that look like an inlined secret (anywhere in a Connector spec). */
export function inlineSecretProblems(spec: unknown, path = "spec"): string[] {
  if (spec === null || typeof spec !== "object" || Array.isArray(spec)) return [];
  const out: string[] = [];
  for (const [key, value] of Object.entries(spec)) {
    if (key === "client_secret_ref") continue;
    if (INLINE_SECRET_KEY.test(key)) {
      out.push(`${path}.${key}: inline secrets are not allowed; reference one with spec.client_secret_ref`);
    } else {
      out.push(...inlineSecretProblems(value, `${path}.${key}`));
    }
  }
  return out;
}
