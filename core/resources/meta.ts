// What every kind shares: the API group, object metadata, status conditions.
import { type Static, Type } from "@sinclair/typebox";
import { StringEnum, StringMap } from "./schema-kit.ts";

export const API_GROUP = "svc.dev";
export const API_VERSION = "svc.dev/v1";

/** DNS-1123 subdomain: lower-case alphanumerics, '-' and '.', alphanumeric at both ends. */
export const DNS_SUBDOMAIN_PATTERN = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$";
export const DNS_SUBDOMAIN_MAX = 253;
/** DNS-1123 label: a DNS-1123 subdomain without dots, at most 63 characters. */
export const DNS_LABEL_PATTERN = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$";
export const DNS_LABEL_MAX = 63;
/** User names: a DNS-1123 subdomain of at most 64 characters, so it also fits key ids and logins. */
export const USER_NAME_MAX = 64;

export const TimestampSchema = Type.String({ format: "date-time" });

/**
 * Object metadata as Kubernetes sends it. The fields we read are typed; others that the apiserver
 * adds (managedFields, ownerReferences, ...) are allowed and ignored, so informer objects validate.
 */
export function metadataSchema(nameMax: number, namePattern: string = DNS_SUBDOMAIN_PATTERN) {
  return Type.Object(
    {
      name: Type.String({ minLength: 1, maxLength: nameMax, pattern: namePattern }),
      namespace: Type.Optional(Type.String({ maxLength: 63 })),
      labels: Type.Optional(StringMap(Type.String())),
      annotations: Type.Optional(StringMap(Type.String())),
      uid: Type.Optional(Type.String()),
      resourceVersion: Type.Optional(Type.String()),
      generation: Type.Optional(Type.Integer({ minimum: 0 })),
      creationTimestamp: Type.Optional(TimestampSchema),
      deletionTimestamp: Type.Optional(TimestampSchema),
      finalizers: Type.Optional(Type.Array(Type.String())),
    },
    { additionalProperties: true },
  );
}

export const ObjectMetaSchema = metadataSchema(DNS_SUBDOMAIN_MAX);
export type ObjectMeta = Static<typeof ObjectMetaSchema>;

export const ConditionSchema = Type.Object(
  {
    type: Type.String({ minLength: 1, maxLength: 316 }),
    status: StringEnum(["True", "False", "Unknown"] as const),
    reason: Type.String({ maxLength: 1024 }),
    message: Type.String({ maxLength: 32768 }),
    lastTransitionTime: TimestampSchema,
    observedGeneration: Type.Optional(Type.Integer({ minimum: 0 })),
  },
  { additionalProperties: false },
);
export type Condition = Static<typeof ConditionSchema>;

/** The status fields every kind has; kinds add their own next to them. */
export const baseStatusProperties = {
  observedGeneration: Type.Optional(Type.Integer({ minimum: 0 })),
  conditions: Type.Optional(
    Type.Array(ConditionSchema, { "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["type"] }),
  ),
};
