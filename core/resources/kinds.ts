// The kinds: full object schemas, TypeScript types and what the CRD generator needs.
import { type Static, type TSchema, Type } from "@sinclair/typebox";
import { AgentIdentitySpecSchema, AgentIdentityStatusSchema } from "./agent-identity.ts";
import { AppSpecSchema, AppStatusSchema } from "./app.ts";
import { ConnectorSpecSchema, ConnectorStatusSchema } from "./connector.ts";
import { JoinTokenSpecSchema, JoinTokenStatusSchema } from "./join-token.ts";
import { LockSpecSchema, LockStatusSchema } from "./lock.ts";
import {
  API_VERSION,
  DNS_LABEL_MAX,
  DNS_LABEL_PATTERN,
  DNS_SUBDOMAIN_MAX,
  DNS_SUBDOMAIN_PATTERN,
  metadataSchema,
  USER_NAME_MAX,
} from "./meta.ts";
import { RoleSpecSchema, RoleStatusSchema } from "./role.ts";
import { UserSpecSchema, UserStatusSchema } from "./user.ts";

export const RESOURCE_KINDS = [
  "Role",
  "User",
  "Connector",
  "JoinToken",
  "AgentIdentity",
  "Lock",
  "App",
] as const;
export type ResourceKind = (typeof RESOURCE_KINDS)[number];

/**
 * The kubectl category that lists every kind. Not "svc": kubectl expands categories before short
 * names, so a category "svc" would hijack `kubectl get svc` (Services) cluster-wide.
 */
export const SVC_CATEGORY = "svcdev";

function resourceSchema<K extends string, S extends TSchema, T extends TSchema>(
  kind: K,
  spec: S,
  status: T,
  nameMax: number,
  namePattern: string = DNS_SUBDOMAIN_PATTERN,
) {
  return Type.Object(
    {
      apiVersion: Type.Literal(API_VERSION),
      kind: Type.Literal(kind),
      metadata: metadataSchema(nameMax, namePattern),
      spec,
      status: Type.Optional(status),
    },
    { additionalProperties: false },
  );
}

export const RoleSchema = resourceSchema("Role", RoleSpecSchema, RoleStatusSchema, DNS_SUBDOMAIN_MAX);
export const UserSchema = resourceSchema("User", UserSpecSchema, UserStatusSchema, USER_NAME_MAX);
export const ConnectorSchema = resourceSchema(
  "Connector",
  ConnectorSpecSchema,
  ConnectorStatusSchema,
  DNS_SUBDOMAIN_MAX,
);
export const JoinTokenSchema = resourceSchema(
  "JoinToken",
  JoinTokenSpecSchema,
  JoinTokenStatusSchema,
  DNS_SUBDOMAIN_MAX,
);
export const AgentIdentitySchema = resourceSchema(
  "AgentIdentity",
  AgentIdentitySpecSchema,
  AgentIdentityStatusSchema,
  DNS_SUBDOMAIN_MAX,
);

export const LockSchema = resourceSchema("Lock", LockSpecSchema, LockStatusSchema, DNS_SUBDOMAIN_MAX);
// An App name is also the first label of its default host name: a DNS label, not a subdomain.
export const AppSchema = resourceSchema(
  "App",
  AppSpecSchema,
  AppStatusSchema,
  DNS_LABEL_MAX,
  DNS_LABEL_PATTERN,
);

export type Role = Static<typeof RoleSchema>;
export type User = Static<typeof UserSchema>;
export type Connector = Static<typeof ConnectorSchema>;
export type JoinToken = Static<typeof JoinTokenSchema>;
export type AgentIdentity = Static<typeof AgentIdentitySchema>;
export type Lock = Static<typeof LockSchema>;
export type App = Static<typeof AppSchema>;

export interface ResourceTypes {
  Role: Role;
  User: User;
  Connector: Connector;
  JoinToken: JoinToken;
  AgentIdentity: AgentIdentity;
  Lock: Lock;
  App: App;
}
export type ResourceOf<K extends ResourceKind> = ResourceTypes[K];
export type AnyResource = ResourceTypes[ResourceKind];

export interface PrinterColumn {
  name: string;
  type: "string" | "integer" | "number" | "boolean" | "date";
  jsonPath: string;
  description?: string;
  priority?: number;
}

export interface KindInfo {
  kind: ResourceKind;
  plural: string;
  singular: string;
  shortNames: string[];
  categories: string[];
  printerColumns: PrinterColumn[];
  /** Longest metadata.name accepted. */
  nameMaxLength: number;
  /** The pattern metadata.name must match, when not a DNS-1123 subdomain. */
  namePattern?: string;
  /** The whole object (runtime validation); the CRD uses specSchema and statusSchema. */
  schema: TSchema;
  specSchema: TSchema;
  statusSchema: TSchema;
}

