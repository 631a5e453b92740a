// The openAPIV3Schema of each kind's CRD, derived from the same TypeBox schemas that type and
// validate the resources. TypeBox adds only symbol keys, which JSON drops; the one spot that
// cannot be structural (a node-label value: string or list) keeps unknown fields and a CEL rule,
// so its anyOf is dropped here.
import type { JsonObject, JsonValue } from "../json.ts";
import { kindInfo, type ResourceKind } from "./kinds.ts";
import { DNS_SUBDOMAIN_PATTERN } from "./meta.ts";

function structural(node: JsonValue): JsonValue {
  if (Array.isArray(node)) return node.map(structural);
  if (node === null || typeof node !== "object") return node;
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === "anyOf" && node["x-kubernetes-preserve-unknown-fields"] === true) continue;
    // Runtime-only keyword: "date-time" and friends are understood by both, "$id" is not wanted.
    if (key === "$id") continue;
    out[key] = structural(value);
  }
  return out;
}

function plain(schema: unknown): JsonValue {
  return JSON.parse(JSON.stringify(schema)) as JsonValue;
}

/** The `openAPIV3Schema` for the kind's CRD version v1. */
export function openApiV3Schema(kind: ResourceKind): JsonObject {
  const info = kindInfo[kind];
  return {
    type: "object",
    required: ["spec"],
    properties: {
      apiVersion: { type: "string" },
      kind: { type: "string" },
      metadata: {
        type: "object",
        properties: {
          name: {
            type: "string",
            maxLength: info.nameMaxLength,
            pattern: info.namePattern ?? DNS_SUBDOMAIN_PATTERN,
          },
        },
      },
      spec: structural(plain(info.specSchema)),
      status: structural(plain(info.statusSchema)),
    },
  };
}
