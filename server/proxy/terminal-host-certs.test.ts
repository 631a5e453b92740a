// Verified host certificates per node (terminal-host-certs.ts), with real certificates from a real
// ed25519 CA: a remembered certificate is accepted again only as the same bytes, under the same
// CA keys, for the same node and inside its validity; everything else is verified in full.
import { generateKeyPairSync } from "node:crypto";
import { describe, expect, it } from "vitest";
import { signSshCertificate } from "../../core/certs/ssh-cert.ts";
import { formatSshPublicKey } from "../../core/certs/ssh-keys.ts";
import { ManualClock } from "../../core/clock.ts";
import { VerifiedHostCerts } from "./terminal-host-certs.ts";

const clock = new ManualClock(Date.UTC(2026, 5, 1));
const ca = generateKeyPairSync("ed25519");
const otherCa = generateKeyPairSync("ed25519");
const caLine = formatSshPublicKey(ca.publicKey);
const otherCaLine = formatSshPublicKey(otherCa.publicKey);

function hostCert(principal: string, o: { ttlMs?: number; signer?: typeof ca } = {}): Buffer {
  const host = generateKeyPairSync("ed25519");
  return signSshCertificate((o.signer ?? ca).privateKey, {
    type: "host",
    publicKey: host.publicKey,
    keyId: principal,
    principals: [principal],
    validAfter: new Date(clock.now().getTime() - 60_000),
    validBefore: new Date(clock.now().getTime() + (o.ttlMs ?? 3600_000)),
  }).blob;
}

describe("VerifiedHostCerts", () => {
  it("accepts a verified certificate again, and only under the same CA keys and node", () => {
    const certs = new VerifiedHostCerts({ clock });
    const refusals: string[] = [];
    const onRefused = (r: string): void => {
      refusals.push(r);
    };
    const blob = hostCert("node-1");
    expect(certs.verifier("node-1", [caLine], onRefused)(blob)).toBe(true);
    expect(certs.size).toBe(1);
    expect(certs.verifier("node-1", [caLine], onRefused)(blob)).toBe(true);
    // The CA set moved (a rotation finished): verified in full against it, and refused.
    expect(certs.verifier("node-1", [otherCaLine], onRefused)(blob)).toBe(false);
    // Another node presenting node-1's certificate: its principal is checked.
    expect(certs.verifier("node-2", [caLine], onRefused)(blob)).toBe(false);
    expect(refusals).toHaveLength(2);
  });

  it("refuses a remembered certificate once it expired, and a different blob for the node", () => {
    const certs = new VerifiedHostCerts({ clock });
    const refusals: string[] = [];
    const blob = hostCert("node-1", { ttlMs: 60_000 });
    const v = (): ((b: Buffer) => boolean) => certs.verifier("node-1", [caLine], (r) => refusals.push(r));
    expect(v()(blob)).toBe(true);
    // Same node, a certificate from an untrusted CA: verified in full, refused, forgotten.
    expect(v()(hostCert("node-1", { signer: otherCa }))).toBe(false);
    expect(certs.size).toBe(0);
    expect(v()(blob)).toBe(true);
    clock.advance(61_000);
    expect(v()(blob)).toBe(false);
    expect(refusals.at(-1)).toMatch(/expired/);
  });

  it("holds at most maxEntries nodes", () => {
    const certs = new VerifiedHostCerts({ clock, maxEntries: 2 });
    for (const n of ["a", "b", "c"]) expect(certs.verifier(n, [caLine], () => {})(hostCert(n))).toBe(true);
    expect(certs.size).toBe(2);
  });
});
