// Runtime validation of any resource object: kind dispatch, defaults (as the apiserver applies
// them), schema check with field paths, then the CEL-equivalent rules.
import type { TSchema } from "@sinclair/typebox";
import { type TypeCheck, TypeCompiler } from "@sinclair/typebox/compiler";
import { Value } from "@sinclair/typebox/value";
import { DURATION_PATTERN } from "../duration.ts";
import { BadParameterError } from "../errors.ts";
import { HEADER_NAME_PATTERN, HEADER_VALUE_PATTERN } from "./app.ts";
import { type AnyResource, isResourceKind, kindInfo, RESOURCE_KINDS, type ResourceKind } from "./kinds.ts";
import { API_VERSION, DNS_LABEL_PATTERN, DNS_SUBDOMAIN_PATTERN } from "./meta.ts";
import { inlineSecretProblems, ruleProblems } from "./rules.ts";

export type ValidationResult = { ok: true; resource: AnyResource } | { ok: false; errors: string[] };

const MAX_ERRORS = 20;
const compiled = new Map<ResourceKind, TypeCheck<TSchema>>();

function checkerFor(kind: ResourceKind): TypeCheck<TSchema> {
  let checker = compiled.get(kind);
  if (!checker) {
    checker = TypeCompiler.Compile(kindInfo[kind].schema);
    compiled.set(kind, checker);
  }
  return checker;
}

/** "/spec/allow/logins/0" -> "spec.allow.logins[0]" */
export function fieldPath(pointer: string): string {
  if (pointer === "" || pointer === "/") return "(root)";
  let out = "";
  for (const raw of pointer.split("/").slice(1)) {
    const part = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    if (/^[0-9]+$/.test(part)) out += `[${part}]`;
    else if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(part)) out += out ? `.${part}` : part;
    else out += `[${JSON.stringify(part)}]`;
  }
  return out;
}

const PATTERN_MESSAGES: Record<string, string> = {
  [DNS_SUBDOMAIN_PATTERN]:
    "must be a lower-case DNS-1123 subdomain (a-z, 0-9, '-', '.'; alphanumeric at both ends)",
  [DNS_LABEL_PATTERN]:
    "must be a lower-case DNS-1123 label (a-z, 0-9, '-'; no dots; alphanumeric at both ends)",
  [HEADER_NAME_PATTERN]: "must be an HTTP header name",
  [HEADER_VALUE_PATTERN]: "must not contain control characters (CR, LF, NUL, ...)",
  [DURATION_PATTERN]: 'must be a duration such as "30m", "8h", "1h30m" (units s, m, h, d)',
  "^[0-9]{12}$": "must be a 12-digit AWS account id",
  "^[0-9a-f]{64}$": "must be a sha256 in lower-case hex (64 characters)",
};

function describe(schema: unknown, message: string): string {
  if (schema && typeof schema === "object") {
    if ("enum" in schema && Array.isArray(schema.enum)) {
      return `must be one of ${schema.enum.map((v) => JSON.stringify(v)).join(", ")}`;
    }
    if ("pattern" in schema && typeof schema.pattern === "string") {
      const known = PATTERN_MESSAGES[schema.pattern];
      if (known) return known;
    }
    if ("anyOf" in schema && "x-kubernetes-preserve-unknown-fields" in schema)
      return "must be a string or a list of strings";
  }
  return message.charAt(0).toLowerCase() + message.slice(1);
}

/** Validates an unknown object as one of the kinds; returns a defaulted copy on success. */
export function validateResource(obj: unknown): ValidationResult {
  if (obj === null || typeof obj !== "object" || Array.isArray(obj)) {
    return { ok: false, errors: ["(root): must be an object"] };
  }
  const record = obj as Record<string, unknown>;
  if (record["apiVersion"] !== API_VERSION) {
    return { ok: false, errors: [`apiVersion: must be ${JSON.stringify(API_VERSION)}`] };
  }
  const kind = record["kind"];
  if (!isResourceKind(kind)) {
    return { ok: false, errors: [`kind: must be one of ${RESOURCE_KINDS.join(", ")}`] };
  }
  const errors: string[] = [];
  if (kind === "Connector") errors.push(...inlineSecretProblems(record["spec"]));

  const info = kindInfo[kind];
  const candidate = Value.Default(info.schema, structuredClone(obj));
  const checker = checkerFor(kind);
  if (!checker.Check(candidate)) {
    const seen = new Set(errors.map((e) => e.split(":")[0]));
    for (const error of checker.Errors(candidate)) {
      const path = fieldPath(error.path);
      const line = `${path}: ${describe(error.schema, error.message)}`;
      // The inline-secret message already explains an unknown secret field better.
      if (seen.has(path)) continue;
      seen.add(path);
      errors.push(line);
      if (errors.length >= MAX_ERRORS) break;
    }
    return { ok: false, errors };
  }
  const resource = candidate as AnyResource;
  errors.push(...ruleProblems(resource));
  if (errors.length > 0) return { ok: false, errors };
  return { ok: true, resource };
}

/** validateResource that throws BadParameterError naming the object and every problem. */
export function parseResource(obj: unknown): AnyResource {
  const result = validateResource(obj);
  if (result.ok) return result.resource;
  const record = obj && typeof obj === "object" ? (obj as Record<string, unknown>) : {};
  const meta =
    record["metadata"] && typeof record["metadata"] === "object"
      ? (record["metadata"] as Record<string, unknown>)
      : {};
  const kind = typeof record["kind"] === "string" ? record["kind"] : "resource";
  const name = typeof meta["name"] === "string" ? ` ${JSON.stringify(meta["name"].slice(0, 253))}` : "";
  throw new BadParameterError(`invalid ${kind}${name}: ${result.errors.join("; ")}`);
}
