// Edits a real SAMLResponse the way an attacker would: change signed content, strip or replace
// signatures, wrap a forged assertion around or next to the signed one, and re-sign with a key
// (the provider's own, to prove a check other than the signature refuses the edit, or another).
import { DOMParser, XMLSerializer } from "@xmldom/xmldom";
import { SignedXml } from "xml-crypto";

export const SAMLP = "urn:oasis:names:tc:SAML:2.0:protocol";
export const SAML = "urn:oasis:names:tc:SAML:2.0:assertion";
export const DSIG = "http://www.w3.org/2000/09/xmldsig#";

export function decodeResponse(b64: string): Document {
  return new DOMParser().parseFromString(Buffer.from(b64, "base64").toString("utf8"), "text/xml");
}

export function encodeResponse(doc: Document | string): string {
  const xml = typeof doc === "string" ? doc : new XMLSerializer().serializeToString(doc);
  return Buffer.from(xml, "utf8").toString("base64");
}

export function first(root: Document | Element, ns: string, name: string): Element {
  const el = root.getElementsByTagNameNS(ns, name)[0];
  if (!el) throw new Error(`no ${name}`);
  return el;
}

/** The Response's direct Assertion child. */
export function assertionOf(doc: Document): Element {
  return first(doc, SAML, "Assertion");
}

/** Removes the element's own (enveloped) signature. */
export function stripSignature(el: Element): void {
  for (const sig of Array.from(el.childNodes)) {
    if (
      sig.nodeType === 1 &&
      (sig as Element).namespaceURI === DSIG &&
      (sig as Element).localName === "Signature"
    ) {
      el.removeChild(sig);
    }
  }
}

/**
 * Signs the element with `ID` = id in the serialized document (enveloped, exclusive c14n,
 * RSA-SHA256), placing the signature after its Issuer as SAML requires.
 */
export function signElement(
  xml: string,
  id: string,
  keyPem: string,
  certPem: string,
  o: { hmac?: boolean } = {},
): string {
  const sig = new SignedXml({
    privateKey: keyPem,
    publicCert: certPem,
    signatureAlgorithm: o.hmac
      ? "http://www.w3.org/2000/09/xmldsig#hmac-sha1"
      : "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256",
    canonicalizationAlgorithm: "http://www.w3.org/2001/10/xml-exc-c14n#",
  });
  // HMAC keyed with a public certificate: the key-confusion attack on verifiers that accept it.
  if (o.hmac) sig.enableHMAC();
  sig.addReference({
    xpath: `//*[@ID='${id}']`,
    transforms: [
      "http://www.w3.org/2000/09/xmldsig#enveloped-signature",
      "http://www.w3.org/2001/10/xml-exc-c14n#",
    ],
    digestAlgorithm: "http://www.w3.org/2001/04/xmlenc#sha256",
  });
  sig.computeSignature(xml, {
    location: { reference: `//*[@ID='${id}']/*[local-name(.)='Issuer']`, action: "after" },
  });
  return sig.getSignedXml();
}

/**
 * Applies `edit` to the response's assertion, then re-signs the assertion with the given key:
 * the result is a correctly signed assertion with edited content.
 */
export function editAndResign(
  b64: string,
  edit: (assertion: Element, doc: Document) => void,
  keyPem: string,
  certPem: string,
  o: { hmac?: boolean } = {},
): string {
  const doc = decodeResponse(b64);
  const assertion = assertionOf(doc);
  stripSignature(assertion);
  edit(assertion, doc);
  const id = assertion.getAttribute("ID")!;
  return encodeResponse(signElement(new XMLSerializer().serializeToString(doc), id, keyPem, certPem, o));
}

/** Edits the document without touching any signature. */
export function editOnly(b64: string, edit: (assertion: Element, doc: Document) => void): string {
  const doc = decodeResponse(b64);
  edit(assertionOf(doc), doc);
  return encodeResponse(doc);
}

/** Replaces every value of the named attribute. */
export function setAttributeValues(assertion: Element, name: string, values: string[]): void {
  for (const attr of Array.from(assertion.getElementsByTagNameNS(SAML, "Attribute"))) {
    if (attr.getAttribute("Name") !== name) continue;
    const doc = attr.ownerDocument;
    const template = attr.getElementsByTagNameNS(SAML, "AttributeValue")[0];
    while (attr.firstChild) attr.removeChild(attr.firstChild);
    for (const v of values) {
      const el =
        (template?.cloneNode(false) as Element | undefined) ??
        doc.createElementNS(SAML, "saml:AttributeValue");
      el.appendChild(doc.createTextNode(v));
      attr.appendChild(el);
    }
  }
}

/** An unsigned copy of the assertion with a new ID and forged attribute values. */
export function forgedCopy(assertion: Element, id: string, groups: string[]): Element {
  const evil = assertion.cloneNode(true) as Element;
  stripSignature(evil);
  evil.setAttribute("ID", id);
  setAttributeValues(evil, "groups", groups);
  return evil;
}
