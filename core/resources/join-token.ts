// JoinToken: a one-time token for a node or bot join. The secret itself is never stored: a token
// is presented as "<name>.<secret>" and the resource keeps sha256(secret) in hex.
import { type Static, Type } from "@sinclair/typebox";
import { baseStatusProperties, TimestampSchema } from "./meta.ts";
import { cel, StringEnum, StringMap } from "./schema-kit.ts";

export const JOIN_ROLES = ["node", "bot"] as const;
export const JOIN_METHODS = ["token", "iam"] as const;
export type JoinRole = (typeof JOIN_ROLES)[number];
export type JoinMethod = (typeof JOIN_METHODS)[number];

export const IamAllowRuleSchema = Type.Object(
  {
    aws_account: Type.String({ pattern: "^[0-9]{12}$" }),
    /** Glob ("*" any run of characters, "?" one) over the caller's ARN. */
    aws_arn: Type.Optional(Type.String({ minLength: 1, maxLength: 2048 })),
  },
  { additionalProperties: false },
);
export type IamAllowRule = Static<typeof IamAllowRuleSchema>;

export const JoinTokenSpecSchema = Type.Object(
  {
    roles: Type.Array(StringEnum(JOIN_ROLES), { minItems: 1, maxItems: 2, "x-kubernetes-list-type": "set" }),
    join_method: StringEnum(JOIN_METHODS),
    secret_hash: Type.Optional(Type.String({ pattern: "^[0-9a-f]{64}$" })),
    allow: Type.Optional(Type.Array(IamAllowRuleSchema)),
    expires: TimestampSchema,
    bot_name: Type.Optional(Type.String({ minLength: 1, maxLength: 253 })),
    node_labels: Type.Optional(StringMap(Type.String({ maxLength: 1024 }))),
  },
  {
    additionalProperties: false,
    ...cel(
      {
        rule: "self.join_method != 'token' || has(self.secret_hash)",
        message: "join_method token needs secret_hash",
      },
      {
        rule: "self.join_method != 'iam' || (has(self.allow) && size(self.allow) > 0)",
        message: "join_method iam needs at least one allow rule",
      },
      {
        rule: "!('bot' in self.roles) || has(self.bot_name)",
        message: "a token with role bot needs bot_name",
      },
    ),
  },
);
export type JoinTokenSpec = Static<typeof JoinTokenSpecSchema>;

export const JOIN_TOKEN_PHASES = ["Pending", "Used", "Expired"] as const;
export type JoinTokenPhase = (typeof JOIN_TOKEN_PHASES)[number];

export const JoinTokenStatusSchema = Type.Object(
  {
    ...baseStatusProperties,
    used: Type.Optional(Type.Boolean()),
    used_by: Type.Optional(Type.String({ maxLength: 1024 })),
    used_at: Type.Optional(TimestampSchema),
    phase: Type.Optional(StringEnum(JOIN_TOKEN_PHASES)),
  },
  { additionalProperties: false },
);
export type JoinTokenStatus = Static<typeof JoinTokenStatusSchema>;
