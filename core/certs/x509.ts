// X.509 issuing with @peculiar/x509 (ECDSA/Ed25519 capable, unlike node-forge): CA roots, TLS
// server and client certificates, SPIFFE X.509-SVIDs, and verification of a leaf against CAs.
import {
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  type KeyObject,
  randomBytes,
} from "node:crypto";
import { isIP } from "node:net";
import type { Clock } from "../clock.ts";
import { BadParameterError, NotAuthenticatedError } from "../errors.ts";
import { x509 } from "./x509-lib.ts";

export const TLS_SERVER_TTL_SECONDS = 90 * 24 * 3600;
export const TLS_CLIENT_TTL_SECONDS = 24 * 3600;
export const SPIFFE_SVID_TTL_SECONDS = 3600;
export const CA_TTL_SECONDS = 10 * 365 * 24 * 3600;
/** issued certificates start a minute early to tolerate small clock differences */
const BACKDATE_MS = 60_000;

/** An issuing CA: its certificate and private key. */
export interface X509Issuer {
  certPem: string;
  privateKey: KeyObject;
}

// ---- PEM helpers ----------------------------------------------------------------------------

export function derToPem(der: Uint8Array, label = "CERTIFICATE"): string {
  const lines =
    Buffer.from(der)
      .toString("base64")
      .match(/.{1,64}/g) ?? [];
  return `-----BEGIN ${label}-----\n${lines.join("\n")}\n-----END ${label}-----\n`;
}

/** Every PEM block with the given label, as DER. */
export function pemToDers(pem: string, label = "CERTIFICATE"): Buffer[] {
  const re = new RegExp(`-----BEGIN ${label}-----([A-Za-z0-9+/=\\s]+?)-----END ${label}-----`, "g");
  const out: Buffer[] = [];
  for (const m of pem.matchAll(re)) out.push(Buffer.from((m[1] ?? "").replace(/\s+/g, ""), "base64"));
  return out;
}

export function privateKeyToPem(key: KeyObject): string {
  return key.export({ format: "pem", type: "pkcs8" }).toString();
}

export function privateKeyFromPem(pem: string): KeyObject {
  try {
    return createPrivateKey({ key: pem, format: "pem" });
  } catch (err) {
    throw new BadParameterError("not a PEM private key", { cause: err });
  }
}

/** One SPKI "PUBLIC KEY" block and nothing else (surrounding whitespace aside). */
const SPKI_PEM = /^\s*-----BEGIN PUBLIC KEY-----\r?\n[A-Za-z0-9+/=\r\n]+-----END PUBLIC KEY-----\s*$/;

/**
 * A public key a caller sends to be certified. Only an SPKI PEM: createPublicKey alone also takes a
 * certificate (someone else's key, e.g. another node's, would be certified under the caller's
 * name) or a private key (which must never travel to auth).
 */
export function publicKeyFromPem(pem: string): KeyObject {
  if (typeof pem !== "string" || !SPKI_PEM.test(pem))
    throw new BadParameterError("not a PEM public key (-----BEGIN PUBLIC KEY-----)");
  try {
    return createPublicKey({ key: pem, format: "pem" });
  } catch (err) {
    throw new BadParameterError("not a PEM public key", { cause: err });
  }
}

export function parseCertificatePem(pem: string): x509.X509Certificate {
  const der = pemToDers(pem)[0];
  if (!der) throw new BadParameterError("no PEM certificate found");
  try {
    return new x509.X509Certificate(new Uint8Array(der));
  } catch (err) {
    throw new BadParameterError("certificate is malformed", { cause: err });
  }
}

/** A fresh ECDSA P-256 key pair, the default for TLS and SVID keys. */
export function generateEcdsaP256(): { privateKey: KeyObject; publicKey: KeyObject } {
  return generateKeyPairSync("ec", { namedCurve: "P-256" });
}

// ---- identities in URI SANs -----------------------------------------------------------------

/** The URI SAN that names an agent in its X.509 client certificate (see docs/certificates.md). */
export const agentIdentityUri = (agentId: string): string => `svc://agent/${encodeURIComponent(agentId)}`;
/** The URI SAN of a bot (agent identity) client certificate. */
export const botIdentityUri = (botName: string): string => `svc://bot/${encodeURIComponent(botName)}`;
/** The URI SAN of a platform service (auth, proxy) client certificate. */
export const serviceIdentityUri = (role: string, name: string): string =>
  `svc://${encodeURIComponent(role)}/${encodeURIComponent(name)}`;

