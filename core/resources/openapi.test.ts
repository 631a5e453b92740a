import { describe, expect, it } from "vitest";
import type { JsonValue } from "../json.ts";
import { RESOURCE_KINDS } from "./index.ts";
import { openApiV3Schema } from "./openapi.ts";

// Checks the structural-schema rules of apiextensions.k8s.io/v1 that the apiserver enforces.
function violations(node: JsonValue, path: string, needsType: boolean): string[] {
  if (node === null || typeof node !== "object" || Array.isArray(node)) return [`${path}: not a schema`];
  const out: string[] = [];
  const preserve = node["x-kubernetes-preserve-unknown-fields"] === true;
  if (needsType && typeof node["type"] !== "string" && !preserve) out.push(`${path}: no type`);
  for (const banned of ["$ref", "anyOf", "oneOf", "allOf", "not", "patternProperties", "const"]) {
    if (banned in node) out.push(`${path}: uses ${banned}`);
  }
  const props = node["properties"];
  if (props && typeof props === "object" && !Array.isArray(props)) {
    for (const [k, v] of Object.entries(props)) out.push(...violations(v, `${path}.${k}`, true));
  }
  const extra = node["additionalProperties"];
  if (extra !== undefined && typeof extra !== "boolean") out.push(...violations(extra, `${path}{}`, true));
  if (extra === true) out.push(`${path}: additionalProperties true (use preserve-unknown-fields)`);
  if (node["items"] !== undefined) out.push(...violations(node["items"], `${path}[]`, true));
  return out;
}

describe("openApiV3Schema", () => {
  it.each(RESOURCE_KINDS)("%s is structural", (kind) => {
    const schema = openApiV3Schema(kind);
    expect(violations(schema, kind, true)).toEqual([]);
  });

  it("keeps the CEL rules and defaults", () => {
    const token = JSON.stringify(openApiV3Schema("JoinToken"));
    expect(token).toContain("join_method iam needs at least one allow rule");
    const role = openApiV3Schema("Role");
    expect(JSON.stringify(role)).toContain('"default":"12h"');
    expect(JSON.stringify(role)).toContain('"x-kubernetes-preserve-unknown-fields":true');
  });

  it("limits user names to 64 characters", () => {
    const user = openApiV3Schema("User") as {
      properties: { metadata: { properties: { name: { maxLength: number } } } };
    };
    expect(user.properties.metadata.properties.name.maxLength).toBe(64);
  });
});
