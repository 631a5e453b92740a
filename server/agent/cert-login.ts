// Decides whether a publickey userauth request is an acceptable certificate login: a user
// certificate from a trusted user CA, valid now, naming the login, used from an allowed address,
// signed (the userauth signature) by the certified key. Everything else is refused.
import type { KeyObject } from "node:crypto";
import {
  type ParsedSshCertificate,
  verifySshCertificate,
  verifySshSignature,
} from "../../core/certs/ssh-cert.ts";
import { parseSshPublicKey, sshPublicKeyBlob } from "../../core/certs/ssh-keys.ts";
import type { Clock } from "../../core/clock.ts";
import { NotAuthenticatedError } from "../../core/errors.ts";

export interface CertLoginRequest {
  login: string;
  /** the algorithm name from the request (e.g. ssh-ed25519-cert-v01@openssh.com) */
  keyAlgo: string;
  /** the key blob from the request: the certificate */
  keyData: Buffer;
  /** the raw SSH signature blob (string format, string sig); absent for a "would you accept" query */
  signature?: Buffer;
  /** the data the signature covers (session id + request) */
  signedData?: Buffer;
  remoteAddress: string;
}

export interface CertLoginPolicy {
  trustedUserCaKeys: readonly (KeyObject | Uint8Array | string)[];
  clock: Clock;
}

const CERT_SUFFIX = "-cert-v01@openssh.com";

/** The signature format a request algorithm must be signed with. */
function expectedSigFormat(keyAlgo: string, certType: string): string | undefined {
  if (!keyAlgo.endsWith(CERT_SUFFIX)) return undefined;
  const base = keyAlgo.slice(0, -CERT_SUFFIX.length);
  if (base === "rsa-sha2-256" || base === "rsa-sha2-512") {
    return certType === `ssh-rsa${CERT_SUFFIX}` ? base : undefined;
  }
  if (base === "ssh-rsa") return undefined; // SHA-1 signatures are refused
  return keyAlgo === certType ? base : undefined;
}

function sigFormat(sig: Buffer): string {
  if (sig.length < 4) return "";
  const n = sig.readUInt32BE(0);
  return sig.subarray(4, 4 + n).toString("latin1");
}

/**
 * A certificate this connection's "would you accept?" query already verified in full, with the
 * login, algorithm and address it was verified for.
 */
export interface QueriedCert {
  cert: ParsedSshCertificate;
  login: string;
  keyAlgo: string;
  remoteAddress: string;
}

function caKeyBlob(k: KeyObject | Uint8Array | string): Buffer {
  if (typeof k === "string") return parseSshPublicKey(k).blob;
  if (k instanceof Uint8Array) return Buffer.from(k);
  return sshPublicKeyBlob(k);
}

/**
 * The query's verification of the very same certificate bytes for the same login, algorithm and
 * address, brought up to date: the type, principal, source-address and critical option checks
 * and the CA's signature depend on nothing else, so only what can change between the query and
 * the signed request (the clock, the trusted CA set) is checked again.
 */
function recheckQueried(policy: CertLoginPolicy, q: QueriedCert): ParsedSshCertificate {
  const cert = q.cert;
  if (!policy.trustedUserCaKeys.some((k) => caKeyBlob(k).equals(cert.signatureKey)))
    throw new NotAuthenticatedError("certificate is not signed by a trusted CA");
  const now = policy.clock.now().getTime();
  if (now < cert.validAfter.getTime()) throw new NotAuthenticatedError("certificate is not yet valid");
  if (now >= cert.validBefore.getTime()) throw new NotAuthenticatedError("certificate has expired");
  return cert;
}

function sameQuery(req: CertLoginRequest, q: QueriedCert | undefined): q is QueriedCert {
  return (
    q !== undefined &&
    q.login === req.login &&
    q.keyAlgo === req.keyAlgo &&
    q.remoteAddress === req.remoteAddress &&
    q.cert.blob.equals(req.keyData)
  );
}

/**
 * Verifies the request; returns the certificate when the login may proceed. Throws
 * NotAuthenticatedError / AccessDeniedError / BadParameterError (from core/certs) otherwise.
 * `queried`: what this connection's query verified, so a signed request for the same
 * certificate does not verify its CA signature a second time.
 */
export function verifyCertLogin(
  req: CertLoginRequest,
  policy: CertLoginPolicy,
  queried?: QueriedCert,
): ParsedSshCertificate {
  if (!req.keyAlgo.endsWith(CERT_SUFFIX)) throw new NotAuthenticatedError("only certificates are accepted");
  const cert = sameQuery(req, queried)
    ? recheckQueried(policy, queried)
    : verifySshCertificate(req.keyData, {
        trustedCaKeys: policy.trustedUserCaKeys,
        type: "user",
        clock: policy.clock,
        principal: req.login,
        clientAddress: req.remoteAddress,
      });
  const format = expectedSigFormat(req.keyAlgo, cert.certType);
  if (format === undefined)
    throw new NotAuthenticatedError(`algorithm ${req.keyAlgo} does not fit the certificate`);
  if (req.signature === undefined) return cert;
  if (req.signedData === undefined || sigFormat(req.signature) !== format) {
    throw new NotAuthenticatedError("userauth signature has the wrong format");
  }
  if (!verifySshSignature(cert.publicKey, cert.keyType, req.signedData, req.signature)) {
    throw new NotAuthenticatedError("userauth signature is invalid");
  }
  return cert;
}
