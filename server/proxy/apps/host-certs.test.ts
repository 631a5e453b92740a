// Per-host app certificates on a real TLS server with real clients: a known app host under a
// single-label public host (`*.localhost`, which clients refuse) gets a certificate for exactly its
// name that verifies against the host CA; an unknown name gets the default; the certificate is
// re-issued at half its life and, after a reset, by the CA that signs now (rotation).
import { X509Certificate } from "node:crypto";
import type { AddressInfo } from "node:net";
import { connect, createServer, type Server } from "node:tls";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createRootCa,
  generateEcdsaP256,
  issueTlsServerCert,
  privateKeyToPem,
  type X509Issuer,
} from "../../../core/certs/x509.ts";
import { ManualClock } from "../../../core/clock.ts";
import { AppHostCerts } from "./host-certs.ts";

const clock = new ManualClock(Date.now());
let oldCa: X509Issuer;
let newCa: X509Issuer;
let signing: X509Issuer;
let issued: string[];
let certs: AppHostCerts;
let server: Server;
let defaultPem: string;

async function ca(name: string): Promise<X509Issuer> {
  const k = generateEcdsaP256();
  return {
    certPem: await createRootCa({ privateKey: k.privateKey, commonName: name, clock }),
    privateKey: k.privateKey,
  };
}

async function leaf(issuer: X509Issuer, names: string[]) {
  const k = generateEcdsaP256();
  const certPem = await issueTlsServerCert(issuer, {
    publicKey: k.publicKey,
    commonName: names[0] ?? "",
    dnsNames: names,
    clock,
  });
  return { certPem, keyPem: privateKeyToPem(k.privateKey) };
}

/**
 * The certificate presented to `servername`, and why a client would refuse it (the chain against
 * `caPem`, then the name, as node:tls checks them); no error when it verifies.
 */
function handshake(servername: string, caPem: string): Promise<{ cert: X509Certificate; error?: string }> {
  return new Promise((resolve, reject) => {
    const port = (server.address() as AddressInfo).port;
    const c = connect({ host: "127.0.0.1", port, servername, ca: caPem, rejectUnauthorized: false }, () => {
      const cert = c.getPeerX509Certificate();
      const chain = c.authorizationError;
      c.destroy();
      if (!cert) return reject(new Error("no certificate"));
      const error = chain ? String(chain) : cert.checkHost(servername) ? undefined : "name mismatch";
      resolve(error ? { cert, error } : { cert });
    });
    c.once("error", reject);
  });
}

beforeAll(async () => {
  oldCa = await ca("host ca 1");
  newCa = await ca("host ca 2");
  signing = oldCa;
  issued = [];
  certs = new AppHostCerts({
    known: (host) => host === "grafana.localhost",
    issue: async (host) => {
      issued.push(host);
      return leaf(signing, [host]);
    },
    clock,
    logger: pino({ level: "silent" }),
  });
  const fallback = await leaf(oldCa, ["localhost", "*.localhost"]);
  defaultPem = fallback.certPem;
  server = createServer(
    { cert: fallback.certPem, key: fallback.keyPem, SNICallback: certs.sniCallback },
    (s) => s.end(),
  );
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
});

afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
});

describe("AppHostCerts", () => {
  it("serves a known app host a certificate for exactly its name, verified against the host CA", async () => {
    const r = await handshake("grafana.localhost", oldCa.certPem);
    expect(r.error).toBeUndefined();
    expect(r.cert.subjectAltName).toBe("DNS:grafana.localhost");
    // the wildcard a client would get otherwise does not verify for one label under "localhost"
    expect(new X509Certificate(defaultPem).checkHost("grafana.localhost")).toBeUndefined();
    // issued once, then served from the cache (case of the name does not matter)
    const again = await handshake("GRAFANA.localhost", oldCa.certPem);
    expect(again.cert.serialNumber).toBe(r.cert.serialNumber);
    expect(issued).toEqual(["grafana.localhost"]);
  });

  it("gives an unknown label the default certificate and issues nothing", async () => {
    const r = await handshake("nosuchapp.localhost", oldCa.certPem);
    expect(r.cert.serialNumber).toBe(new X509Certificate(defaultPem).serialNumber);
    expect(issued).not.toContain("nosuchapp.localhost");
  });

  it("re-issues at half the certificate's life", async () => {
    const first = new X509Certificate(certs.certificate("grafana.localhost") ?? "");
    const half = (Date.parse(first.validTo) - Date.parse(first.validFrom)) / 2;
    clock.set(new Date(Date.parse(first.validFrom) + half - 60_000));
    await handshake("grafana.localhost", oldCa.certPem);
    const serial = () => new X509Certificate(certs.certificate("grafana.localhost") ?? "").serialNumber;
    expect(serial()).toBe(first.serialNumber);
    clock.advance(120_000);
    await handshake("grafana.localhost", oldCa.certPem);
    expect(serial()).not.toBe(first.serialNumber);
    clock.set(new Date());
  });

  it("after a host CA rotation (reset), issues by the CA that signs now", async () => {
    signing = newCa;
    certs.reset();
    const r = await handshake("grafana.localhost", newCa.certPem);
    expect(r.error).toBeUndefined();
    expect(r.cert.checkIssued(new X509Certificate(newCa.certPem))).toBe(true);
    expect((await handshake("grafana.localhost", oldCa.certPem)).error).toBeDefined();
  });
});
