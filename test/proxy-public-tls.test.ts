// `proxy.public_tls`: `svcd proxy` (the real role, with a real auth behind it) serves a
// browser-trusted certificate from another CA (as cert-manager would put it in a Secret) to
// clients asking for the public name, and the auth-issued identity to in-cluster names and
// clients without SNI. The files appear after start and are renewed in place; a broken update
// (key of another certificate) is never taken. Clients are plain node:https with SNI. The chart's
// `helm test` script runs against the same proxy.
import { execFile } from "node:child_process";
import { X509Certificate } from "node:crypto";
import { mkdir, mkdtemp, rename, rm, writeFile } from "node:fs/promises";
import { request } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TLSSocket } from "node:tls";
import { promisify } from "node:util";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createRootCa,
  generateEcdsaP256,
  issueTlsClientCert,
  issueTlsServerCert,
  privateKeyToPem,
  serviceIdentityUri,
  type X509Issuer,
} from "../core/certs/x509.ts";
import { systemClock } from "../core/clock.ts";
import { checkConfig } from "../server/config.ts";
import { readIdentityFolder } from "../server/roles/identity-folder.ts";
import { type RunningProxy, startProxy } from "../server/roles/proxy.ts";
import { PUBLIC_TLS_POLL_MS } from "../server/roles/public-tls.ts";
import { ci, podSpecs, render } from "./chart-helm.ts";
import { type AuthSide, startAuthSide } from "./proxy-fixture.ts";

const run = promisify(execFile);
const PUBLIC = "svc.example.test";
const IN_CLUSTER = "svc-proxy.svc-system.svc";
const clock = systemClock;

interface Seen {
  status: number;
  /** Issuer CN and serial of the certificate the server presented. */
  issuer: string;
  serial: string;
}

/** GET /v1/webapi/ping at 127.0.0.1 with the given SNI (none for ""), trusting only `ca`. */
function ping(port: number, servername: string, ca: string | string[]): Promise<Seen> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: "127.0.0.1",
        port,
        path: "/v1/webapi/ping",
        ca,
        // Node sends no SNI for an IP; an explicit servername is sent and checked against the cert.
        ...(servername ? { servername } : { checkServerIdentity: () => undefined }),
        agent: false,
      },
      (res) => {
        const cert = (res.socket as TLSSocket).getPeerX509Certificate() as X509Certificate;
        res.resume();
        res.on("end", () =>
          resolve({ status: res.statusCode ?? 0, issuer: cert.issuer, serial: cert.serialNumber }),
        );
      },
    );
    req.on("error", reject);
    req.end();
  });
}

async function leaf(ca: X509Issuer, dnsNames: string[]) {
  const key = generateEcdsaP256();
  const certPem = await issueTlsServerCert(ca, {
    publicKey: key.publicKey,
    commonName: dnsNames[0] ?? "x",
    dnsNames,
    clock,
  });
  return { certPem, keyPem: privateKeyToPem(key.privateKey) };
}

/** Writes both files the way the kubelet swaps a Secret: a new folder, then one rename. */
async function swapIn(dir: string, files: Record<string, string>): Promise<void> {
  const next = `${dir}.next`;
  await mkdir(next, { recursive: true });
  for (const [name, text] of Object.entries(files)) await writeFile(join(next, name), text);
  await rm(dir, { recursive: true, force: true });
  await rename(next, dir);
}

