// SAML 2.0 service provider for the shared SSO flow: SP-initiated login, the AuthnRequest over the
// HTTP-Redirect binding (RelayState = the pending request id), the Response over HTTP-POST.
// @node-saml/node-saml verifies the XML signatures (exactly one assertion, signed by the
// provider, the verified bytes only), audience, timestamps and InResponseTo; this file then checks
// what the library does not (recipient, destination, bearer confirmation, our clock, replay)
// on the signed assertion alone, never on the unsigned envelope around it.
import { createPrivateKey, randomBytes } from "node:crypto";
import { type CacheProvider, SAML, type SamlConfig, ValidateInResponseTo } from "@node-saml/node-saml";
import {
  BadParameterError,
  NotAuthenticatedError,
  PreconditionFailedError,
  SvcError,
} from "../../../core/errors.ts";
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
import { fetchIdpMetadata, type IdpMetadata, parseXmlStrict } from "./saml-metadata.ts";

const ASSERTION_NS = "urn:oasis:names:tc:SAML:2.0:assertion";
const PROTOCOL_NS = "urn:oasis:names:tc:SAML:2.0:protocol";
const BEARER = "urn:oasis:names:tc:SAML:2.0:cm:bearer";

/** Clock skew tolerated between us and the identity provider, both ways. */
export const SAML_CLOCK_SKEW_MS = 60_000;
/** How long an AuthnRequest may be answered (the pending request lives as long). */
const REQUEST_TTL_MS = 10 * 60_000;
/** A base64 SAMLResponse larger than this is refused before decoding. */
const MAX_RESPONSE_BASE64 = 512 * 1024;

/** The settings this protocol reads; username_claim and idp_certificate are optional. */
type SamlSettings = Connector["spec"]["settings"] & { username_claim?: string; idp_certificate?: string };

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

