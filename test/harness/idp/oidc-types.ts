// What the OpenID provider process (oidc-server.ts) is configured with, shared with oidc.ts.

/** A relying party registered at the provider. */
export interface OidcTestClient {
  client_id: string;
  client_secret: string;
  redirect_uris: string[];
  /** default client_secret_basic */
  token_endpoint_auth_method?: "client_secret_basic" | "client_secret_post";
}

/** A user of the provider's login page, and the claims it releases about them. */
export interface OidcTestUser {
  /** login name on the provider's page, also the subject (`sub`) */
  username: string;
  password: string;
  claims: {
    email?: string;
    email_verified?: boolean;
    name?: string;
    preferred_username?: string;
    groups?: string[];
    logins?: string[];
  };
}

/**
 * How the token endpoint spoils the next ID tokens (until set back to "none"): the genuine token
 * is decoded, changed and signed again by the harness, since the provider itself never issues
 * such tokens.
 */
export type MisbehaveMode =
  | "none"
  | "wrong-audience"
  | "wrong-issuer"
  | "wrong-nonce"
  | "no-nonce"
  /** exp `seconds` in the past (default 120) */
  | "expired"
  /** iat `seconds` in the future (default 120) */
  | "future-iat"
  /** alg "none", no signature */
  | "unsigned"
  /** signed by a key the provider never published (a kid not in its JWKS) */
  | "unknown-key"
  /** the published kid, but signed by another key */
  | "bad-signature";

export interface OidcServerConfig {
  tls: { key: string; cert: string };
  clients: OidcTestClient[];
  users: OidcTestUser[];
  idTokenTtlSeconds?: number;
}
