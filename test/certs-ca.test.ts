// CA key store and the cluster's authorities: created once, never overwritten, file modes, public
// material, JWT-SVIDs and app JWTs verifiable with the right (and only the right) key set.
import { mkdtemp, readdir, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLocalJWKSet, type JSONWebKeySet, jwtVerify } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CA_NAMES, CertificateAuthorities } from "../core/ca/authorities.ts";
import { FileCaKeyStore } from "../core/ca/key-store.ts";
import { verifySshCertificate } from "../core/certs/ssh-cert.ts";
import { generateSshKeyPair } from "../core/certs/ssh-keys.ts";
import { generateEcdsaP256, issueSpiffeSvid, pemToDers, verifySpiffeSvid } from "../core/certs/x509.ts";
import { ManualClock } from "../core/clock.ts";
import { BadParameterError } from "../core/errors.ts";

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "svc-certs-ca-"));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

const opts = (clock = new ManualClock(Date.UTC(2026, 5, 1))) => ({
  clusterName: "test.example",
  trustDomain: "test.example",
  clock,
});

describe("FileCaKeyStore", () => {
  it("creates once with 0700 folder and 0600 files, and never overwrites, even under a race", async () => {
    const dir = join(root, "store1", "ca");
    const store = new FileCaKeyStore(dir);
    expect(await store.get("ssh-user-ca")).toBeUndefined();
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) => store.createOnce("ssh-user-ca", Buffer.from(`v${i}`))),
    );
    expect(results.filter((r) => r === "created")).toHaveLength(1);
    const winner = Buffer.from((await store.get("ssh-user-ca")) ?? new Uint8Array()).toString();
    expect(winner).toMatch(/^v\d+$/);
    expect(await store.createOnce("ssh-user-ca", Buffer.from("other"))).toBe("exists");
    expect(Buffer.from((await store.get("ssh-user-ca")) ?? new Uint8Array()).toString()).toBe(winner);
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
    expect((await stat(join(dir, "ssh-user-ca.json"))).mode & 0o777).toBe(0o600);
    expect(await readdir(dir)).toEqual(["ssh-user-ca.json"]); // no temp files left behind
    await expect(store.get("../etc/passwd")).rejects.toThrow(BadParameterError);
  });
});