async function eventually(check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check().catch(() => false))) {
    if (Date.now() > until) throw new Error(`not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe("svcd proxy with proxy.public_tls", () => {
  let dir = "";
  let authSide: AuthSide;
  let proxy: RunningProxy;
  let publicCa: X509Issuer;
  let publicCaPem = "";
  let port = 0;
  const logs: string[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "svc-public-tls-"));
    authSide = await startAuthSide();
    // The identity auth would write into the Secret: in-cluster names and the public host.
    const id = await leaf(authSide.cas.hostCa, [IN_CLUSTER, PUBLIC, "localhost"]);
    const clientKey = generateEcdsaP256();
    const clientCertPem = await issueTlsClientCert(authSide.cas.hostCa, {
      publicKey: clientKey.publicKey,
      commonName: "proxy",
      uri: serviceIdentityUri("proxy", "proxy-test"),
      clock,
    });
    await swapIn(join(dir, "identity"), {
      "tls.crt": id.certPem,
      "tls.key": id.keyPem,
      "client.crt": clientCertPem,
      "client.key": privateKeyToPem(clientKey.privateKey),
      "ca.crt": authSide.hostCaPem,
    });
    // Another CA, as a public ACME CA would be.
    const caKey = generateEcdsaP256();
    publicCaPem = await createRootCa({ privateKey: caKey.privateKey, commonName: "Public Test CA", clock });
    publicCa = { certPem: publicCaPem, privateKey: caKey.privateKey };
    await mkdir(join(dir, "manifests"));

    const config = checkConfig({
      version: 1,
      cluster_name: "proxy-test",
      auth: { listen_addr: "127.0.0.1:1" },
      proxy: {
        listen_addr: "127.0.0.1:0",
        public_addr: `${PUBLIC}:443`,
        oidc_issuer_url: `https://${PUBLIC}`,
        auth_addr: authSide.auth.address,
        identity_dir: join(dir, "identity"),
        // Not there yet: cert-manager has not issued it when the Pod starts.
        public_tls: { cert_file: join(dir, "public", "tls.crt"), key_file: join(dir, "public", "tls.key") },
      },
      client_tools: { min_version: "0.1.0", recommended_version: "0.1.0" },
      backend: { type: "sqlite", path: join(dir, "unused.db") },
      source: { type: "folder", path: join(dir, "manifests") },
      ca_store: { type: "files", path: join(dir, "ca") },
    });
    const logger = pino(
      { level: "info" },
      {
        write: (line: string) => {
          logs.push(line);
        },
      },
    );
    proxy = await startProxy(config, { logger });
    port = Number(new URL(proxy.url).port);
  });

  afterAll(async () => {
    await proxy?.close();
    await authSide?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("serves the identity for every name while the public certificate is missing", async () => {
    const pub = await ping(port, PUBLIC, authSide.hostCaPem);
    expect(pub).toMatchObject({ status: 200, issuer: expect.stringContaining("host CA") });
    expect(logs.join("\n")).toMatch(/public TLS certificate unusable/);
  });

  it("serves the public certificate for the public name, the identity for in-cluster names and no SNI", async () => {
    const first = await leaf(publicCa, [PUBLIC]);
    await swapIn(join(dir, "public"), { "tls.crt": first.certPem, "tls.key": first.keyPem });
    await eventually(
      async () => (await ping(port, PUBLIC, [publicCaPem, authSide.hostCaPem])).issuer.includes("Public"),
      PUBLIC_TLS_POLL_MS * 3,
    );
    // A browser trusting only the public CA gets through on the public name...
    const pub = await ping(port, PUBLIC, publicCaPem);
    expect(pub).toMatchObject({ status: 200, serial: new X509Certificate(first.certPem).serialNumber });
    // ...in-cluster clients trusting only the host CA keep the auth-issued identity.
    const inCluster = await ping(port, IN_CLUSTER, authSide.hostCaPem);
    expect(inCluster).toMatchObject({ status: 200, issuer: expect.stringContaining("host CA") });
    const noSni = await ping(port, "", authSide.hostCaPem);
    expect(noSni).toMatchObject({ status: 200, issuer: expect.stringContaining("host CA") });
    // The in-cluster name never gets the public certificate (it does not hold that name).
    await expect(ping(port, IN_CLUSTER, publicCaPem)).rejects.toThrow();
    expect(logs.join("\n")).toMatch(/public TLS certificate in service/);
  });

  it("takes a renewal without a restart and refuses a certificate that does not match its key", async () => {
    const renewed = await leaf(publicCa, [PUBLIC]);
    const renewedSerial = new X509Certificate(renewed.certPem).serialNumber;
    await swapIn(join(dir, "public"), { "tls.crt": renewed.certPem, "tls.key": renewed.keyPem });
    await eventually(
      async () => (await ping(port, PUBLIC, publicCaPem)).serial === renewedSerial,
      PUBLIC_TLS_POLL_MS * 3,
    );
    // Half an update: a new certificate with the old key. The renewed pair stays in service.
    const other = await leaf(publicCa, [PUBLIC]);
    const before = logs.length;
    await swapIn(join(dir, "public"), { "tls.crt": other.certPem, "tls.key": renewed.keyPem });
    await eventually(
      async () => logs.slice(before).some((l) => l.includes("public TLS certificate unusable")),
      PUBLIC_TLS_POLL_MS * 3,
    );
    expect((await ping(port, PUBLIC, publicCaPem)).serial).toBe(renewedSerial);
    // No key material in what was logged.
    expect(logs.join("\n")).not.toContain("PRIVATE KEY");
  });

  it("keeps choosing by SNI after auth renews the identity (setSecureContext replaces only the default)", async () => {
    const id = await leaf(authSide.cas.hostCa, [IN_CLUSTER, PUBLIC, "localhost"]);
    const idSerial = new X509Certificate(id.certPem).serialNumber;
    const publicSerial = (await ping(port, PUBLIC, publicCaPem)).serial;
    const current = (await readIdentityFolder(join(dir, "identity"))).identity;
    await swapIn(join(dir, "identity"), {
      "tls.crt": id.certPem,
      "tls.key": id.keyPem,
      "client.crt": current.clientCertPem,
      "client.key": current.clientKeyPem,
      "ca.crt": current.caPem,
    });
    await eventually(
      async () => (await ping(port, IN_CLUSTER, authSide.hostCaPem)).serial === idSerial,
      10_000,
    );
    expect((await ping(port, PUBLIC, publicCaPem)).serial).toBe(publicSerial);
  });

  it("the chart's `helm test` script passes against this proxy, trusting the identity's CA", async () => {
    const [pod] = (await render(["-f", ci("default")])).filter((o) => o.kind === "Pod");
    const c = pod ? podSpecs([pod])[0]?.spec.containers[0] : undefined;
    const script = c?.command?.[2] ?? "";
    expect(c?.command?.slice(0, 2)).toEqual(["node", "-e"]);
    // The CA file the Pod mounts, and the Service URL with this proxy's port (localhost resolves).
    const caFile = join(dir, "identity", "ca.crt");
    const ok = await run(process.execPath, ["-e", script.replace("/var/run/svc/ca/ca.crt", caFile)], {
      env: { ...process.env, PING_URL: `https://localhost:${port}/v1/webapi/ping` },
    });
    expect(ok.stdout).toMatch(/GET https:\/\/localhost:\d+\/v1\/webapi\/ping: 200 \{/);
    // A CA that did not issue the proxy's certificate fails the test Pod.
    await writeFile(join(dir, "other-ca.pem"), publicCaPem);
    const bad = run(
      process.execPath,
      ["-e", script.replace("/var/run/svc/ca/ca.crt", join(dir, "other-ca.pem"))],
      {
        env: { ...process.env, PING_URL: `https://localhost:${port}/v1/webapi/ping` },
      },
    );
    await expect(bad).rejects.toMatchObject({ code: 1 });
  });
});