const TRUST_DOMAIN = /^[a-z0-9._-]{1,255}$/;
const SPIFFE_SEGMENT = /^[A-Za-z0-9._-]+$/;

/** Splits and validates spiffe://<trust-domain>/<path> (the SPIFFE-ID rules). */
export function parseSpiffeId(id: string): { trustDomain: string; path: string } {
  const m = /^spiffe:\/\/([^/]+)(\/.*)$/.exec(id);
  const trustDomain = m?.[1] ?? "";
  const path = m?.[2] ?? "";
  if (!m || !TRUST_DOMAIN.test(trustDomain))
    throw new BadParameterError(`not a SPIFFE ID: ${JSON.stringify(id.slice(0, 200))}`);
  const segs = path.slice(1).split("/");
  if (segs.some((s) => !SPIFFE_SEGMENT.test(s) || s === "." || s === "..")) {
    throw new BadParameterError(`SPIFFE ID path is invalid: ${JSON.stringify(id.slice(0, 200))}`);
  }
  return { trustDomain, path };
}

// ---- issuing --------------------------------------------------------------------------------

function randomSerial(): string {
  const b = randomBytes(16);
  b[0] = (b[0] as number) & 0x7f; // positive
  b[0] = (b[0] as number) | 0x01; // no leading zero byte
  return b.toString("hex");
}

function spkiDer(key: KeyObject): ArrayBuffer {
  const pub = key.type === "private" ? createPublicKey(key) : key;
  const der = pub.export({ format: "der", type: "spki" });
  return der.buffer.slice(der.byteOffset, der.byteOffset + der.byteLength) as ArrayBuffer;
}

function signingParams(key: KeyObject): {
  alg: Algorithm & { hash?: string; namedCurve?: string };
  signing: CryptoKey;
} {
  const t = key.asymmetricKeyType;
  if (t === "ec") {
    const curve = key.asymmetricKeyDetails?.namedCurve === "secp384r1" ? "P-384" : "P-256";
    const hash = curve === "P-384" ? "SHA-384" : "SHA-256";
    return {
      alg: { name: "ECDSA", hash },
      signing: key.toCryptoKey({ name: "ECDSA", namedCurve: curve }, false, ["sign"]) as unknown as CryptoKey,
    };
  }
  if (t === "ed25519")
    return {
      alg: { name: "Ed25519" },
      signing: key.toCryptoKey({ name: "Ed25519" }, false, ["sign"]) as unknown as CryptoKey,
    };
  throw new BadParameterError(`unsupported CA key type ${String(t)}`);
}

function checkTtl(ttlSeconds: number, max: number): number {
  if (!Number.isFinite(ttlSeconds) || ttlSeconds <= 0 || ttlSeconds > max) {
    throw new BadParameterError(`ttl must be between 1 and ${max} seconds`);
  }
  return ttlSeconds;
}

const cnName = (cn: string, org?: string): string => {
  if (typeof cn !== "string" || cn.length === 0 || cn.length > 64)
    throw new BadParameterError("common name must be 1..64 characters");
  // JSON name form avoids escaping issues with commas and equals signs in the CN
  return new x509.Name([{ CN: [cn] }, ...(org ? [{ O: [org] }] : [])]).toString();
};

/** A self-signed root CA certificate for `privateKey` (ECDSA P-256/384 or Ed25519). */
export async function createRootCa(opts: {
  privateKey: KeyObject;
  commonName: string;
  organization?: string;
  clock: Clock;
  ttlSeconds?: number;
}): Promise<string> {
  const now = opts.clock.now().getTime();
  const { alg, signing } = signingParams(opts.privateKey);
  const name = cnName(opts.commonName, opts.organization);
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: randomSerial(),
    subject: name,
    issuer: name,
    notBefore: new Date(now - BACKDATE_MS),
    notAfter: new Date(now + checkTtl(opts.ttlSeconds ?? CA_TTL_SECONDS, 30 * CA_TTL_SECONDS) * 1000),
    signingAlgorithm: alg,
    publicKey: spkiDer(opts.privateKey),
    signingKey: signing,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(
        x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign | x509.KeyUsageFlags.digitalSignature,
        true,
      ),
      await x509.SubjectKeyIdentifierExtension.create(spkiDer(opts.privateKey)),
    ],
  });
  return cert.toString("pem");
}

interface LeafOptions {
  publicKey: KeyObject;
  commonName: string;
  clock: Clock;
  ttlSeconds: number;
  dnsNames?: readonly string[];
  ips?: readonly string[];
  uris?: readonly string[];
  eku: string[];
}