describe("CertificateAuthorities", () => {
  it("loads the same CAs on a second start, and concurrent starts agree", async () => {
    const store = new FileCaKeyStore(join(root, "store2"));
    const [a, b] = await Promise.all([
      CertificateAuthorities.loadOrCreate(store, opts()),
      CertificateAuthorities.loadOrCreate(store, opts()),
    ]);
    const c = await CertificateAuthorities.loadOrCreate(new FileCaKeyStore(join(root, "store2")), opts());
    expect(b.publicMaterial()).toEqual(a.publicMaterial());
    expect(c.publicMaterial()).toEqual(a.publicMaterial());
    const files = (await readdir(join(root, "store2"))).sort();
    expect(files).toEqual(
      Object.values(CA_NAMES)
        .map((n) => `${n}.json`)
        .sort(),
    );
    const m = a.publicMaterial();
    expect(m.sshUserCa).toMatch(/^ssh-ed25519 \S+ test.example_user_CA$/);
    expect(m.sshHostCa).not.toBe(m.sshUserCa);
    expect(m.hostCaPem).not.toBe(m.spiffeCaPem);
    expect(JSON.stringify(m)).not.toMatch(/PRIVATE KEY|"d":/);
    expect(JSON.stringify(a)).not.toMatch(/PRIVATE/);
    // a different store is a different cluster
    const other = await CertificateAuthorities.loadOrCreate(new FileCaKeyStore(join(root, "store3")), opts());
    expect(other.publicMaterial().sshUserCa).not.toBe(m.sshUserCa);
    const raw = await readFile(join(root, "store2", "ssh-user-ca.json"), "utf8");
    expect(raw).toContain("PRIVATE KEY");
  });

  it("signs SSH certificates with the user CA, verifiable against the published user CA only", async () => {
    const clock = new ManualClock(Date.UTC(2026, 5, 1));
    const cas = await CertificateAuthorities.loadOrCreate(
      new FileCaKeyStore(join(root, "store4")),
      opts(clock),
    );
    const k = generateSshKeyPair("ed25519");
    const cert = cas.sshUserSigner.sign({
      type: "user",
      publicKey: k.publicLine,
      keyId: "user:alice",
      principals: ["root"],
      validAfter: new Date(clock.now().getTime() - 60_000),
      validBefore: new Date(clock.now().getTime() + 3600_000),
    });
    expect(
      verifySshCertificate(cert.line, { trustedCaKeys: [cas.sshUserCaPublicKey], type: "user", clock }).keyId,
    ).toBe("user:alice");
    expect(() =>
      verifySshCertificate(cert.line, { trustedCaKeys: [cas.sshHostCaPublicKey], type: "user", clock }),
    ).toThrow(/trusted CA/);
  });

  it("publishes a SPIFFE bundle and signs JWT-SVIDs and app JWTs with separate key sets", async () => {
    const clock = new ManualClock(Date.UTC(2026, 5, 1));
    const cas = await CertificateAuthorities.loadOrCreate(
      new FileCaKeyStore(join(root, "store5")),
      opts(clock),
    );
    const bundle = cas.spiffeBundle({ sequence: 7 });
    expect(bundle["spiffe_sequence"]).toBe(7);
    expect(bundle["spiffe_refresh_hint"]).toBe(300);
    const keys = bundle["keys"] as { use: string; x5c?: string[]; kid?: string }[];
    const x = keys.filter((k) => k.use === "x509-svid");
    expect(x).toHaveLength(1);
    expect(x[0]?.x5c).toEqual([(pemToDers(cas.spiffeCa.certPem)[0] as Buffer).toString("base64")]);
    expect(keys.filter((k) => k.use === "jwt-svid").map((k) => k.kid)).toEqual(
      cas.spiffeJwtKeys.map((k) => k.kid),
    );

    // X.509-SVID from the SPIFFE CA verifies against the bundle's x5c
    const wk = generateEcdsaP256();
    const svid = await issueSpiffeSvid(cas.spiffeCa, {
      publicKey: wk.publicKey,
      spiffeId: "spiffe://test.example/role/ci",
      trustDomain: cas.trustDomain,
      clock,
    });
    expect(
      (await verifySpiffeSvid(svid, [cas.spiffeCa.certPem], { clock, trustDomain: "test.example" })).path,
    ).toBe("/role/ci");

    const spiffeSet = createLocalJWKSet(cas.spiffeJwks() as unknown as JSONWebKeySet);
    const appSet = createLocalJWKSet(cas.appJwks() as unknown as JSONWebKeySet);
    const currentDate = clock.now();
    const svidJwt = await cas.signJwtSvid({
      spiffeId: "spiffe://test.example/role/ci",
      audience: "https://api.test",
    });
    const v = await jwtVerify(svidJwt, spiffeSet, { audience: "https://api.test", currentDate });
    expect(v.payload.sub).toBe("spiffe://test.example/role/ci");
    expect(v.protectedHeader.kid).toBe(cas.spiffeJwtKeys[0]?.kid);
    expect((v.payload.exp ?? 0) - (v.payload.iat ?? 0)).toBe(300);
    await expect(jwtVerify(svidJwt, appSet, { currentDate })).rejects.toThrow();
    await expect(jwtVerify(svidJwt, spiffeSet, { audience: "other", currentDate })).rejects.toThrow();
    await expect(
      jwtVerify(svidJwt, spiffeSet, { currentDate: new Date(currentDate.getTime() + 301_000) }),
    ).rejects.toThrow(/exp/);
    await expect(cas.signJwtSvid({ spiffeId: "spiffe://evil.example/x", audience: "a" })).rejects.toThrow(
      BadParameterError,
    );

    const appJwt = await cas.signAppJwt({
      username: "alice",
      roles: ["dev"],
      traits: { logins: ["alice"] },
      audience: "https://app.test",
    });
    const a = await jwtVerify(appJwt, appSet, {
      audience: "https://app.test",
      issuer: "test.example",
      currentDate,
    });
    expect(a.payload["username"]).toBe("alice");
    expect(a.payload["roles"]).toEqual(["dev"]);
    await expect(jwtVerify(appJwt, spiffeSet, { currentDate })).rejects.toThrow();
  });
});
