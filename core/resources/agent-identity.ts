// AgentIdentity: a bot. Roles it acts with, how long its certificates live, when it renews.
import { type Static, Type } from "@sinclair/typebox";
import { DURATION_PATTERN } from "../duration.ts";
import { baseStatusProperties, TimestampSchema } from "./meta.ts";

export const DEFAULT_CERT_TTL = "1h";
export const MAX_CERT_TTL = "24h";
export const DEFAULT_RENEWAL_FRACTION = 0.5;

export const AgentIdentitySpecSchema = Type.Object(
  {
    roles: Type.Array(Type.String({ minLength: 1, maxLength: 253 }), { minItems: 1 }),
    cert_ttl: Type.Optional(
      Type.String({ pattern: DURATION_PATTERN, maxLength: 32, default: DEFAULT_CERT_TTL }),
    ),
    renewal: Type.Optional(
      Type.Object(
        {
          /** Renew once this fraction of the certificate lifetime has passed. */
          fraction: Type.Optional(
            Type.Number({ minimum: 0.1, maximum: 0.9, default: DEFAULT_RENEWAL_FRACTION }),
          ),
        },
        { additionalProperties: false },
      ),
    ),
    allow_workload_svids: Type.Optional(Type.Boolean({ default: false })),
  },
  { additionalProperties: false },
);
export type AgentIdentitySpec = Static<typeof AgentIdentitySpecSchema>;

export const AgentIdentityStatusSchema = Type.Object(
  {
    ...baseStatusProperties,
    /** Credential generation auth last issued (bumps on every renewal). */
    current_generation: Type.Optional(Type.Integer({ minimum: 0 })),
    last_renewed_at: Type.Optional(TimestampSchema),
    cert_expires_at: Type.Optional(TimestampSchema),
  },
  { additionalProperties: false },
);
export type AgentIdentityStatus = Static<typeof AgentIdentityStatusSchema>;
