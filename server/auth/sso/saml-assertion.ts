// The rules a SAML Response must pass beyond its XML signatures, checked on the signed assertion
// alone (the bytes the signature covers), never on the unsigned envelope around it; and refusals
// with fixed reasons, since the library's own messages quote the assertion.
import { BadParameterError, NotAuthenticatedError, SvcError } from "../../../core/errors.ts";
import type { ProviderAnswer } from "./protocol.ts";
import { parseXmlStrict } from "./saml-metadata.ts";

const ASSERTION_NS = "urn:oasis:names:tc:SAML:2.0:assertion";
const PROTOCOL_NS = "urn:oasis:names:tc:SAML:2.0:protocol";
const BEARER = "urn:oasis:names:tc:SAML:2.0:cm:bearer";

/** Clock skew tolerated between us and the identity provider, both ways. */
export const SAML_CLOCK_SKEW_MS = 60_000;
/** A base64 SAMLResponse larger than this is refused before decoding. */
const MAX_RESPONSE_BASE64 = 512 * 1024;

/** Fixed, assertion-free reasons for the library's errors (its messages quote the assertion). */
export function refusal(err: unknown): SvcError {
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

export const deny = (why: string) => new NotAuthenticatedError(`SAML response refused: ${why}`);

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

export interface CheckedAssertion {
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
export function checkSignedAssertion(
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
export function decodeResponse(answer: ProviderAnswer, acsUrl: string): string {
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
