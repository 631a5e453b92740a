// Decides whether a publickey userauth request is an acceptable certificate login: a user
// certificate from a trusted user CA, valid now, naming the login, used from an allowed address,
// signed (the userauth signature) by the certified key. Everything else is refused.
import type { KeyObject } from "node:crypto";
import {
  type ParsedSshCertificate,
  verifySshCertificate,
  verifySshSignature,
} from "../../core/certs/ssh-cert.ts";
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
 * Verifies the request; returns the certificate when the login may proceed. Throws
 * NotAuthenticatedError / AccessDeniedError / BadParameterError (from core/certs) otherwise.
 */
export function verifyCertLogin(req: CertLoginRequest, policy: CertLoginPolicy): ParsedSshCertificate {
  if (!req.keyAlgo.endsWith(CERT_SUFFIX)) throw new NotAuthenticatedError("only certificates are accepted");
  const cert = verifySshCertificate(req.keyData, {
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
