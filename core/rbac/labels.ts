// Node-label selectors of a role. Allow: every listed key must match (AND). Deny: any listed key
// matching is enough (deny reaches as far as it can). Key "*" with value "*" matches every node.
import { compileAnchored, isRegexValue, matchValue } from "./match.ts";

export type LabelSelector = Readonly<Record<string, string | readonly string[]>>;
export type NodeLabels = Readonly<Record<string, string>>;

function values(v: string | readonly string[]): readonly string[] {
  return typeof v === "string" ? [v] : v;
}

function keyMatches(
  key: string,
  patterns: readonly string[],
  labels: NodeLabels,
  failClosed: boolean,
): boolean {
  if (key === "*") return patterns.includes("*");
  if (!Object.hasOwn(labels, key)) return false;
  const value = labels[key] ?? "";
  return patterns.some((p) => {
    // A deny regex that does not compile denies (fail closed); an allow one never allows.
    if (failClosed && isRegexValue(p) && compileAnchored(p) === null) return true;
    return matchValue(p, value);
  });
}

/** Allow selector: true when every key matches; an absent or empty selector allows no node. */
export function allowMatches(selector: LabelSelector | undefined, labels: NodeLabels): boolean {
  if (!selector) return false;
  const entries = Object.entries(selector);
  if (entries.length === 0) return false;
  return entries.every(([key, v]) => keyMatches(key, values(v), labels, false));
}

/** Deny selector: true when any key matches; an absent or empty selector denies no node. */
export function denyMatches(selector: LabelSelector | undefined, labels: NodeLabels): boolean {
  if (!selector) return false;
  return Object.entries(selector).some(([key, v]) => keyMatches(key, values(v), labels, true));
}
