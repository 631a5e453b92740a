// SAML 2.0 service provider for the shared SSO flow: SP-initiated login, the AuthnRequest over the
// HTTP-Redirect binding (RelayState = the pending request id), the Response over HTTP-POST.
// @node-saml/node-saml verifies the XML signatures (exactly one assertion, signed by the
// provider, the verified bytes only), audience, timestamps and InResponseTo; this file then checks
// what the library does not (recipient, destination, bearer confirmation, our clock, replay)
// on the signed assertion alone, never on the unsigned envelope around it.
import { createPrivateKey, randomBytes, X509Certificate } from "node:crypto";
import { type CacheProvider, SAML, type SamlConfig, ValidateInResponseTo } from "@node-saml/node-saml";
import { BadParameterError, PreconditionFailedError } from "../../../core/errors.ts";
import type { Connector } from "../../../core/resources/index.ts";
import type {
  ConnectorSecret,
  ExternalIdentity,
  PendingProtocolState,
  ProtocolDeps,
  ProtocolFactory,
  ProviderAnswer,
  SsoProtocol,
} from "./protocol.ts";
import { checkSignedAssertion, decodeResponse, deny, refusal, SAML_CLOCK_SKEW_MS } from "./saml-assertion.ts";
import { certBodyToPem, fetchIdpMetadata, type IdpMetadata } from "./saml-metadata.ts";

export { SAML_CLOCK_SKEW_MS };

/** How long an AuthnRequest may be answered (the pending request lives as long). */
const REQUEST_TTL_MS = 10 * 60_000;

type SamlSettings = Connector["spec"]["settings"];

interface SigningMaterial {
  privateKey: string;
  cert: string;
}

/** The SP's AuthnRequest signing key and certificate from the connector secret, if any. */
function signingMaterial(secret: ConnectorSecret | undefined): SigningMaterial | undefined {
  if (!secret?.value.trim()) return undefined;
  const key = /-----BEGIN ((?:RSA |EC |ENCRYPTED )?PRIVATE KEY)-----[\s\S]+?-----END \1-----/.exec(
    secret.value,
  )?.[0];
  const cert = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/.exec(secret.value)?.[0];
  if (!key || !cert) {
    throw new PreconditionFailedError(
      "the SAML connector secret must hold a PEM private key and its PEM certificate",
    );
  }
  try {
    createPrivateKey(key);
  } catch {
    throw new PreconditionFailedError("the SAML connector secret's private key cannot be read");
  }
  return { privateKey: key, cert: `${cert}\n` };
}

function requiredUrl(settings: SamlSettings, field: "entity_id" | "acs_url"): string {
  const v = settings[field];
  if (!v) throw new PreconditionFailedError(`SAML connectors need settings.${field}`);
  return v;
}

/** Options shared by every SAML instance of a connector. */
function baseOptions(connector: Connector, signing: SigningMaterial | undefined) {
  const s = connector.spec.settings as SamlSettings;
  const entityId = requiredUrl(s, "entity_id");
  return {
    issuer: entityId,
    audience: entityId,
    callbackUrl: requiredUrl(s, "acs_url"),
    // The identity provider decides the NameID format; admins pick it there, or name the user
    // by an attribute (settings.username_claim).
    identifierFormat: null,
    // Leave the authentication method to the provider (it may require MFA of its own).
    disableRequestedAuthnContext: true,
    wantAssertionsSigned: true,
    // A signed response around an unsigned assertion is not enough (wantAssertionsSigned), and a
    // signed assertion in an unsigned response is the common case (SimpleSAMLphp, Okta, Entra).
    wantAuthnResponseSigned: false,
    acceptedClockSkewMs: SAML_CLOCK_SKEW_MS,
    ...(signing ? { privateKey: signing.privateKey, publicCert: signing.cert } : {}),
    signatureAlgorithm: "sha256" as const,
    digestAlgorithm: "sha256",
  } satisfies Partial<SamlConfig>;
}

/** SP metadata XML to give the identity provider (entity id, ACS URL, signing certificate). */
export function samlServiceProviderMetadata(connector: Connector, secret?: ConnectorSecret): string {
  if (connector.spec.type !== "saml") throw new BadParameterError("not a SAML connector");
  const signing = signingMaterial(secret);
  const saml = new SAML({ ...baseOptions(connector, signing), idpCert: "unused-for-metadata" });
  return saml.generateServiceProviderMetadata(null, signing?.cert ?? null);
}

/**
 * The certificates of settings.idp_certificate: PEM blocks (several during a rollover), or the
 * bare base64 some providers show. Each must parse, so a pasting mistake fails as a connector
 * problem rather than as "not signed" at every login.
 */
function configuredCerts(value: string | undefined): string[] {
  if (!value?.trim()) return [];
  const blocks = value.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  const bare = value.replace(/\s+/g, "");
  const pems = blocks.length > 0 ? blocks : /^[A-Za-z0-9+/]+={0,2}$/.test(bare) ? [certBodyToPem(bare)] : [];
  for (const pem of pems) {
    try {
      new X509Certificate(pem);
    } catch {
      throw new PreconditionFailedError("settings.idp_certificate holds something that is not a certificate");
    }
  }
  if (pems.length === 0) {
    throw new PreconditionFailedError("settings.idp_certificate holds no PEM certificate");
  }
  return pems;
}

