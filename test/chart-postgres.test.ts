// The production path as the chart renders it, run by svcd on the apiserver harness: the
// PostgreSQL URL from the database Secret mounted as a file (backend.url_file), two auth replicas,
// the proxy with the identity Secret auth writes and a browser-trusted certificate from
// tls.existingSecret (proxy.public_tls), each mounted the way the kubelet mounts a Secret (a
// folder of files, replaced by a symlink swap). The operator runs with the Deployment's
// arguments, auth and proxy with the ConfigMap's config, as the chart's ServiceAccounts.
import type { X509Certificate } from "node:crypto";
import { mkdir, mkdtemp, rename, rm, symlink, writeFile } from "node:fs/promises";
import { request } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TLSSocket } from "node:tls";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse, stringify } from "yaml";
import { createRootCa, generateEcdsaP256, issueTlsServerCert, privateKeyToPem } from "../core/certs/x509.ts";
import { systemClock } from "../core/clock.ts";
import { find, type K8sObject, render } from "./chart-helm.ts";
import { applyChart, httpStatus, operatorArgs, Svcd, until } from "./chart-svcd.ts";
import { type KubeCluster, kubectl, startKube } from "./harness/kube.ts";
import { freePort } from "./harness/ports.ts";
import { dropSchema, testPostgresUrl, uniqueSchemaName } from "./harness/postgres.ts";

const NS = "svc-system";
const PUBLIC = "svc.example.com";
const IN_CLUSTER = `svc-proxy.${NS}.svc`;

/** GET /v1/webapi/ping with an SNI, trusting `ca`; the issuer of the certificate presented. */
function ping(port: number, servername: string, ca: string): Promise<{ status: number; issuer: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: "127.0.0.1", port, path: "/v1/webapi/ping", ca, servername, agent: false },
      (res) => {
        const cert = (res.socket as TLSSocket).getPeerX509Certificate() as X509Certificate;
        res.resume();
        res.on("end", () => resolve({ status: res.statusCode ?? 0, issuer: cert.issuer }));
      },
    );
    req.on("error", reject);
    req.end();
  });
}

