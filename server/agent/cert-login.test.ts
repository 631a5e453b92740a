import { generateKeyPairSync, type KeyObject, sign } from "node:crypto";
import { describe, expect, it } from "vitest";
import { signSshCertificate } from "../../core/certs/ssh-cert.ts";
import { sshPublicKeyBlob } from "../../core/certs/ssh-keys.ts";
import { SshWriter } from "../../core/certs/ssh-wire.ts";
import { ManualClock } from "../../core/clock.ts";
import { AccessDeniedError, NotAuthenticatedError } from "../../core/errors.ts";
import { type CertLoginRequest, type QueriedCert, verifyCertLogin } from "./cert-login.ts";

const clock = new ManualClock(Date.UTC(2026, 5, 1));
const ca = generateKeyPairSync("ed25519");
const policy = { trustedUserCaKeys: [sshPublicKeyBlob(ca.publicKey)], clock };
const signed = Buffer.from("session id + userauth request");

function certFor(publicKey: KeyObject, principals = ["root"]): Buffer {
  return signSshCertificate(ca.privateKey, {
    type: "user",
    publicKey,
    keyId: "alice",
    principals,
    validAfter: new Date(clock.now().getTime() - 60_000),
    validBefore: new Date(clock.now().getTime() + 60_000),
  }).blob;
}

const sigBlob = (format: string, sig: Buffer): Buffer => new SshWriter().string(format).bytes(sig).toBuffer();

function request(keyAlgo: string, keyData: Buffer, signature?: Buffer): CertLoginRequest {
  return {
    login: "root",
    keyAlgo,
    keyData,
    ...(signature ? { signature, signedData: signed } : {}),
    remoteAddress: "127.0.0.1",
  };
}

describe("verifyCertLogin", () => {
  const ed = generateKeyPairSync("ed25519");
  const edCert = certFor(ed.publicKey);
  const edAlgo = "ssh-ed25519-cert-v01@openssh.com";

  it("accepts a query and a correctly signed Ed25519 certificate login", () => {
    expect(verifyCertLogin(request(edAlgo, edCert), policy).keyId).toBe("alice");
    const sig = sigBlob("ssh-ed25519", sign(null, signed, ed.privateKey));
    expect(verifyCertLogin(request(edAlgo, edCert, sig), policy).principals).toEqual(["root"]);
  });

  it("refuses plain keys, signatures by another key and mismatched algorithms", () => {
    expect(() => verifyCertLogin(request("ssh-ed25519", sshPublicKeyBlob(ed.publicKey)), policy)).toThrow(
      NotAuthenticatedError,
    );
    const other = generateKeyPairSync("ed25519");
    const bad = sigBlob("ssh-ed25519", sign(null, signed, other.privateKey));
    expect(() => verifyCertLogin(request(edAlgo, edCert, bad), policy)).toThrow(/signature is invalid/);
    expect(() =>
      verifyCertLogin(request("ecdsa-sha2-nistp256-cert-v01@openssh.com", edCert), policy),
    ).toThrow(/does not fit/);
  });

  it("checks the RSA signature format against the requested algorithm and refuses SHA-1", () => {
    const rsa = generateKeyPairSync("rsa", { modulusLength: 2048 });
    const cert = certFor(rsa.publicKey);
    const s256 = sigBlob("rsa-sha2-256", sign("sha256", signed, rsa.privateKey));
    const s512 = sigBlob("rsa-sha2-512", sign("sha512", signed, rsa.privateKey));
    expect(verifyCertLogin(request("rsa-sha2-256-cert-v01@openssh.com", cert, s256), policy).keyId).toBe(
      "alice",
    );
    expect(verifyCertLogin(request("rsa-sha2-512-cert-v01@openssh.com", cert, s512), policy).keyId).toBe(
      "alice",
    );
    expect(() => verifyCertLogin(request("rsa-sha2-256-cert-v01@openssh.com", cert, s512), policy)).toThrow(
      /wrong format/,
    );
    expect(() => verifyCertLogin(request("ssh-rsa-cert-v01@openssh.com", cert), policy)).toThrow(
      /does not fit/,
    );
  });

  it("after a query, checks a signed request for the same certificate again for time, CA trust and signature", () => {
    const fresh = new ManualClock(clock.now().getTime());
    const p = { trustedUserCaKeys: policy.trustedUserCaKeys, clock: fresh };
    const q: QueriedCert = {
      cert: verifyCertLogin(request(edAlgo, edCert), p),
      login: "root",
      keyAlgo: edAlgo,
      remoteAddress: "127.0.0.1",
    };
    const sig = sigBlob("ssh-ed25519", sign(null, signed, ed.privateKey));
    expect(verifyCertLogin(request(edAlgo, edCert, sig), p, q)).toBe(q.cert);
    // the userauth signature is still verified
    const other = generateKeyPairSync("ed25519");
    const bad = sigBlob("ssh-ed25519", sign(null, signed, other.privateKey));
    expect(() => verifyCertLogin(request(edAlgo, edCert, bad), p, q)).toThrow(/signature is invalid/);
    // the CA was dropped between query and signed request
    const otherCa = generateKeyPairSync("ed25519");
    const rotated = { trustedUserCaKeys: [sshPublicKeyBlob(otherCa.publicKey)], clock: fresh };
    expect(() => verifyCertLogin(request(edAlgo, edCert, sig), rotated, q)).toThrow(/trusted CA/);
    // the certificate expired between query and signed request
    fresh.advance(120_000);
    expect(() => verifyCertLogin(request(edAlgo, edCert, sig), p, q)).toThrow(/expired/);
  });

  it("verifies in full a signed request that differs from the query (certificate, login)", () => {
    const q: QueriedCert = {
      cert: verifyCertLogin(request(edAlgo, edCert), policy),
      login: "root",
      keyAlgo: edAlgo,
      remoteAddress: "127.0.0.1",
    };
    // a certificate for another principal is refused although a query was answered on this connection
    const aliceOnly = certFor(ed.publicKey, ["alice"]);
    const sig = sigBlob("ssh-ed25519", sign(null, signed, ed.privateKey));
    expect(() => verifyCertLogin(request(edAlgo, aliceOnly, sig), policy, q)).toThrow(AccessDeniedError);
    const forOther = { ...request(edAlgo, edCert, sig), login: "alice" };
    expect(() => verifyCertLogin(forOther, policy, q)).toThrow(AccessDeniedError);
  });

  it("refuses a login that is not among the principals", () => {
    const cert = certFor(ed.publicKey, ["alice"]);
    expect(() => verifyCertLogin(request(edAlgo, cert), policy)).toThrow(AccessDeniedError);
  });
});