/** Where the IdP's certificates and SSO URL come from: settings, else the metadata URL. */
async function resolveIdp(
  settings: SamlSettings,
  deps: ProtocolDeps,
): Promise<{ certs: string[]; ssoUrl: string; entityId?: string }> {
  let metadata: IdpMetadata | undefined;
  if (settings.idp_metadata_url) {
    metadata = await fetchIdpMetadata(settings.idp_metadata_url, deps.caPem, deps.clock.now().getTime());
  }
  const certs = metadata ? metadata.signingCerts : configuredCerts(settings.idp_certificate);
  if (certs.length === 0) {
    throw new PreconditionFailedError(
      "SAML connectors need settings.idp_certificate (PEM) or settings.idp_metadata_url",
    );
  }
  const ssoUrl = settings.sso_url ?? metadata?.ssoRedirectUrl;
  if (!ssoUrl) {
    throw new PreconditionFailedError(
      "SAML connectors need settings.sso_url, or metadata offering the HTTP-Redirect binding",
    );
  }
  return metadata ? { certs, ssoUrl, entityId: metadata.entityId } : { certs, ssoUrl };
}

type ResolvedIdp = { certs: string[]; ssoUrl: string; entityId?: string };

class SamlProtocol implements SsoProtocol {
  readonly type = "saml" as const;
  readonly #connector: Connector;
  readonly #signing: SigningMaterial | undefined;
  readonly #deps: ProtocolDeps;

  constructor(connector: Connector, signing: SigningMaterial | undefined, deps: ProtocolDeps) {
    this.#connector = connector;
    this.#signing = signing;
    this.#deps = deps;
  }

  /**
   * The provider's certificates and URL, resolved on every use: the flow keeps this object as long
   * as the connector is unchanged, and metadata (cached a few minutes) is how keys rotate.
   */
  #idp(): Promise<ResolvedIdp> {
    return resolveIdp(this.#connector.spec.settings as SamlSettings, this.#deps);
  }

  #saml(idp: ResolvedIdp, extra: Partial<SamlConfig>): SAML {
    return new SAML({
      ...baseOptions(this.#connector, this.#signing),
      idpCert: idp.certs,
      entryPoint: idp.ssoUrl,
      ...extra,
    });
  }

  async loginUrl(pending: Omit<PendingProtocolState, "extra">) {
    // An ID must start with a letter or underscore (xsd:ID); 20 random bytes as hex.
    const id = `_${randomBytes(20).toString("hex")}`;
    const issued = this.#deps.clock.now().toISOString();
    const saml = this.#saml(await this.#idp(), {
      generateUniqueId: () => id,
      validateInResponseTo: ValidateInResponseTo.never,
    });
    const url = await saml.getAuthorizeUrlAsync(pending.requestId, undefined, {});
    return { url, extra: { authnRequestId: id, authnRequestIssued: issued } };
  }

  async validate(answer: ProviderAnswer, pending: PendingProtocolState): Promise<ExternalIdentity> {
    const settings = this.#connector.spec.settings as SamlSettings;
    const acsUrl = requiredUrl(settings, "acs_url");
    const requestId = pending.extra["authnRequestId"];
    const issued = pending.extra["authnRequestIssued"] ?? this.#deps.clock.now().toISOString();
    if (!requestId) throw new BadParameterError("the pending request has no SAML AuthnRequest ID");
    const samlResponse = decodeResponse(answer, acsUrl);
    const idp = await this.#idp();

    // The library asks its cache whether InResponseTo names a request we sent; the only one
    // this login may answer is the pending request's.
    const onlyThisRequest: CacheProvider = {
      saveAsync: async () => null,
      getAsync: async (key) => (key === requestId ? issued : null),
      removeAsync: async () => null,
    };
    let assertionXml: string;
    try {
      const saml = this.#saml(idp, {
        validateInResponseTo: ValidateInResponseTo.always,
        requestIdExpirationPeriodMs: REQUEST_TTL_MS,
        cacheProvider: onlyThisRequest,
      });
      const { profile } = await saml.validatePostResponseAsync({ SAMLResponse: samlResponse });
      const xml = profile?.getAssertionXml?.();
      if (!xml) throw deny("no assertion");
      assertionXml = xml;
    } catch (err) {
      throw refusal(err);
    }

    const checked = checkSignedAssertion(assertionXml, {
      requestId,
      acsUrl,
      audience: requiredUrl(settings, "entity_id"),
      ...(idp.entityId ? { idpEntityId: idp.entityId } : {}),
      now: this.#deps.clock.now().getTime(),
    });

    let username = checked.nameId;
    if (settings.username_claim) {
      const values = checked.claims[settings.username_claim] ?? [];
      if (values.length !== 1 || !values[0]) {
        throw deny(`attribute ${settings.username_claim} must have exactly one value`);
      }
      username = values[0];
    }
    if (!username) throw deny("the assertion names no user (no NameID)");
    if (!checked.nameId) throw deny("the assertion has no NameID");

    if (!(await this.#deps.claimOnce("saml-assertion", checked.id, new Date(checked.usableUntil)))) {
      throw deny("the assertion was already used");
    }
    const identity: ExternalIdentity = { username, subject: checked.nameId, claims: { ...checked.claims } };
    if (checked.sessionNotOnOrAfter !== undefined) identity.notAfter = new Date(checked.sessionNotOnOrAfter);
    return identity;
  }
}

/** The SAML protocol for a connector (type "saml"). */
export const samlProtocol: ProtocolFactory = async (connector, secret, deps) => {
  if (connector.spec.type !== "saml") throw new BadParameterError("not a SAML connector");
  const settings = connector.spec.settings as SamlSettings;
  requiredUrl(settings, "entity_id");
  requiredUrl(settings, "acs_url");
  const signing = signingMaterial(secret);
  // Resolved once here so a connector that cannot work fails at once (FAILED_PRECONDITION).
  await resolveIdp(settings, deps);
  return new SamlProtocol(connector, signing, deps);
};
