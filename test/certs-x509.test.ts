// X.509 issuing: a real TLS 1.3 handshake on 127.0.0.1 with our server and client certificates,
// and verification of leaves and SPIFFE X.509-SVIDs against the right CA.
import { X509Certificate } from "node:crypto";
import { connect, createServer, type TLSSocket } from "node:tls";
import { describe, expect, it } from "vitest";
import {
  agentIdentityUri,
  createRootCa,
  generateEcdsaP256,
  issueSpiffeSvid,
  issueTlsClientCert,
  issueTlsServerCert,
  privateKeyToPem,
  verifySpiffeSvid,
  verifyX509Leaf,
  type X509Issuer,
} from "../core/certs/x509.ts";
import { ManualClock, systemClock } from "../core/clock.ts";
import { BadParameterError, NotAuthenticatedError } from "../core/errors.ts";

async function newCa(cn: string, clock = systemClock): Promise<X509Issuer> {
  const { privateKey } = generateEcdsaP256();
  return { privateKey, certPem: await createRootCa({ privateKey, commonName: cn, clock }) };
}

describe("TLS 1.3 with host CA certificates", () => {
  it("node's TLS accepts our server and client certificates, verified against the host CA", async () => {
    const ca = await newCa("svc host CA");
    const server = generateEcdsaP256();
    const client = generateEcdsaP256();
    const serverPem = await issueTlsServerCert(ca, {
      publicKey: server.publicKey,
      commonName: "auth",
      dnsNames: ["auth.svc.local", "localhost"],
      ips: ["127.0.0.1"],
      clock: systemClock,
    });
    const clientPem = await issueTlsClientCert(ca, {
      publicKey: client.publicKey,
      commonName: "agent-42",
      uri: agentIdentityUri("agent-42"),
      clock: systemClock,
    });
    const srv = createServer({
      key: privateKeyToPem(server.privateKey),
      cert: serverPem,
      ca: [ca.certPem],
      requestCert: true,
      rejectUnauthorized: true,
      minVersion: "TLSv1.3",
    });
    const seen = new Promise<{ uri: string | undefined; cn: string | undefined; authorized: boolean }>(
      (resolve) => {
        srv.on("secureConnection", (s: TLSSocket) => {
          const peer = s.getPeerCertificate();
          resolve({ uri: peer.subjectaltname, cn: String(peer.subject?.CN), authorized: s.authorized });
          s.end("ok");
        });
      },
    );
    await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
    try {
      const port = (srv.address() as { port: number }).port;
      const got = await new Promise<{ protocol: string | null; data: string; authorized: boolean }>(
        (resolve, reject) => {
          const sock = connect({
            host: "127.0.0.1",
            port,
            ca: [ca.certPem],
            key: privateKeyToPem(client.privateKey),
            cert: clientPem,
            minVersion: "TLSv1.3",
          });
          let data = "";
          sock.setEncoding("utf8");
          sock.on("data", (d: string) => {
            data += d;
          });
          sock.on("error", reject);
          sock.on("end", () => resolve({ protocol: sock.getProtocol(), data, authorized: sock.authorized }));
        },
      );
      expect(got).toEqual({ protocol: "TLSv1.3", data: "ok", authorized: true });
      const peer = await seen;
      expect(peer.authorized).toBe(true);
      expect(peer.cn).toBe("agent-42");
      expect(peer.uri).toBe("URI:svc://agent/agent-42");
    } finally {
      await new Promise<void>((r) => srv.close(() => r()));
    }
  });

  it("a client certificate from another CA is refused by the handshake", async () => {
    const ca = await newCa("svc host CA");
    const other = await newCa("other CA");
    const server = generateEcdsaP256();
    const client = generateEcdsaP256();
    const srv = createServer({
      key: privateKeyToPem(server.privateKey),
      cert: await issueTlsServerCert(ca, {
        publicKey: server.publicKey,
        commonName: "auth",
        ips: ["127.0.0.1"],
        clock: systemClock,
      }),
      ca: [ca.certPem],
      requestCert: true,
      rejectUnauthorized: true,
      minVersion: "TLSv1.3",
    });
    srv.on("secureConnection", (s: TLSSocket) => s.end("ok"));
    srv.on("tlsClientError", () => {});
    await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
    try {
      const port = (srv.address() as { port: number }).port;
      const foreignPem = await issueTlsClientCert(other, {
        publicKey: client.publicKey,
        commonName: "agent-x",
        uri: "svc://agent/x",
        clock: systemClock,
      });
      const outcome = await new Promise<string>((resolve) => {
        const sock = connect({
          host: "127.0.0.1",
          port,
          ca: [ca.certPem],
          key: privateKeyToPem(client.privateKey),
          minVersion: "TLSv1.3",
          cert: foreignPem,
        });
        let data = "";
        sock.setEncoding("utf8");
        sock.on("data", (d: string) => {
          data += d;
        });
        sock.on("error", (e: Error) => resolve(`error: ${e.message}`));
        sock.on("close", () => resolve(data === "ok" ? "accepted" : "closed"));
      });
      expect(outcome).not.toBe("accepted");
    } finally {
      await new Promise<void>((r) => srv.close(() => r()));
    }
  });
});