async function issueLeaf(ca: X509Issuer, o: LeafOptions): Promise<string> {
  const caCert = parseCertificatePem(ca.certPem);
  const { alg, signing } = signingParams(ca.privateKey);
  const now = o.clock.now().getTime();
  const notAfter = Math.min(now + o.ttlSeconds * 1000, caCert.notAfter.getTime());
  const sans: { type: "dns" | "ip" | "url"; value: string }[] = [];
  for (const d of o.dnsNames ?? []) {
    if (!/^(\*\.)?[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*$/.test(d) || d.length > 253)
      throw new BadParameterError(`invalid DNS name ${JSON.stringify(d)}`);
    sans.push({ type: "dns", value: d });
  }
  for (const ip of o.ips ?? []) {
    if (isIP(ip) === 0) throw new BadParameterError(`invalid IP address ${JSON.stringify(ip)}`);
    sans.push({ type: "ip", value: ip });
  }
  for (const u of o.uris ?? []) {
    if (!URL.canParse(u)) throw new BadParameterError(`invalid URI ${JSON.stringify(u)}`);
    sans.push({ type: "url", value: u });
  }
  const isEc = o.publicKey.asymmetricKeyType === "ec" || o.publicKey.asymmetricKeyType === "ed25519";
  const usage = isEc
    ? x509.KeyUsageFlags.digitalSignature
    : x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment;
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: randomSerial(),
    subject: cnName(o.commonName),
    issuer: caCert.subject,
    notBefore: new Date(now - BACKDATE_MS),
    notAfter: new Date(notAfter),
    signingAlgorithm: alg,
    publicKey: spkiDer(o.publicKey),
    signingKey: signing,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(usage, true),
      new x509.ExtendedKeyUsageExtension(o.eku, false),
      ...(sans.length > 0 ? [new x509.SubjectAlternativeNameExtension(sans, false)] : []),
      await x509.AuthorityKeyIdentifierExtension.create(caCert),
      await x509.SubjectKeyIdentifierExtension.create(spkiDer(o.publicKey)),
    ],
  });
  return cert.toString("pem");
}

const EKU_SERVER = x509.ExtendedKeyUsage.serverAuth as string;
const EKU_CLIENT = x509.ExtendedKeyUsage.clientAuth as string;

/** TLS server certificate: SANs are DNS names and IPs; EKU serverAuth (and clientAuth, so auth/proxy can dial each other). */
export async function issueTlsServerCert(
  ca: X509Issuer,
  o: {
    publicKey: KeyObject;
    commonName: string;
    dnsNames?: readonly string[];
    ips?: readonly string[];
    clock: Clock;
    ttlSeconds?: number;
  },
): Promise<string> {
  if ((o.dnsNames?.length ?? 0) + (o.ips?.length ?? 0) === 0)
    throw new BadParameterError("a server certificate needs a DNS name or IP");
  return issueLeaf(ca, {
    ...o,
    ttlSeconds: checkTtl(o.ttlSeconds ?? TLS_SERVER_TTL_SECONDS, 397 * 24 * 3600),
    uris: [],
    eku: [EKU_SERVER, EKU_CLIENT],
  });
}

/** TLS client certificate: identity in the CN and in a URI SAN (e.g. agentIdentityUri(id)); EKU clientAuth. */
export async function issueTlsClientCert(
  ca: X509Issuer,
  o: { publicKey: KeyObject; commonName: string; uri: string; clock: Clock; ttlSeconds?: number },
): Promise<string> {
  if (!/^svc:\/\/[^/]+\/.+/.test(o.uri))
    throw new BadParameterError("client identity URI must look like svc://<kind>/<name>");
  return issueLeaf(ca, {
    publicKey: o.publicKey,
    commonName: o.commonName,
    clock: o.clock,
    ttlSeconds: checkTtl(o.ttlSeconds ?? TLS_CLIENT_TTL_SECONDS, 397 * 24 * 3600),
    uris: [o.uri],
    eku: [EKU_CLIENT],
  });
}

/** SPIFFE X.509-SVID: exactly one URI SAN (the SPIFFE ID), short TTL, EKU client+server auth. */
export async function issueSpiffeSvid(
  ca: X509Issuer,
  o: {
    publicKey: KeyObject;
    spiffeId: string;
    trustDomain: string;
    clock: Clock;
    ttlSeconds?: number;
    dnsNames?: readonly string[];
  },
): Promise<string> {
  const id = parseSpiffeId(o.spiffeId);
  if (id.trustDomain !== o.trustDomain)
    throw new BadParameterError(`SPIFFE ID is not in trust domain ${o.trustDomain}`);
  return issueLeaf(ca, {
    publicKey: o.publicKey,
    commonName: id.path.split("/").pop()?.slice(0, 64) || id.trustDomain.slice(0, 64),
    clock: o.clock,
    ttlSeconds: checkTtl(o.ttlSeconds ?? SPIFFE_SVID_TTL_SECONDS, 24 * 3600),
    uris: [o.spiffeId],
    dnsNames: o.dnsNames ?? [],
    eku: [EKU_SERVER, EKU_CLIENT],
  });
}

