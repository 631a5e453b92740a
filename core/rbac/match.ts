// Matchers shared by role evaluation and join rules: anchored regular expressions (compiled once,
// cached) and simple globs. Inputs longer than MAX_MATCH_INPUT never match, which bounds the
// work a hostile label value or ARN can cause.
export const MAX_MATCH_INPUT = 1024;
const MAX_CACHE = 10_000;

const regexCache = new Map<string, RegExp | null>();

function cached(key: string, build: () => RegExp): RegExp | null {
  const hit = regexCache.get(key);
  if (hit !== undefined) return hit;
  let compiled: RegExp | null;
  try {
    compiled = build();
  } catch {
    compiled = null;
  }
  if (regexCache.size >= MAX_CACHE) regexCache.clear();
  regexCache.set(key, compiled);
  return compiled;
}

/** A label value written as ^...$ is a regular expression. */
export function isRegexValue(value: string): boolean {
  return value.length >= 2 && value.startsWith("^") && value.endsWith("$");
}

// A quantified group that itself contains a quantifier or an alternation ("(a+)+", "(a|a)*") or a
// back-reference can backtrack exponentially; such patterns are refused rather than run on input
// that nodes send. A small scanner (escapes and character classes skipped) finds them.
const BACK_REFERENCE = /\\[1-9]|\\k</;

/** False for patterns this module refuses to run (catastrophic backtracking risk). */
export function isSafePattern(inner: string): boolean {
  if (BACK_REFERENCE.test(inner)) return false;
  // Per open group: does it contain a quantifier or an alternation ("(a|a)*" backtracks too)?
  const groups: boolean[] = [];
  let inClass = false;
  for (let i = 0; i < inner.length; i++) {
    const ch = inner[i];
    if (ch === "\\") {
      i++;
      continue;
    }
    if (inClass) {
      if (ch === "]") inClass = false;
      continue;
    }
    if (ch === "[") inClass = true;
    else if (ch === "(") groups.push(false);
    else if (ch === "*" || ch === "+" || ch === "{" || ch === "|") {
      if (groups.length > 0) groups[groups.length - 1] = true;
    } else if (ch === ")") {
      const hadQuantifier = groups.pop() ?? false;
      const next = inner[i + 1];
      const quantified = next === "*" || next === "+" || next === "{";
      if (hadQuantifier && quantified) return false;
      if (hadQuantifier && groups.length > 0) groups[groups.length - 1] = true;
    }
  }
  return true;
}

/**
 * The anchored RegExp for a ^...$ value (alternations stay inside the anchors), or null if it
 * does not compile or is refused by isSafePattern.
 */
export function compileAnchored(value: string): RegExp | null {
  const inner = value.slice(1, -1);
  return cached(`re:${value}`, () => {
    if (!isSafePattern(inner)) throw new Error("unsafe pattern");
    return new RegExp(`^(?:${inner})$`);
  });
}

/** Exact, "*" (anything) or ^regex$ against one value. */
export function matchValue(pattern: string, value: string): boolean {
  if (pattern === "*") return true;
  if (value.length > MAX_MATCH_INPUT) return false;
  if (isRegexValue(pattern)) return compileAnchored(pattern)?.test(value) ?? false;
  return pattern === value;
}

/** Glob: "*" any run of characters (including "/"), "?" exactly one; the rest is literal. */
export function globMatch(pattern: string, value: string): boolean {
  if (pattern === "*") return true;
  if (value.length > MAX_MATCH_INPUT) return false;
  if (!pattern.includes("*") && !pattern.includes("?")) return pattern === value;
  const re = cached(`glob:${pattern}`, () => {
    const body = pattern
      .replace(/[.+^${}()|[\]\\]/g, "\\$&")
      .replace(/\*/g, ".*")
      .replace(/\?/g, ".");
    return new RegExp(`^${body}$`, "su");
  });
  return re?.test(value) ?? false;
}
