// Which rotations make an agent renew at once, with real CA keys and real certificates.
import pino from "pino";
import { describe, expect, it } from "vitest";
import { SshCertSigner } from "../../core/certs/ssh-cert.ts";
import { formatSshPublicKey, generateSshKeyPair } from "../../core/certs/ssh-keys.ts";
import { createRootCa, generateEcdsaP256, issueTlsClientCert } from "../../core/certs/x509.ts";
import { systemClock } from "../../core/clock.ts";
import type { CertAuthorityStatus__Output } from "../../proto/generated/svc/v1/CertAuthorityStatus.ts";
import { RotationFollower, staleForRotation } from "./rotation-follow.ts";

const silent = pino({ level: "silent" });

function sshCa() {
  const pair = generateSshKeyPair("ed25519");
  return { signer: new SshCertSigner(pair.privateKey), line: formatSshPublicKey(pair.publicKey, "ca") };
}

function hostCert(signer: SshCertSigner): string {
  const host = generateSshKeyPair("ed25519");
  const now = Date.now();
  return signer.sign({
    type: "host",
    publicKey: host.publicLine,
    keyId: "host:n1",
    principals: ["n1"],
    validAfter: new Date(now - 60_000),
    validBefore: new Date(now + 3600_000),
  }).line;
}

async function x509Ca(name: string) {
  const { privateKey } = generateEcdsaP256();
  const certPem = await createRootCa({ privateKey, commonName: name, clock: systemClock });
  return { certPem, privateKey };
}

function status(type: string, phase: string, active: string, previous: string): CertAuthorityStatus__Output {
  return {
    type,
    phase,
    mode: "manual",
    phase_changed_at: "",
    grace_period_seconds: "0",
    next_phase_at: "",
    old_key_expires_at: "",
    keys: [
      { fingerprint: "a", role: "active", created_at: "", public_key: active },
      { fingerprint: "p", role: "previous", created_at: "", public_key: previous },
    ],
  } as unknown as CertAuthorityStatus__Output;
}

describe("rotation follow", () => {
  it("asks for host_ssh and host_x509 only in update_servers and only for a certificate of another key", async () => {
    const oldSsh = sshCa();
    const newSsh = sshCa();
    const oldX = await x509Ca("old");
    const newX = await x509Ca("new");
    const tlsKey = generateEcdsaP256();
    const tlsOld = await issueTlsClientCert(oldX, {
      publicKey: tlsKey.publicKey,
      commonName: "n1",
      uri: "svc://agent/n1",
      clock: systemClock,
    });
    const tlsNew = await issueTlsClientCert(newX, {
      publicKey: tlsKey.publicKey,
      commonName: "n1",
      uri: "svc://agent/n1",
      clock: systemClock,
    });
    const onOld = { hostCertificate: hostCert(oldSsh.signer), tlsCertificatePem: tlsOld };
    const onNew = { hostCertificate: hostCert(newSsh.signer), tlsCertificatePem: tlsNew };
    const servers = [
      status("host_ssh", "update_servers", newSsh.line, oldSsh.line),
      status("host_x509", "update_servers", newX.certPem, oldX.certPem),
    ];
    expect(staleForRotation(servers, onOld)).toEqual(["host_ssh", "host_x509"]);
    expect(staleForRotation(servers, onNew)).toEqual([]);
    // Before update_servers (and after a rollback) the old key's certificates are what servers hold.
    for (const phase of ["init", "update_clients", "rollback", "standby"])
      expect(staleForRotation([status("host_ssh", phase, newSsh.line, oldSsh.line)], onOld)).toEqual([]);
    // Other CA types never concern a node's own certificates.
    expect(staleForRotation([status("user_ssh", "update_servers", newSsh.line, oldSsh.line)], onOld)).toEqual(
      [],
    );
  });

  it("renews once per need, one at a time, and retries a failed renewal only after a pause", async () => {
    const oldSsh = sshCa();
    const newSsh = sshCa();
    let cert = hostCert(oldSsh.signer);
    let now = 0;
    const calls: string[] = [];
    let fail = true;
    const f = new RotationFollower({
      certificates: () => ({ hostCertificate: cert }),
      renewNow: async (reason) => {
        calls.push(reason);
        if (fail) throw new Error("auth unavailable");
        cert = hostCert(newSsh.signer);
      },
      logger: silent,
      retryAfterMs: 1000,
      now: () => now,
    });
    const auth = [status("host_ssh", "update_servers", newSsh.line, oldSsh.line)];
    await f.onAuthorities(auth);
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatch(/host_ssh/);
    await f.onAuthorities(auth);
    expect(calls).toHaveLength(1);
    now = 1500;
    fail = false;
    await Promise.all([f.onAuthorities(auth), f.onAuthorities(auth)]);
    expect(calls).toHaveLength(2);
    await f.onAuthorities(auth);
    expect(calls).toHaveLength(2);
  });
});
