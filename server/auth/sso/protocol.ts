// What each single-sign-on protocol (OIDC, SAML, GitHub) provides to the shared login flow
// (flow.ts): a login URL for a pending request, and the validation of the identity provider's
// answer into an ExternalIdentity. Everything protocol-independent (pending requests, browser
// binding, mapping to roles, sessions, audit) lives in the flow, so each rule is written once.
import type { Clock } from "../../../core/clock.ts";
import type { Connector } from "../../../core/resources/index.ts";

/** Who the identity provider says the user is. */
export interface ExternalIdentity {
  /** The name the user gets here (a claim, attribute or GitHub login; checked by the flow). */
  username: string;
  /** Provider-side subject (OIDC sub, SAML NameID, GitHub user id), for audit. */
  subject: string;
  /**
   * Claims (OIDC), attributes (SAML) or GitHub facts ("login", "teams" as "org/team", "orgs"),
   * each as a list of strings: the input of claims_to_roles and the `{{external.*}}` traits.
   */
  claims: Record<string, string[]>;
  /** A cap the provider put on the session (SAML SessionNotOnOrAfter), if any. */
  notAfter?: Date;
}

/** The per-request secrets the flow keeps for the protocol while the user is at the provider. */
export interface PendingProtocolState {
  /** Also the OAuth `state` and the SAML RelayState. */
  requestId: string;
  /** OIDC nonce. */
  nonce: string;
  /** PKCE verifier for the provider leg (OIDC, GitHub). */
  codeVerifier: string;
  /** Whatever loginUrl returned in `state` (e.g. the SAML AuthnRequest ID). */
  extra: Record<string, string>;
}

/** What the identity provider sent back through the browser. */
export interface ProviderAnswer {
  /** OIDC and GitHub: the callback's query string. */
  callbackQuery?: string;
  /** SAML HTTP-POST binding: the base64 SAMLResponse form field. */
  samlResponse?: string;
}

export interface SsoProtocol {
  readonly type: "oidc" | "saml" | "github";
  /** The provider's login URL for this pending request, and protocol state to keep with it. */
  loginUrl(
    pending: Omit<PendingProtocolState, "extra">,
  ): Promise<{ url: string; extra?: Record<string, string> }>;
  /** Validates the answer for exactly this pending request; throws a typed error (core/errors.ts) otherwise. */
  validate(answer: ProviderAnswer, pending: PendingProtocolState): Promise<ExternalIdentity>;
}

/** Secret material a connector references (client secret; SAML SP signing key and certificate). */
export interface ConnectorSecret {
  /** The referenced value as stored: an OAuth client secret, or PEM (key, optionally with certificate). */
  value: string;
}

export interface ProtocolDeps {
  clock: Clock;
  /** Extra trust anchors (PEM) for reaching providers over HTTPS (config auth.sso.ca_file). */
  caPem?: string;
  /**
   * One-time use of a provider-issued id until a time (SAML assertion IDs): true the first time,
   * false on a replay. Backed by the shared backend, so it holds across auth replicas.
   */
  claimOnce(kind: string, id: string, until: Date): Promise<boolean>;
}

export type ProtocolFactory = (
  connector: Connector,
  secret: ConnectorSecret | undefined,
  deps: ProtocolDeps,
) => Promise<SsoProtocol>;
