// Public surface of core/resources: one schema per kind -> TS types, validation, CRD inputs.
export {
  type AgentIdentitySpec,
  type AgentIdentityStatus,
  DEFAULT_CERT_TTL,
  DEFAULT_RENEWAL_FRACTION,
  MAX_CERT_TTL,
} from "./agent-identity.ts";
export {
  type AppHeader,
  type AppSpec,
  type AppStatus,
  appPublicHost,
  isAppHostOf,
  RESERVED_APP_HEADERS,
} from "./app.ts";
export { appAtHost, appHostConflicts } from "./app-hosts.ts";
export {
  type ClaimMapping,
  CONNECTOR_TYPES,
  type ConnectorSettings,
  type ConnectorSpec,
  type ConnectorStatus,
  type ConnectorType,
  type SecretRef,
} from "./connector.ts";
export {
  type IamAllowRule,
  JOIN_METHODS,
  JOIN_ROLES,
  JOIN_TOKEN_PHASES,
  type JoinMethod,
  type JoinRole,
  type JoinTokenPhase,
  type JoinTokenSpec,
  type JoinTokenStatus,
} from "./join-token.ts";
export {
  type AgentIdentity,
  type AnyResource,
  type App,
  type Connector,
  isResourceKind,
  type JoinToken,
  type KindInfo,
  kindInfo,
  type Lock,
  type PrinterColumn,
  RESOURCE_KINDS,
  type ResourceKind,
  type ResourceOf,
  type ResourceTypes,
  type Role,
  SVC_CATEGORY,
  type User,
} from "./kinds.ts";
export {
  LOCK_TARGET_FIELDS,
  type LockSpec,
  type LockStatus,
  type LockTargetField,
  type LockTargetSpec,
  lockTargetField,
} from "./lock.ts";
export {
  API_GROUP,
  API_VERSION,
  type Condition,
  DNS_LABEL_MAX,
  DNS_LABEL_PATTERN,
  DNS_SUBDOMAIN_MAX,
  DNS_SUBDOMAIN_PATTERN,
  type ObjectMeta,
  USER_NAME_MAX,
} from "./meta.ts";
export { openApiV3Schema } from "./openapi.ts";
export { presets } from "./presets.ts";
export { type PublicConnectorView, publicConnectorView } from "./public-view.ts";
export {
  DEFAULT_MAX_SESSION_TTL,
  type RoleConditions,
  type RoleOptions,
  type RoleSpec,
  type RoleStatus,
  RULE_RESOURCES,
  RULE_VERBS,
  type Rule,
  type RuleResource,
  type RuleVerb,
} from "./role.ts";
export type { CelRule } from "./schema-kit.ts";
export { type SemanticContext, semanticProblems } from "./semantic.ts";
export type { UserSpec, UserStatus } from "./user.ts";
export { fieldPath, parseResource, type ValidationResult, validateResource } from "./validate.ts";