const READY: PrinterColumn = {
  name: "Ready",
  type: "string",
  jsonPath: '.status.conditions[?(@.type=="Ready")].status',
};
const AGE: PrinterColumn = { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" };

export const kindInfo: { readonly [K in ResourceKind]: KindInfo & { kind: K } } = {
  Role: {
    kind: "Role",
    plural: "roles",
    singular: "role",
    shortNames: ["svcrole"],
    categories: [SVC_CATEGORY],
    printerColumns: [
      { name: "MFA", type: "boolean", jsonPath: ".spec.options.require_mfa" },
      { name: "Max-TTL", type: "string", jsonPath: ".spec.options.max_session_ttl" },
      READY,
      AGE,
    ],
    nameMaxLength: DNS_SUBDOMAIN_MAX,
    schema: RoleSchema,
    specSchema: RoleSpecSchema,
    statusSchema: RoleStatusSchema,
  },
  User: {
    kind: "User",
    plural: "users",
    singular: "user",
    shortNames: ["svcuser"],
    categories: [SVC_CATEGORY],
    printerColumns: [
      { name: "Roles", type: "string", jsonPath: ".spec.roles" },
      { name: "Disabled", type: "boolean", jsonPath: ".spec.disabled" },
      READY,
      AGE,
    ],
    nameMaxLength: USER_NAME_MAX,
    schema: UserSchema,
    specSchema: UserSpecSchema,
    statusSchema: UserStatusSchema,
  },
  Connector: {
    kind: "Connector",
    plural: "connectors",
    singular: "connector",
    shortNames: ["svcconn"],
    categories: [SVC_CATEGORY],
    printerColumns: [
      { name: "Type", type: "string", jsonPath: ".spec.type" },
      { name: "Display", type: "string", jsonPath: ".spec.display_name" },
      READY,
      AGE,
    ],
    nameMaxLength: DNS_SUBDOMAIN_MAX,
    schema: ConnectorSchema,
    specSchema: ConnectorSpecSchema,
    statusSchema: ConnectorStatusSchema,
  },
  JoinToken: {
    kind: "JoinToken",
    plural: "jointokens",
    singular: "jointoken",
    shortNames: ["jt", "svctoken"],
    categories: [SVC_CATEGORY],
    printerColumns: [
      { name: "Roles", type: "string", jsonPath: ".spec.roles" },
      { name: "Method", type: "string", jsonPath: ".spec.join_method" },
      { name: "Expires", type: "string", jsonPath: ".spec.expires" },
      { name: "Phase", type: "string", jsonPath: ".status.phase" },
      AGE,
    ],
    nameMaxLength: DNS_SUBDOMAIN_MAX,
    schema: JoinTokenSchema,
    specSchema: JoinTokenSpecSchema,
    statusSchema: JoinTokenStatusSchema,
  },
  AgentIdentity: {
    kind: "AgentIdentity",
    plural: "agentidentities",
    singular: "agentidentity",
    shortNames: ["aid", "svcbot"],
    categories: [SVC_CATEGORY],
    printerColumns: [
      { name: "Roles", type: "string", jsonPath: ".spec.roles" },
      { name: "Cert-TTL", type: "string", jsonPath: ".spec.cert_ttl" },
      { name: "Generation", type: "integer", jsonPath: ".status.current_generation" },
      READY,
      AGE,
    ],
    nameMaxLength: DNS_SUBDOMAIN_MAX,
    schema: AgentIdentitySchema,
    specSchema: AgentIdentitySpecSchema,
    statusSchema: AgentIdentityStatusSchema,
  },
  Lock: {
    kind: "Lock",
    plural: "locks",
    singular: "lock",
    shortNames: ["svclock"],
    categories: [SVC_CATEGORY],
    printerColumns: [
      { name: "User", type: "string", jsonPath: ".spec.target.user" },
      { name: "Role", type: "string", jsonPath: ".spec.target.role" },
      { name: "Bot", type: "string", jsonPath: ".spec.target.bot" },
      { name: "Node", type: "string", jsonPath: ".spec.target.node" },
      { name: "Expires", type: "string", jsonPath: ".spec.expires" },
      { name: "Message", type: "string", jsonPath: ".spec.message", priority: 1 },
      AGE,
    ],
    nameMaxLength: DNS_SUBDOMAIN_MAX,
    schema: LockSchema,
    specSchema: LockSpecSchema,
    statusSchema: LockStatusSchema,
  },
  App: {
    kind: "App",
    plural: "apps",
    singular: "app",
    shortNames: ["svcapp"],
    categories: [SVC_CATEGORY],
    printerColumns: [
      { name: "URI", type: "string", jsonPath: ".spec.uri" },
      { name: "Public-Addr", type: "string", jsonPath: ".spec.public_addr" },
      READY,
      AGE,
    ],
    nameMaxLength: DNS_LABEL_MAX,
    namePattern: DNS_LABEL_PATTERN,
    schema: AppSchema,
    specSchema: AppSpecSchema,
    statusSchema: AppStatusSchema,
  },
};

export function isResourceKind(value: unknown): value is ResourceKind {
  return typeof value === "string" && (RESOURCE_KINDS as readonly string[]).includes(value);
}
