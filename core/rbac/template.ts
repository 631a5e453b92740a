// Login templates: "{{internal.logins}}", "{{external.github_user}}", optionally with literal
// text around one expression ("dev-{{internal.logins}}"). Anything else in braces is invalid.
export type TraitNamespace = "internal" | "external";

export type ParsedLogin =
  | { kind: "literal"; value: string }
  | { kind: "template"; namespace: TraitNamespace; trait: string; prefix: string; suffix: string }
  | { kind: "invalid"; reason: string };

const EXPRESSION = /\{\{\s*([^{}]*?)\s*\}\}/g;
const REFERENCE = /^(internal|external)\.([A-Za-z0-9_][A-Za-z0-9_.:/-]*)$/;

export function parseLogin(text: string): ParsedLogin {
  const matches = [...text.matchAll(EXPRESSION)];
  if (matches.length === 0) {
    if (text.includes("{{") || text.includes("}}")) return { kind: "invalid", reason: "unbalanced {{ }}" };
    return { kind: "literal", value: text };
  }
  if (matches.length > 1) return { kind: "invalid", reason: "only one {{ }} expression per login" };
  const match = matches[0]!;
  const reference = REFERENCE.exec(match[1] ?? "");
  if (!reference) {
    return { kind: "invalid", reason: `"${match[1]}" is not internal.<trait> or external.<trait>` };
  }
  const start = match.index ?? 0;
  const prefix = text.slice(0, start);
  const suffix = text.slice(start + match[0].length);
  if (/[{}]/.test(prefix + suffix)) return { kind: "invalid", reason: "unbalanced {{ }}" };
  return {
    kind: "template",
    namespace: reference[1] as TraitNamespace,
    trait: reference[2]!,
    prefix,
    suffix,
  };
}

export type Traits = Readonly<Record<string, readonly string[]>>;

/**
 * Expands one login: "internal" reads the User's traits, "external" the traits the SSO provider
 * asserted. A template whose trait is missing or empty yields nothing; an invalid one too.
 */
export function expandLogin(text: string, internal: Traits, external: Traits = internal): string[] {
  const parsed = parseLogin(text);
  if (parsed.kind === "literal") return [parsed.value];
  if (parsed.kind === "invalid") return [];
  const traits = parsed.namespace === "internal" ? internal : external;
  const values = Object.hasOwn(traits, parsed.trait) ? (traits[parsed.trait] ?? []) : [];
  const out: string[] = [];
  for (const value of values) {
    const login = parsed.prefix + value + parsed.suffix;
    // Trait values come from users' records and from identity providers: only a plain OS login
    // may come out, never a node-scoped principal ("root@prod-1") or anything a shell or sshd
    // would read differently.
    if (LOGIN_NAME.test(login)) out.push(login);
  }
  return out;
}

/** What an expanded template may yield: a portable OS user name (letters, digits, . _ -; <= 32). */
export const LOGIN_NAME = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,31}$/;
