// SAML metadata: reading the identity provider's (its signing certificates, its single-sign-on
// URL, its entity id) and parsing it namespace-aware, so a look-alike element in another
// namespace is never taken for a certificate.
import { request } from "node:https";
import { rootCertificates } from "node:tls";
import { DOMParser } from "@xmldom/xmldom";
import { PreconditionFailedError, UnavailableError } from "../../../core/errors.ts";

export const MD_NS = "urn:oasis:names:tc:SAML:2.0:metadata";
export const DSIG_NS = "http://www.w3.org/2000/09/xmldsig#";
export const REDIRECT_BINDING = "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect";

/** What the service provider needs from an identity provider's metadata. */
export interface IdpMetadata {
  entityId: string;
  /** PEM certificates the provider signs with (KeyDescriptor use="signing" or without use). */
  signingCerts: string[];
  /** SingleSignOnService location for the HTTP-Redirect binding, if the provider offers one. */
  ssoRedirectUrl?: string;
}

const MAX_METADATA_BYTES = 1024 * 1024;
const FETCH_TIMEOUT_MS = 10_000;
// Providers rotate keys by publishing the next certificate ahead of time; a short cache picks a
// rotation up within minutes without fetching on every login.
const CACHE_TTL_MS = 10 * 60_000;

const cache = new Map<string, { at: number; metadata: IdpMetadata }>();

/** Wraps base64 DER as PEM (metadata carries the bare base64 of the certificate). */
export function certBodyToPem(body: string): string {
  const b64 = body.replace(/\s+/g, "");
  const lines = b64.match(/.{1,64}/g) ?? [];
  return `-----BEGIN CERTIFICATE-----\n${lines.join("\n")}\n-----END CERTIFICATE-----\n`;
}

/**
 * Parses XML strictly: any parser error throws, and a DOCTYPE is refused (SAML messages and
 * metadata never need one; it is how entity-expansion attacks start).
 */
export function parseXmlStrict(xml: string): Document {
  if (/<!DOCTYPE/i.test(xml)) throw new Error("DOCTYPE is not allowed");
  const fail = (msg: unknown) => {
    throw new Error(String(msg));
  };
  const doc = new DOMParser({ errorHandler: { error: fail, fatalError: fail } }).parseFromString(
    xml,
    "text/xml",
  );
  if (!doc?.documentElement) throw new Error("no document element");
  return doc;
}

/** Parses IdP metadata XML (an EntityDescriptor, or an EntitiesDescriptor holding one IdP). */
export function parseIdpMetadata(xml: string): IdpMetadata {
  let doc: Document;
  try {
    doc = parseXmlStrict(xml);
  } catch {
    throw new PreconditionFailedError("the identity provider's metadata is not well-formed XML");
  }
  const idps = Array.from(doc.getElementsByTagNameNS(MD_NS, "IDPSSODescriptor"));
  if (idps.length !== 1) {
    throw new PreconditionFailedError(
      `the identity provider's metadata must describe exactly one IdP (found ${idps.length})`,
    );
  }
  const idp = idps[0]!;
  const entity = idp.parentNode as Element | null;
  const entityId = entity?.getAttribute("entityID") ?? "";
  if (entity?.localName !== "EntityDescriptor" || entity.namespaceURI !== MD_NS || !entityId) {
    throw new PreconditionFailedError("the identity provider's metadata has no entityID");
  }
  const signingCerts: string[] = [];
  for (const kd of Array.from(idp.getElementsByTagNameNS(MD_NS, "KeyDescriptor"))) {
    if (kd.parentNode !== idp) continue;
    const use = kd.getAttribute("use");
    if (use && use !== "signing") continue;
    for (const cert of Array.from(kd.getElementsByTagNameNS(DSIG_NS, "X509Certificate"))) {
      const body = (cert.textContent ?? "").replace(/\s+/g, "");
      if (/^[A-Za-z0-9+/]+=*$/.test(body)) signingCerts.push(certBodyToPem(body));
    }
  }
  if (signingCerts.length === 0) {
    throw new PreconditionFailedError("the identity provider's metadata has no signing certificate");
  }
  let ssoRedirectUrl: string | undefined;
  for (const sso of Array.from(idp.getElementsByTagNameNS(MD_NS, "SingleSignOnService"))) {
    if (sso.parentNode === idp && sso.getAttribute("Binding") === REDIRECT_BINDING) {
      ssoRedirectUrl = sso.getAttribute("Location") ?? undefined;
      break;
    }
  }
  return ssoRedirectUrl ? { entityId, signingCerts, ssoRedirectUrl } : { entityId, signingCerts };
}

function httpsGet(url: URL, caPem: string | undefined): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: "GET",
        headers: { accept: "application/samlmetadata+xml, application/xml, text/xml" },
        timeout: FETCH_TIMEOUT_MS,
        ...(caPem ? { ca: [...rootCertificates, caPem] } : {}),
      },
      (res) => {
        if (res.statusCode !== 200) {
          res.resume();
          reject(new Error(`HTTP ${res.statusCode}`));
          return;
        }
        const chunks: Buffer[] = [];
        let size = 0;
        res.on("data", (c: Buffer) => {
          size += c.length;
          if (size > MAX_METADATA_BYTES) {
            req.destroy(new Error("metadata larger than 1 MiB"));
            return;
          }
          chunks.push(c);
        });
        res.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
        res.on("error", reject);
      },
    );
    req.on("timeout", () => req.destroy(new Error("timed out")));
    req.on("error", reject);
    req.end();
  });
}

/**
 * The identity provider's metadata from `url` (HTTPS only; extra trust anchors from caPem),
 * cached for a few minutes. A failed refresh keeps serving the last good copy.
 */
export async function fetchIdpMetadata(
  url: string,
  caPem: string | undefined,
  now: number = Date.now(),
): Promise<IdpMetadata> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new PreconditionFailedError("settings.idp_metadata_url is not a URL");
  }
  if (parsed.protocol !== "https:") {
    throw new PreconditionFailedError("settings.idp_metadata_url must be an https:// URL");
  }
  const key = `${url}\n${caPem ?? ""}`;
  const hit = cache.get(key);
  if (hit && now - hit.at < CACHE_TTL_MS) return hit.metadata;
  let xml: string;
  try {
    xml = await httpsGet(parsed, caPem);
  } catch (err) {
    if (hit) return hit.metadata;
    const why = err instanceof Error ? err.message : "unknown error";
    throw new UnavailableError(`cannot fetch the identity provider's metadata: ${why}`);
  }
  const metadata = parseIdpMetadata(xml);
  cache.set(key, { at: now, metadata });
  return metadata;
}

/** Forgets cached metadata (tests, and a connector whose URL changed). */
export function clearIdpMetadataCache(): void {
  cache.clear();
}
