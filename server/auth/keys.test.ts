import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { CertificateAuthorities } from "../../core/ca/authorities.ts";
import { FileCaKeyStore } from "../../core/ca/key-store.ts";
import { parseSshCertificate } from "../../core/certs/ssh-cert.ts";
import { formatSshPublicKey, generateSshKeyPair } from "../../core/certs/ssh-keys.ts";
import { systemClock } from "../../core/clock.ts";
import { keyMaterialFrom } from "./keys.ts";

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

describe("keyMaterialFrom", () => {
  it("signs with the user CA and publishes only public material", async () => {
    const dir = await mkdtemp(join(tmpdir(), "svc-auth-keys-"));
    dirs.push(dir);
    const cas = await CertificateAuthorities.loadOrCreate(new FileCaKeyStore(dir), {
      clusterName: "c1",
      trustDomain: "c1.test",
      clock: systemClock,
    });
    const km = keyMaterialFrom(cas);
    const pub = await km.publicKeys();
    expect(pub.user_ca_ssh_public_keys).toEqual([cas.sshUserCaPublicKey]);
    expect(pub.host_ca_pems?.[0]).toContain("BEGIN CERTIFICATE");
    expect(pub.trust_domain).toBe("c1.test");
    expect(JSON.parse(pub.spiffe_jwks_json ?? "").keys.length).toBeGreaterThan(0);
    const all = JSON.stringify(pub);
    expect(all).not.toMatch(/PRIVATE KEY|"d":/);

    const subject = generateSshKeyPair("ed25519");
    const cert = km.userCertSigner.sign({
      type: "user",
      publicKey: subject.publicKey,
      keyId: "k",
      principals: ["p"],
      validAfter: new Date(Date.now() - 1000),
      validBefore: new Date(Date.now() + 60_000),
    });
    const parsed = parseSshCertificate(cert.line);
    expect(formatSshPublicKey(parsed.signatureKey)).toBe(
      cas.sshUserCaPublicKey.split(" ").slice(0, 2).join(" "),
    );
  });
});
