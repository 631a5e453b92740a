// Role: allow and deny conditions plus session options. Deny always wins (see core/rbac).
import { type Static, Type } from "@sinclair/typebox";
import { DURATION_PATTERN } from "../duration.ts";
import { baseStatusProperties } from "./meta.ts";
import { StringMap } from "./schema-kit.ts";

/** Resource names used in role rules (lower-case plural), "*" for all. */
export const RULE_RESOURCES = [
  "users",
  "roles",
  "tokens",
  "nodes",
  "sessions",
  "audit",
  "agent_identities",
  "connectors",
  "locks",
  "cert_authorities",
  "apps",
  "*",
] as const;
/** "assign" on "roles": may give any role to a user or bot, not only the ones it holds itself. */
export const RULE_VERBS = ["list", "read", "create", "update", "delete", "assign", "*"] as const;
export type RuleResource = (typeof RULE_RESOURCES)[number];
export type RuleVerb = (typeof RULE_VERBS)[number];

// Rule resources and verbs stay plain strings in the schema (so a newer role still loads in an
// older auth); unknown names are reported by semanticProblems and simply never match.
export const RuleSchema = Type.Object(
  {
    resources: Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { minItems: 1 }),
    verbs: Type.Array(Type.String({ minLength: 1, maxLength: 32 }), { minItems: 1 }),
  },
  { additionalProperties: false },
);
export type Rule = Static<typeof RuleSchema>;

/**
 * A node-label value: one string or a list (any element may match). "*" matches any value, a
 * value written as ^...$ is a regular expression, anything else matches exactly. In the CRD this
 * spot cannot have one type, so it keeps unknown fields and a CEL rule checks the shape.
 */
export const LabelValueSchema = Type.Union(
  [Type.String({ maxLength: 1024 }), Type.Array(Type.String({ maxLength: 1024 }))],
  {
    "x-kubernetes-preserve-unknown-fields": true,
    "x-kubernetes-validations": [
      {
        rule: "type(self) == string || type(self) == list",
        message: "a node label value must be a string or a list of strings",
      },
    ],
  },
);

export const RoleConditionsSchema = Type.Object(
  {
    logins: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 256 }))),
    node_labels: Type.Optional(StringMap(LabelValueSchema)),
    /** Apps this role reaches through the proxy, by their labels (same matching as node_labels). */
    app_labels: Type.Optional(StringMap(LabelValueSchema)),
    rules: Type.Optional(Type.Array(RuleSchema)),
    workload_spiffe_ids: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 1024 }))),
  },
  { additionalProperties: false },
);
export type RoleConditions = Static<typeof RoleConditionsSchema>;

export const DEFAULT_MAX_SESSION_TTL = "12h";

export const RoleOptionsSchema = Type.Object(
  {
    max_session_ttl: Type.Optional(
      Type.String({ pattern: DURATION_PATTERN, maxLength: 32, default: DEFAULT_MAX_SESSION_TTL }),
    ),
    permit_port_forwarding: Type.Optional(Type.Boolean({ default: true })),
    permit_agent_forwarding: Type.Optional(Type.Boolean({ default: true })),
    permit_x11_forwarding: Type.Optional(Type.Boolean({ default: false })),
    permit_pty: Type.Optional(Type.Boolean({ default: true })),
    permit_user_rc: Type.Optional(Type.Boolean({ default: true })),
    require_mfa: Type.Optional(Type.Boolean({ default: false })),
    /** When true, holders of this role are locked out (no certificates, no sessions). */
    lock: Type.Optional(Type.Boolean({ default: false })),
  },
  { additionalProperties: false },
);
export type RoleOptions = Static<typeof RoleOptionsSchema>;

export const RoleSpecSchema = Type.Object(
  {
    allow: Type.Optional(RoleConditionsSchema),
    deny: Type.Optional(RoleConditionsSchema),
    options: Type.Optional(RoleOptionsSchema),
  },
  { additionalProperties: false },
);
export type RoleSpec = Static<typeof RoleSpecSchema>;

export const RoleStatusSchema = Type.Object({ ...baseStatusProperties }, { additionalProperties: false });
export type RoleStatus = Static<typeof RoleStatusSchema>;