// ---- verification ---------------------------------------------------------------------------

export interface VerifiedX509 {
  commonName: string;
  serial: string;
  uris: string[];
  dnsNames: string[];
  ips: string[];
  notBefore: Date;
  notAfter: Date;
  /** the CA certificate (PEM) that signed it */
  issuerPem: string;
}

/**
 * Verifies a leaf (PEM, or DER) against CA certificates that issue directly (our CAs have no
 * intermediates): issuer signature, both validity windows at clock time, CA basic constraints,
 * and the EKU when `usage` is given. Any failure -> NotAuthenticatedError.
 */
export async function verifyX509Leaf(
  leaf: string | Uint8Array,
  caPems: readonly string[],
  o: { clock: Clock; usage?: "server" | "client" },
): Promise<VerifiedX509> {
  let cert: x509.X509Certificate;
  try {
    cert =
      typeof leaf === "string" ? parseCertificatePem(leaf) : new x509.X509Certificate(new Uint8Array(leaf));
  } catch (err) {
    throw new BadParameterError("certificate is malformed", { cause: err });
  }
  const now = o.clock.now();
  const bc = cert.getExtension(x509.BasicConstraintsExtension);
  if (bc?.ca) throw new NotAuthenticatedError("a CA certificate cannot be used as a leaf");
  if (now < cert.notBefore) throw new NotAuthenticatedError("certificate is not yet valid");
  if (now > cert.notAfter) throw new NotAuthenticatedError("certificate has expired");
  let issuerPem: string | undefined;
  for (const pem of caPems) {
    const ca = parseCertificatePem(pem);
    if (ca.subject !== cert.issuer) continue;
    if (!ca.getExtension(x509.BasicConstraintsExtension)?.ca) continue;
    if (now < ca.notBefore || now > ca.notAfter) continue;
    if (await cert.verify({ publicKey: ca, signatureOnly: true })) {
      issuerPem = pem;
      break;
    }
  }
  if (!issuerPem) throw new NotAuthenticatedError("certificate is not signed by a trusted CA");
  if (o.usage) {
    const want = o.usage === "server" ? EKU_SERVER : EKU_CLIENT;
    const eku = cert.getExtension(x509.ExtendedKeyUsageExtension);
    if (!eku?.usages.map(String).includes(want))
      throw new NotAuthenticatedError(`certificate is not valid for TLS ${o.usage} use`);
  }
  const san = cert.getExtension(x509.SubjectAlternativeNameExtension);
  const names = san?.names.items ?? [];
  const pick = (t: string): string[] => names.filter((n) => n.type === t).map((n) => n.value);
  const cn = cert.subjectName.getField("CN")[0] ?? "";
  return {
    commonName: cn,
    serial: cert.serialNumber,
    uris: pick("url"),
    dnsNames: pick("dns"),
    ips: pick("ip"),
    notBefore: cert.notBefore,
    notAfter: cert.notAfter,
    issuerPem,
  };
}

/** Verifies an X.509-SVID: chain to the SPIFFE CA, validity, exactly one spiffe:// URI SAN in `trustDomain`. */
export async function verifySpiffeSvid(
  leaf: string | Uint8Array,
  spiffeCaPems: readonly string[],
  o: { clock: Clock; trustDomain: string },
): Promise<VerifiedX509 & { spiffeId: string; path: string }> {
  const v = await verifyX509Leaf(leaf, spiffeCaPems, { clock: o.clock });
  const spiffe = v.uris.filter((u) => u.startsWith("spiffe://"));
  if (spiffe.length !== 1 || v.uris.length !== 1)
    throw new NotAuthenticatedError("an SVID must carry exactly one spiffe:// URI SAN");
  const id = spiffe[0] as string;
  let parsed: { trustDomain: string; path: string };
  try {
    parsed = parseSpiffeId(id);
  } catch {
    throw new NotAuthenticatedError("SVID URI SAN is not a valid SPIFFE ID");
  }
  if (parsed.trustDomain !== o.trustDomain)
    throw new NotAuthenticatedError("SVID is from another trust domain");
  return { ...v, spiffeId: id, path: parsed.path };
}