describe("verification", () => {
  it("verifies a client certificate and its EKU, and refuses other CAs and expired leaves", async () => {
    const clock = new ManualClock(Date.UTC(2026, 5, 1));
    const ca = await newCa("host", clock);
    const other = await newCa("host", clock);
    const k = generateEcdsaP256();
    const pem = await issueTlsClientCert(ca, {
      publicKey: k.publicKey,
      commonName: "bot-a",
      uri: "svc://bot/a",
      clock,
      ttlSeconds: 600,
    });
    const v = await verifyX509Leaf(pem, [other.certPem, ca.certPem], { clock, usage: "client" });
    expect(v.commonName).toBe("bot-a");
    expect(v.uris).toEqual(["svc://bot/a"]);
    expect(v.issuerPem).toBe(ca.certPem);
    await expect(verifyX509Leaf(pem, [ca.certPem], { clock, usage: "server" })).rejects.toThrow(
      NotAuthenticatedError,
    );
    await expect(verifyX509Leaf(pem, [other.certPem], { clock })).rejects.toThrow(
      /not signed by a trusted CA/,
    );
    await expect(
      verifyX509Leaf(pem, [ca.certPem], { clock: new ManualClock(Date.UTC(2026, 5, 1, 0, 11)) }),
    ).rejects.toThrow(/expired/);
    await expect(verifyX509Leaf(ca.certPem, [ca.certPem], { clock })).rejects.toThrow(/CA certificate/);
    // node's own parser agrees on the fields
    const nodeView = new X509Certificate(pem);
    expect(nodeView.checkIssued(new X509Certificate(ca.certPem))).toBe(true);
    expect(nodeView.subjectAltName).toBe("URI:svc://bot/a");
  });

  it("issues and verifies SPIFFE X.509-SVIDs with a URI SAN in the trust domain", async () => {
    const clock = new ManualClock(Date.UTC(2026, 5, 1));
    const spiffe = await newCa("spiffe", clock);
    const host = await newCa("host", clock);
    const k = generateEcdsaP256();
    const pem = await issueSpiffeSvid(spiffe, {
      publicKey: k.publicKey,
      spiffeId: "spiffe://example.test/role/deployer",
      trustDomain: "example.test",
      clock,
    });
    const v = await verifySpiffeSvid(pem, [spiffe.certPem], { clock, trustDomain: "example.test" });
    expect(v.spiffeId).toBe("spiffe://example.test/role/deployer");
    expect(v.path).toBe("/role/deployer");
    expect(v.notAfter.getTime() - clock.now().getTime()).toBe(3600_000);
    await expect(
      verifySpiffeSvid(pem, [spiffe.certPem], { clock, trustDomain: "other.test" }),
    ).rejects.toThrow(/another trust domain/);
    await expect(
      verifySpiffeSvid(pem, [host.certPem], { clock, trustDomain: "example.test" }),
    ).rejects.toThrow(NotAuthenticatedError);
    clock.advance(2 * 3600_000);
    await expect(
      verifySpiffeSvid(pem, [spiffe.certPem], { clock, trustDomain: "example.test" }),
    ).rejects.toThrow(/expired/);
    await expect(
      issueSpiffeSvid(spiffe, {
        publicKey: k.publicKey,
        spiffeId: "spiffe://example.test/../x",
        trustDomain: "example.test",
        clock,
      }),
    ).rejects.toThrow(BadParameterError);
  });
});
