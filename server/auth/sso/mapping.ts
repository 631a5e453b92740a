// From an external identity to what the user holds here: claims_to_roles (one rule shape for OIDC
// claims, SAML attributes and GitHub facts) and the traits the roles' templates read. Pure.
import type { ClaimMapping } from "../../../core/resources/connector.ts";

/** Bounds on what an identity may bring in (it is stored with the SSO user record). */
export const MAX_CLAIMS = 64;
export const MAX_CLAIM_VALUES = 256;
export const MAX_CLAIM_VALUE = 1024;
const MAX_CLAIM_NAME = 256;

/** `value` of a rule: exact, or a glob where "*" is any run of characters (nothing else is special). */
export function claimValueMatches(pattern: string, value: string): boolean {
  if (!pattern.includes("*")) return pattern === value;
  const parts = pattern.split("*");
  const first = parts[0] ?? "";
  const last = parts[parts.length - 1] ?? "";
  if (value.length < first.length + last.length) return false;
  if (!value.startsWith(first) || !value.endsWith(last)) return false;
  // Greedy left-to-right scan of the middle parts: linear, no regular expression to blow up.
  let at = first.length;
  const end = value.length - last.length;
  for (const part of parts.slice(1, -1)) {
    if (part === "") continue;
    const i = value.indexOf(part, at);
    if (i < 0 || i + part.length > end) return false;
    at = i + part.length;
  }
  return true;
}

/** The roles the rules give these claims, in rule order, without duplicates. */
export function mapClaimsToRoles(
  rules: readonly ClaimMapping[] | undefined,
  claims: Readonly<Record<string, readonly string[]>>,
): string[] {
  const out: string[] = [];
  for (const rule of rules ?? []) {
    const values = Object.hasOwn(claims, rule.claim) ? (claims[rule.claim] ?? []) : [];
    if (!values.some((v) => claimValueMatches(rule.value, v))) continue;
    for (const role of rule.roles) if (!out.includes(role)) out.push(role);
  }
  return out;
}

/**
 * One claim value as strings: a string, number or boolean is one value; an array contributes its
 * scalar members; objects and null contribute nothing (rules and templates compare strings).
 */
export function claimStrings(value: unknown): string[] {
  const scalar = (v: unknown): string | undefined =>
    typeof v === "string" ? v : typeof v === "number" || typeof v === "boolean" ? String(v) : undefined;
  if (Array.isArray(value)) return value.map(scalar).filter((v): v is string => v !== undefined);
  const s = scalar(value);
  return s === undefined ? [] : [s];
}

/** The claims as bounded string lists: at most MAX_CLAIMS names, MAX_CLAIM_VALUES values each. */
export function boundClaims(claims: Readonly<Record<string, readonly string[]>>): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  let n = 0;
  for (const [name, values] of Object.entries(claims)) {
    if (n >= MAX_CLAIMS) break;
    if (name.length === 0 || name.length > MAX_CLAIM_NAME || name === "__proto__") continue;
    const kept = values.filter((v) => v.length <= MAX_CLAIM_VALUE).slice(0, MAX_CLAIM_VALUES);
    if (kept.length === 0) continue;
    out[name] = kept;
    n++;
  }
  return out;
}

const NAME_PATTERN = /^[a-z0-9][a-z0-9._@+-]{0,127}$/;

/**
 * The user name an identity gets: the provider's value lower-cased (e-mail addresses and GitHub
 * logins compare without case), letters, digits and . _ @ + - only, at most 128 characters; any
 * other value is refused rather than rewritten, so two identities never collapse into one name.
 */
export function ssoUserName(raw: string): string | undefined {
  const name = raw.toLowerCase();
  return NAME_PATTERN.test(name) ? name : undefined;
}