describe("postgres mode, the chart's config run by svcd", () => {
  let kube: KubeCluster;
  let dir = "";
  let svcd: Svcd;
  let objects: K8sObject[] = [];
  const pgUrl = testPostgresUrl();
  const schema = uniqueSchemaName("chart");
  let publicCaPem = "";
  const ports = { auth: [0, 0], authDiag: [0, 0], proxy: 0, proxyDiag: 0, operatorDiag: 0 };

  const admin = async (args: string[]) => {
    const r = await kubectl(kube.adminKubeconfig, args);
    if (r.code !== 0) throw new Error(r.stderr);
    return r.stdout;
  };

  /** A Secret's keys as files, swapped in like the kubelet does (..data symlink). */
  async function mountSecret(name: string, into: string, items?: Record<string, string>): Promise<void> {
    const secret = JSON.parse(await admin(["-n", NS, "get", "secret", name, "-o", "json"])) as {
      data: Record<string, string>;
    };
    const version = join(into, `..${Date.now()}`);
    await mkdir(version, { recursive: true });
    const files = items ?? Object.fromEntries(Object.keys(secret.data).map((k) => [k, k]));
    for (const [key, path] of Object.entries(files)) {
      await writeFile(join(version, path), Buffer.from(secret.data[key] ?? "", "base64"), { mode: 0o440 });
    }
    await symlink(version, join(into, "..data_tmp"));
    await rename(join(into, "..data_tmp"), join(into, "..data"));
    for (const path of Object.values(files))
      await symlink(join("..data", path), join(into, path)).catch(() => {});
  }

  beforeAll(async () => {
    kube = await startKube();
    dir = await mkdtemp(join(tmpdir(), "svc-chart-pg-"));
    svcd = new Svcd(dir);
    objects = await render(
      [
        "--set",
        "database.postgres.existingSecret=svc-postgres",
        "--set",
        `database.postgres.schema=${schema}`,
        "--set",
        "tls.existingSecret=svc-public-tls",
        "--set",
        `proxy.publicAddr=${PUBLIC}:443`,
      ],
      NS,
    );
    await applyChart(kube, NS, objects);
    // The Secrets an installer creates (docs/install-kubernetes.md §1, §2).
    await admin(["-n", NS, "create", "secret", "generic", "svc-postgres", `--from-literal=url=${pgUrl}`]);
    const ca = generateEcdsaP256();
    publicCaPem = await createRootCa({
      privateKey: ca.privateKey,
      commonName: "Public CA",
      clock: systemClock,
    });
    const key = generateEcdsaP256();
    const cert = await issueTlsServerCert(
      { certPem: publicCaPem, privateKey: ca.privateKey },
      { publicKey: key.publicKey, commonName: PUBLIC, dnsNames: [PUBLIC], clock: systemClock },
    );
    await writeFile(join(dir, "tls.crt"), cert);
    await writeFile(join(dir, "tls.key"), privateKeyToPem(key.privateKey));
    await admin([
      "-n",
      NS,
      "create",
      "secret",
      "tls",
      "svc-public-tls",
      `--cert=${join(dir, "tls.crt")}`,
      `--key=${join(dir, "tls.key")}`,
    ]);

    for (const k of ["proxy", "proxyDiag", "operatorDiag"] as const) ports[k] = await freePort();
    ports.auth = [await freePort(), await freePort()];
    ports.authDiag = [await freePort(), await freePort()];
    svcd.launch("operator", [
      ...operatorArgs(objects, NS, ports.operatorDiag, ports.auth[0] ?? 0),
      `--kubeconfig=${await kube.serviceAccountKubeconfig(NS, "svc-operator")}`,
    ]);
  }, 240_000);

  afterAll(async () => {
    await svcd?.stopAll();
    await kube?.stop();
    await dropSchema(pgUrl, schema).catch(() => undefined);
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const config = () => parse(find(objects, "ConfigMap", "svc-config").data?.["svc.yaml"] ?? "");

  it("two auth replicas read the PostgreSQL URL from the mounted Secret file and become ready", async () => {
    // The auth Pod's volume: only the URL key, as the file the config names.
    const c = config();
    expect(c.backend).toEqual({ type: "postgres", url_file: "/var/run/svc/postgres/url", schema });
    const mount = join(dir, "postgres");
    await mkdir(mount);
    await mountSecret("svc-postgres", mount, { url: "url" });
    c.backend.url_file = join(mount, "url");
    c.source.kubeconfig = await kube.serviceAccountKubeconfig(NS, "svc-auth");
    for (const i of [0, 1]) {
      c.auth.listen_addr = `127.0.0.1:${ports.auth[i]}`;
      c.auth.diagnostics_addr = `127.0.0.1:${ports.authDiag[i]}`;
      await writeFile(join(dir, `auth-${i}.yaml`), stringify(c));
      svcd.launch(`auth-${i}`, ["auth", "--config", join(dir, `auth-${i}.yaml`)]);
    }
    await svcd.ready("auth-0 /readyz", ports.authDiag[0] ?? 0);
    await svcd.ready("auth-1 /readyz", ports.authDiag[1] ?? 0);
    await svcd.ready("operator /readyz", ports.operatorDiag);
    // The URL (with its password) never reaches a log.
    expect(svcd.logText()).not.toContain(pgUrl);
  }, 300_000);

  it("the proxy serves the public certificate for the public name and auth's identity in the cluster", async () => {
    const c = config();
    expect(c.proxy.public_tls).toEqual({
      cert_file: "/var/run/svc/public-tls/tls.crt",
      key_file: "/var/run/svc/public-tls/tls.key",
    });
    // The two Secret volumes of the proxy Pod.
    const identity = join(dir, "identity");
    const publicTls = join(dir, "public-tls");
    await mkdir(identity);
    await mkdir(publicTls);
    await until(
      "auth writes the proxy identity",
      async () =>
        (await admin(["-n", NS, "get", "secret", "svc-proxy-identity", "-o", "name"])) ? true : undefined,
      60_000,
    );
    await mountSecret("svc-proxy-identity", identity);
    await mountSecret("svc-public-tls", publicTls, { "tls.crt": "tls.crt", "tls.key": "tls.key" });
    c.proxy.listen_addr = `127.0.0.1:${ports.proxy}`;
    c.proxy.diagnostics_addr = `127.0.0.1:${ports.proxyDiag}`;
    c.proxy.auth_addr = `127.0.0.1:${ports.auth[1]}`;
    // The Service name auth's certificate carries (the Pod dials it by that name).
    c.proxy.auth_server_name = `svc-auth.${NS}.svc`;
    c.proxy.identity_dir = identity;
    c.proxy.public_tls = { cert_file: join(publicTls, "tls.crt"), key_file: join(publicTls, "tls.key") };
    c.source.kubeconfig = await kube.serviceAccountKubeconfig(NS, "svc-proxy");
    await writeFile(join(dir, "proxy.yaml"), stringify(c));
    svcd.launch("proxy", ["proxy", "--config", join(dir, "proxy.yaml")]);
    await svcd.ready("proxy /readyz", ports.proxyDiag);
    const hostCa = Buffer.from(
      await admin(["-n", NS, "get", "secret", "svc-proxy-identity", "-o", "jsonpath={.data.ca\\.crt}"]),
      "base64",
    ).toString();
    expect(await ping(ports.proxy, PUBLIC, publicCaPem)).toMatchObject({
      status: 200,
      issuer: "CN=Public CA",
    });
    const inCluster = await ping(ports.proxy, IN_CLUSTER, hostCa);
    expect(inCluster.status).toBe(200);
    expect(inCluster.issuer).toContain("host CA");
    expect(await httpStatus(ports.proxyDiag, "/metrics")).toBe(200);
  }, 300_000);
});
