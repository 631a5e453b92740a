import { X509Certificate } from "node:crypto";
import { mkdir, mkdtemp, rm, unlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CertificateAuthorities } from "../../core/ca/authorities.ts";
import { FileCaKeyStore } from "../../core/ca/key-store.ts";
import { parseCertificatePem } from "../../core/certs/x509.ts";
import { systemClock } from "../../core/clock.ts";
import { type LoadedIdentity, readIdentityFolder, watchIdentityFolder } from "./identity-folder.ts";
import { issueProxyIdentity, PROXY_IDENTITY_FILES, type ProxyIdentity } from "./proxy-identity.ts";

describe("proxy identity: issued by the host CA, read from a mounted folder", () => {
  let dir: string;
  let cas: CertificateAuthorities;
  const write = async (id: ProxyIdentity) => {
    for (const [field, file] of Object.entries(PROXY_IDENTITY_FILES)) {
      await writeFile(join(dir, "id", file), id[field as keyof ProxyIdentity]);
    }
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "svc-identity-"));
    cas = await CertificateAuthorities.loadOrCreate(new FileCaKeyStore(join(dir, "ca")), {
      clusterName: "c1",
      trustDomain: "c1",
      clock: systemClock,
    });
    await mkdir(join(dir, "id"));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("issues a server certificate for the names and a svc://proxy/<name> client certificate", async () => {
    const id = await issueProxyIdentity(cas, {
      names: ["proxy.example.com", "10.0.0.7"],
      clientName: "c1",
      ttlSeconds: 600,
      clock: systemClock,
    });
    const server = parseCertificatePem(id.certPem);
    const client = parseCertificatePem(id.clientCertPem);
    const span = (c: typeof server) => c.notAfter.getTime() - c.notBefore.getTime();
    expect(span(server)).toBeLessThanOrEqual(600_000 + 5 * 60_000);
    expect(new X509Certificate(id.certPem).subjectAltName).toMatch(
      /DNS:proxy\.example\.com.*IP Address:10\.0\.0\.7/,
    );
    expect(new X509Certificate(id.clientCertPem).subjectAltName).toBe("URI:svc://proxy/c1");
    expect(new X509Certificate(id.clientCertPem).checkIssued(new X509Certificate(cas.hostCa.certPem))).toBe(
      true,
    );
    expect(span(client)).toBeGreaterThan(0);
    expect(id.caPem).toBe(cas.hostCa.certPem);
  });

  it("reads a complete folder; refuses missing files and a certificate with another key", async () => {
    const a = await issueProxyIdentity(cas, {
      names: ["p"],
      clientName: "c1",
      ttlSeconds: 600,
      clock: systemClock,
    });
    const b = await issueProxyIdentity(cas, {
      names: ["p"],
      clientName: "c1",
      ttlSeconds: 600,
      clock: systemClock,
    });
    await write(a);
    const loaded = await readIdentityFolder(join(dir, "id"));
    expect(loaded.identity.certPem).toBe(a.certPem);
    // Half of an update: a's certificate with b's key.
    await writeFile(join(dir, "id", PROXY_IDENTITY_FILES.keyPem), b.keyPem);
    await expect(readIdentityFolder(join(dir, "id"))).rejects.toThrow(/do not hold certificates and keys/);
    await unlink(join(dir, "id", PROXY_IDENTITY_FILES.caPem));
    await expect(readIdentityFolder(join(dir, "id"))).rejects.toThrow(/ca\.crt: ENOENT/);
  });

  it("the watcher reports a new complete identity once, and nothing for a broken one", async () => {
    const a = await issueProxyIdentity(cas, {
      names: ["p"],
      clientName: "c1",
      ttlSeconds: 600,
      clock: systemClock,
    });
    await write(a);
    const first = await readIdentityFolder(join(dir, "id"));
    const seen: LoadedIdentity[] = [];
    const stop = watchIdentityFolder(join(dir, "id"), first.digest, (l) => seen.push(l), { intervalMs: 50 });
    try {
      await new Promise((r) => setTimeout(r, 200));
      expect(seen).toHaveLength(0);
      const b = await issueProxyIdentity(cas, {
        names: ["p"],
        clientName: "c1",
        ttlSeconds: 600,
        clock: systemClock,
      });
      await writeFile(join(dir, "id", PROXY_IDENTITY_FILES.certPem), b.certPem); // key still a's: refused
      await new Promise((r) => setTimeout(r, 200));
      expect(seen).toHaveLength(0);
      await write(b);
      const end = Date.now() + 5_000;
      while (seen.length === 0 && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
      expect(seen).toHaveLength(1);
      expect(seen[0]?.identity.certPem).toBe(b.certPem);
    } finally {
      stop();
    }
  });
});
