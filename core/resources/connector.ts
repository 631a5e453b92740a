// Connector: an SSO provider (GitHub, OIDC, SAML). The client secret is only ever referenced
// (a Kubernetes Secret key, or a file in embedded mode), never inlined, never in a public view.
import { type Static, Type } from "@sinclair/typebox";
import { DURATION_PATTERN } from "../duration.ts";
import { baseStatusProperties } from "./meta.ts";
import { cel, StringEnum } from "./schema-kit.ts";

export const CONNECTOR_TYPES = ["github", "oidc", "saml"] as const;
export type ConnectorType = (typeof CONNECTOR_TYPES)[number];

const url = () => Type.String({ minLength: 1, maxLength: 2048 });

export const ConnectorSettingsSchema = Type.Object(
  {
    client_id: Type.Optional(Type.String({ minLength: 1, maxLength: 512 })),
    issuer_url: Type.Optional(url()),
    redirect_url: Type.Optional(url()),
    scopes: Type.Optional(Type.Array(Type.String({ maxLength: 256 }))),
    /** GitHub organization whose members may log in. */
    org: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
    /** SAML: the IdP's single-sign-on URL, or its metadata URL. */
    sso_url: Type.Optional(url()),
    idp_metadata_url: Type.Optional(url()),
    /** SAML: our service-provider entity id and assertion consumer service URL. */
    entity_id: Type.Optional(url()),
    acs_url: Type.Optional(url()),
    /**
     * The OIDC claim or SAML attribute that names the user here (OIDC default "email", SAML the
     * NameID; GitHub always uses the login). A missing claim refuses the login: no fallback.
     */
    username_claim: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
    /** Cap on the sessions of this connector's users (5m..30d; semantic check), below auth.session_ttl. */
    max_session_ttl: Type.Optional(Type.String({ pattern: DURATION_PATTERN, maxLength: 64 })),
    /** GitHub (Enterprise): web and API base URLs (defaults https://github.com, https://api.github.com). */
    endpoint_url: Type.Optional(url()),
    api_endpoint_url: Type.Optional(url()),
    /** SAML: PEM of the provider's signing certificate (public), when there is no idp_metadata_url. */
    idp_certificate: Type.Optional(Type.String({ minLength: 1, maxLength: 65536 })),
  },
  { additionalProperties: false },
);
export type ConnectorSettings = Static<typeof ConnectorSettingsSchema>;

/** Exactly one of {secret_name, key} (a Kubernetes Secret) or {file} (embedded mode). */
export const SecretRefSchema = Type.Object(
  {
    secret_name: Type.Optional(Type.String({ minLength: 1, maxLength: 253 })),
    key: Type.Optional(Type.String({ minLength: 1, maxLength: 253 })),
    file: Type.Optional(Type.String({ minLength: 1, maxLength: 4096 })),
  },
  {
    additionalProperties: false,
    ...cel({
      rule: "has(self.file) ? !has(self.secret_name) && !has(self.key) : has(self.secret_name) && has(self.key)",
      message: "client_secret_ref needs either secret_name and key, or file",
    }),
  },
);
export type SecretRef = Static<typeof SecretRefSchema>;

/**
 * Maps an identity-provider claim (GitHub: "login", "orgs", "teams" as "org/team", "email"; OIDC: a
 * claim; SAML: an attribute) to roles: `value` equals one of the claim's strings, or is a glob
 * where "*" matches any run of characters.
 */
export const ClaimMappingSchema = Type.Object(
  {
    claim: Type.String({ minLength: 1, maxLength: 256 }),
    value: Type.String({ minLength: 1, maxLength: 1024 }),
    roles: Type.Array(Type.String({ minLength: 1, maxLength: 253 }), { minItems: 1 }),
  },
  { additionalProperties: false },
);
export type ClaimMapping = Static<typeof ClaimMappingSchema>;

export const ConnectorSpecSchema = Type.Object(
  {
    type: StringEnum(CONNECTOR_TYPES),
    display_name: Type.String({ minLength: 1, maxLength: 256 }),
    settings: ConnectorSettingsSchema,
    client_secret_ref: Type.Optional(SecretRefSchema),
    claims_to_roles: Type.Optional(Type.Array(ClaimMappingSchema)),
  },
  {
    additionalProperties: false,
    ...cel(
      {
        rule: "self.type == 'saml' || (has(self.settings.client_id) && has(self.settings.redirect_url))",
        message: "github and oidc connectors need settings.client_id and settings.redirect_url",
      },
      {
        rule: "self.type != 'oidc' || has(self.settings.issuer_url)",
        message: "oidc connectors need settings.issuer_url",
      },
      {
        rule: "self.type != 'saml' || (has(self.settings.entity_id) && (has(self.settings.sso_url) || has(self.settings.idp_metadata_url)))",
        message: "saml connectors need settings.entity_id and settings.sso_url or settings.idp_metadata_url",
      },
    ),
  },
);
export type ConnectorSpec = Static<typeof ConnectorSpecSchema>;

export const ConnectorStatusSchema = Type.Object(
  { ...baseStatusProperties },
  { additionalProperties: false },
);
export type ConnectorStatus = Static<typeof ConnectorStatusSchema>;
