// Auth's own TLS certificate renewal: the half-life decision on a ManualClock with real
// certificates from a real CA, and the swap into a live grpc-js server (a real TLS 1.3 client
// sees the new certificate on its next connection, the old connection keeps working).
import { X509Certificate } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect, type TLSSocket } from "node:tls";
import { Server } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CertificateAuthorities } from "../../core/ca/authorities.ts";
import { FileCaKeyStore } from "../../core/ca/key-store.ts";
import { TLS_SERVER_TTL_SECONDS } from "../../core/certs/x509.ts";
import { type Clock, ManualClock, systemClock } from "../../core/clock.ts";
import { authServerCredentials } from "../auth/tls.ts";
import { createLogger } from "../logger.ts";
import { issueServerIdentity, type TlsIdentity } from "../wiring.ts";
import { renewalTime, ServerCertRenewer } from "./server-cert-renewal.ts";

const logger = createLogger({ level: "silent" });
const serial = (pem: string) => new X509Certificate(pem).serialNumber;

describe("auth TLS server certificate renewal", () => {
  let dir = "";
  let cas: CertificateAuthorities;
  const clock = new ManualClock(Date.now());

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "svc-cert-renewal-"));
    cas = await CertificateAuthorities.loadOrCreate(new FileCaKeyStore(join(dir, "ca")), {
      clusterName: "renewal",
      trustDomain: "renewal",
      clock,
    });
  });

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const issue = (c: Clock = clock) =>
    issueServerIdentity(cas, { commonName: "auth", hosts: ["svc-auth"], clock: c });

  it("renews only once half the validity has passed, then waits for the new half-life", async () => {
    const first = await issue();
    const half = renewalTime(first.certPem);
    // 90 days from issue (notBefore backdated one minute): the half-life is ~45 days after issue.
    const issuedAt = clock.now().getTime();
    expect(Math.abs(half - (issuedAt + (TLS_SERVER_TTL_SECONDS * 1000) / 2))).toBeLessThan(60_000);

    const applied: TlsIdentity[] = [];
    const renewer = new ServerCertRenewer({
      current: first,
      issue: () => issue(),
      apply: (t) => applied.push(t),
      clock,
      logger,
    });
    expect(await renewer.check()).toBe("kept");
    clock.set(new Date(half - 1_000));
    expect(renewer.due()).toBe(false);
    expect(await renewer.check()).toBe("kept");
    expect(applied).toEqual([]);

    clock.set(new Date(half));
    expect(renewer.due()).toBe(true);
    expect(await renewer.check()).toBe("renewed");
    expect(applied.length).toBe(1);
    const fresh = applied[0];
    if (!fresh) throw new Error("nothing applied");
    expect(serial(fresh.certPem)).not.toBe(serial(first.certPem));
    // The next renewal is half of the new certificate's life away, not now.
    expect(renewer.renewAt).toBe(renewalTime(fresh.certPem));
    expect(renewer.renewAt - clock.now().getTime()).toBeGreaterThan(44 * 24 * 3600_000);
    expect(await renewer.check()).toBe("kept");
    expect(applied.length).toBe(1);
  });

  it("keeps the old certificate and stays due when issuing fails", async () => {
    const first = await issue();
    const applied: TlsIdentity[] = [];
    const renewer = new ServerCertRenewer({
      current: first,
      issue: () => Promise.reject(new Error("CA unavailable")),
      apply: (t) => applied.push(t),
      clock,
      logger,
    });
    clock.set(new Date(renewalTime(first.certPem) + 1));
    await expect(renewer.check()).rejects.toThrow(/CA unavailable/);
    expect(applied).toEqual([]);
    expect(renewer.due()).toBe(true);
  });

  it("swaps the certificate of a live grpc-js server: new connections get it, TLS 1.3 only", async () => {
    const first = await issue(systemClock);
    const second = await issue(systemClock);
    const clientCaPems = [cas.hostCa.certPem];
    const credentials = authServerCredentials({ ...first, clientCaPems });
    const server = new Server();
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync("127.0.0.1:0", credentials, (err, p) => (err ? reject(err) : resolve(p))),
    );
    const open = (maxVersion: "TLSv1.2" | "TLSv1.3" = "TLSv1.3") =>
      new Promise<TLSSocket>((resolve, reject) => {
        const s = connect(
          {
            host: "127.0.0.1",
            port,
            ca: cas.hostCa.certPem,
            servername: "svc-auth",
            ALPNProtocols: ["h2"],
            maxVersion,
          },
          () => resolve(s),
        );
        s.once("error", reject);
      });
    const peerSerial = (s: TLSSocket) => s.getPeerX509Certificate()?.serialNumber;
    try {
      const before = await open();
      expect(peerSerial(before)).toBe(serial(first.certPem));

      credentials.update({ ...second, clientCaPems });
      const after = await open();
      expect(peerSerial(after)).toBe(serial(second.certPem));
      expect(after.getProtocol()).toBe("TLSv1.3");
      // The version bounds survive the swap (setSecureContext rebuilds the whole context).
      await expect(open("TLSv1.2")).rejects.toThrow();
      for (const s of [before, after]) s.destroy();
    } finally {
      server.forceShutdown();
    }
  });
});