/** Where the IdP's certificates and SSO URL come from: settings, else the metadata URL. */
async function resolveIdp(
  settings: SamlSettings,
  deps: ProtocolDeps,
): Promise<{ certs: string[]; ssoUrl: string; entityId?: string }> {
  let metadata: IdpMetadata | undefined;
  if (settings.idp_metadata_url) {
    metadata = await fetchIdpMetadata(settings.idp_metadata_url, deps.caPem, deps.clock.now().getTime());
  }
  const certs = metadata
    ? metadata.signingCerts
    : (settings.idp_certificate?.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ??
      []);
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

/** Fixed, assertion-free reasons for the library's errors (its messages quote the assertion). */
function refusal(err: unknown): SvcError {
  if (err instanceof SvcError) return err;
  const msg = err instanceof Error ? err.message : "";
  const status = /^SAML provider returned ([A-Za-z]{1,64}) error/.exec(msg);
  if (status) return new NotAuthenticatedError(`the identity provider refused the login (${status[1]})`);
  if (/InResponseTo/i.test(msg)) {
    return new NotAuthenticatedError("SAML response refused: it does not answer this login request");
  }
  if (/audience/i.test(msg)) return new NotAuthenticatedError("SAML response refused: wrong audience");
  if (/expired|not yet valid|subject confirmation/i.test(msg)) {
    return new NotAuthenticatedError("SAML response refused: outside its validity period");
  }
  if (/signature|signed|multiple assertions/i.test(msg)) {
    return new NotAuthenticatedError(
      "SAML response refused: the assertion is not signed by the identity provider",
    );
  }
  return new NotAuthenticatedError("SAML response refused: invalid response");
}

const deny = (why: string) => new NotAuthenticatedError(`SAML response refused: ${why}`);

function timeAttr(el: Element, name: string): number | undefined {
  const v = el.getAttribute(name);
  if (!v) return undefined;
  const t = Date.parse(v);
  if (Number.isNaN(t)) throw deny(`${name} is not a time`);
  return t;
}

function child(el: Element, ns: string, name: string): Element[] {
  return Array.from(el.childNodes).filter(
    (n): n is Element =>
      n.nodeType === 1 && (n as Element).namespaceURI === ns && (n as Element).localName === name,
  );
}

interface CheckedAssertion {
  id: string;
  nameId: string;
  claims: Record<string, string[]>;
  /** When the assertion stops being acceptable (for the replay record). */
  usableUntil: number;
  sessionNotOnOrAfter?: number;
}

/**
 * Checks the signed assertion (the bytes the signature covers) against this request: issuer,
 * validity window on our clock, a bearer confirmation for our ACS URL answering our AuthnRequest.
 */
function checkSignedAssertion(
  xml: string,
  want: { requestId: string; acsUrl: string; audience: string; idpEntityId?: string; now: number },
): CheckedAssertion {
  const assertion = parseXmlStrict(xml).documentElement;
  if (assertion.namespaceURI !== ASSERTION_NS || assertion.localName !== "Assertion") {
    throw deny("the signed element is not an assertion");
  }
  const id = assertion.getAttribute("ID") ?? "";
  if (!id) throw deny("the assertion has no ID");
  const issuer = child(assertion, ASSERTION_NS, "Issuer")[0]?.textContent?.trim() ?? "";
  if (want.idpEntityId && issuer !== want.idpEntityId) throw deny("issued by another identity provider");

  const conditions = child(assertion, ASSERTION_NS, "Conditions");
  if (conditions.length !== 1) throw deny("the assertion needs exactly one Conditions");
  const cond = conditions[0]!;
  const notBefore = timeAttr(cond, "NotBefore");
  const notOnOrAfter = timeAttr(cond, "NotOnOrAfter");
  if (notBefore !== undefined && want.now + SAML_CLOCK_SKEW_MS < notBefore) {
    throw deny("outside its validity period");
  }
  if (notOnOrAfter !== undefined && want.now - SAML_CLOCK_SKEW_MS >= notOnOrAfter) {
    throw deny("outside its validity period");
  }
  const audiences = child(cond, ASSERTION_NS, "AudienceRestriction");
  if (
    audiences.length === 0 ||
    !audiences.every((r) =>
      child(r, ASSERTION_NS, "Audience").some((a) => a.textContent?.trim() === want.audience),
    )
  ) {
    throw deny("wrong audience");
  }

  const subject = child(assertion, ASSERTION_NS, "Subject")[0];
  if (!subject) throw deny("the assertion has no Subject");
  const nameId = child(subject, ASSERTION_NS, "NameID")[0]?.textContent?.trim() ?? "";
  // Bearer confirmation (SAML profiles 4.1.4.2): for our ACS URL, answering our request, in time.
  const datas = child(subject, ASSERTION_NS, "SubjectConfirmation")
    .filter((sc) => sc.getAttribute("Method") === BEARER)
    .flatMap((sc) => child(sc, ASSERTION_NS, "SubjectConfirmationData"));
  if (datas.length === 0) throw deny("the assertion has no bearer subject confirmation");
  if (!datas.some((d) => d.getAttribute("Recipient") === want.acsUrl)) throw deny("wrong recipient");
  if (!datas.some((d) => d.getAttribute("InResponseTo") === want.requestId)) {
    throw deny("it does not answer this login request");
  }
  const confirmed = datas.find((d) => {
    const until = timeAttr(d, "NotOnOrAfter");
    const from = timeAttr(d, "NotBefore");
    return (
      d.getAttribute("Recipient") === want.acsUrl &&
      d.getAttribute("InResponseTo") === want.requestId &&
      until !== undefined &&
      want.now - SAML_CLOCK_SKEW_MS < until &&
      (from === undefined || want.now + SAML_CLOCK_SKEW_MS >= from)
    );
  });
  if (!confirmed) throw deny("outside its validity period");
  const confirmedUntil = timeAttr(confirmed, "NotOnOrAfter")!;

  const claims: Record<string, string[]> = Object.create(null);
  for (const statement of child(assertion, ASSERTION_NS, "AttributeStatement")) {
    for (const attr of child(statement, ASSERTION_NS, "Attribute")) {
      const name = attr.getAttribute("Name");
      if (!name) continue;
      const values = child(attr, ASSERTION_NS, "AttributeValue").map((v) => v.textContent ?? "");
      claims[name] = [...(claims[name] ?? []), ...values];
    }
  }
  const authn = child(assertion, ASSERTION_NS, "AuthnStatement")[0];
  const sessionNotOnOrAfter = authn ? timeAttr(authn, "SessionNotOnOrAfter") : undefined;
  const usableUntil = Math.max(notOnOrAfter ?? confirmedUntil, confirmedUntil) + SAML_CLOCK_SKEW_MS;
  return sessionNotOnOrAfter === undefined
    ? { id, nameId, claims, usableUntil }
    : { id, nameId, claims, usableUntil, sessionNotOnOrAfter };
}

/** Decodes the POSTed SAMLResponse and checks the envelope's shape and Destination. */
function decodeResponse(answer: ProviderAnswer, acsUrl: string): string {
  const raw = answer.samlResponse;
  if (!raw) throw new BadParameterError("SAMLResponse is missing");
  if (raw.length > MAX_RESPONSE_BASE64) throw new BadParameterError("SAMLResponse is too large");
  // Providers may wrap the base64 in lines; one linear pass removes them before the strict check.
  const b64 = raw.replace(/[\r\n\t ]/g, "");
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(b64)) throw new BadParameterError("SAMLResponse is not base64");
  const xml = Buffer.from(b64, "base64").toString("utf8");
  let root: Element;
  try {
    root = parseXmlStrict(xml).documentElement;
  } catch {
    throw new BadParameterError("SAMLResponse is not well-formed XML");
  }
  if (root.namespaceURI !== PROTOCOL_NS || root.localName !== "Response") {
    throw new BadParameterError("SAMLResponse is not a SAML Response");
  }
  // Destination is optional for an unsigned response; when present it must be us.
  const destination = root.getAttribute("Destination");
  if (destination && destination !== acsUrl) throw deny("wrong destination");
  return b64;
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
