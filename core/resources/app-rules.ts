// App rules the schema cannot state: the URI as `new URL` reads it (the proxy forwards to exactly
// that), JavaScript mirrors of the CEL rules on rewrite.headers, and header value templates.
import { RESERVED_APP_HEADERS } from "./app.ts";
import type { App } from "./kinds.ts";
import { DNS_LABEL_PATTERN } from "./meta.ts";

const RESERVED: ReadonlySet<string> = new Set(RESERVED_APP_HEADERS);
const DNS_LABEL = new RegExp(DNS_LABEL_PATTERN);
const EXPRESSION = /\{\{\s*([^{}]*?)\s*\}\}/g;
// The same trait names login templates accept (core/rbac/template.ts).
const REFERENCE = /^(user|(internal|external)\.[A-Za-z0-9_][A-Za-z0-9_.:/-]*)$/;

function uriProblems(uri: string): string[] {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return ["spec.uri: not a URL"];
  }
  const out: string[] = [];
  if (url.protocol !== "http:" && url.protocol !== "https:")
    out.push("spec.uri: must be http:// or https://");
  if (url.hostname === "") out.push("spec.uri: needs a host");
  if (url.username !== "" || url.password !== "")
    out.push("spec.uri: must not carry credentials (user:password@)");
  // The raw text too: `new URL` drops an empty "?" or "#".
  if (url.search !== "" || url.hash !== "" || /[?#]/.test(uri))
    out.push("spec.uri: must not have a query or fragment (requests keep their own)");
  return out;
}

/** "" when the header value's {{ }} expressions are all known, else why not. */
function templateProblem(value: string): string {
  for (const m of value.matchAll(EXPRESSION)) {
    if (!REFERENCE.test(m[1] ?? "")) return `"${m[1]}" is not user, internal.<trait> or external.<trait>`;
  }
  const rest = value.replace(EXPRESSION, "");
  return rest.includes("{{") || rest.includes("}}") ? "unbalanced {{ }}" : "";
}

function headerProblems(app: App): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  (app.spec.rewrite?.headers ?? []).forEach((h, i) => {
    const name = h.name.toLowerCase();
    if (RESERVED.has(name))
      out.push(`spec.rewrite.headers[${i}].name: "${h.name}" is a header the proxy owns (docs/apps.md)`);
    if (seen.has(name))
      out.push(`spec.rewrite.headers[${i}].name: "${h.name}" is named twice (names are case-insensitive)`);
    seen.add(name);
    const template = templateProblem(h.value);
    if (template !== "") out.push(`spec.rewrite.headers[${i}].value: ${template}`);
  });
  return out;
}

/** A bare host name as a URL host reads it back: lower-case, no scheme, port, path or userinfo. */
function isHostName(text: string): boolean {
  try {
    return new URL(`http://${text}/`).hostname === text;
  } catch {
    return false;
  }
}

/** Rule violations that make an App invalid. */
export function appProblems(app: App): string[] {
  const out: string[] = [];
  // The name is the first label of the default host name (`<name>.<proxy public host>`).
  if (!DNS_LABEL.test(app.metadata.name))
    out.push("metadata.name: must be a DNS label (no dots): it is the app's default host label");
  out.push(...uriProblems(app.spec.uri));
  const addr = app.spec.public_addr;
  if (addr !== undefined && !addr.includes("."))
    out.push("spec.public_addr: must be a host name under the proxy's public host (<label>.<host>)");
  out.push(...headerProblems(app));
  (app.spec.rewrite?.redirect ?? []).forEach((host, i) => {
    if (!isHostName(host))
      out.push(`spec.rewrite.redirect[${i}]: must be a lower-case host name (no scheme, port or path)`);
  });
  return out;
}
