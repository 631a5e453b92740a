import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { SecureContext } from "node:tls";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createRootCa,
  generateEcdsaP256,
  issueTlsServerCert,
  privateKeyToPem,
} from "../../core/certs/x509.ts";
import { systemClock } from "../../core/clock.ts";
import { PublicTls } from "./public-tls.ts";

describe("PublicTls.sniCallback", () => {
  let dir = "";
  let tls: PublicTls;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "svc-public-tls-unit-"));
    const ca = generateEcdsaP256();
    const caPem = await createRootCa({ privateKey: ca.privateKey, commonName: "CA", clock: systemClock });
    const key = generateEcdsaP256();
    const cert = await issueTlsServerCert(
      { certPem: caPem, privateKey: ca.privateKey },
      {
        publicKey: key.publicKey,
        commonName: "wild",
        dnsNames: ["*.example.test", "svc.other.test"],
        clock: systemClock,
      },
    );
    await writeFile(join(dir, "tls.crt"), cert);
    await writeFile(join(dir, "tls.key"), privateKeyToPem(key.privateKey));
    tls = await PublicTls.start(
      { cert_file: join(dir, "tls.crt"), key_file: join(dir, "tls.key") },
      { intervalMs: 60_000 },
    );
  });

  afterAll(async () => {
    tls?.close();
    await rm(dir, { recursive: true, force: true });
  });

  const pick = (name: string) =>
    new Promise<SecureContext | undefined>((resolve, reject) =>
      tls.sniCallback(name, (err, ctx) => (err ? reject(err) : resolve(ctx))),
    );

  it.each([
    ["svc.example.test", true],
    ["SVC.Example.Test", true],
    ["svc.other.test", true],
    ["a.b.example.test", false], // a wildcard is one label
    ["example.test", false],
    ["svc-proxy.svc-system.svc", false],
    ["", false], // no SNI
  ])("%s → public certificate: %s", async (name, publicCert) => {
    expect((await pick(name)) !== undefined).toBe(publicCert);
  });
});
