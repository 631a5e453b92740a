// ProxyIdentitySecret on a real apiserver, as auth's ServiceAccount with the chart's RBAC: created
// once, kept while more than half its lifetime remains, renewed after, renewed when the names
// change, a foreign Secret of that name refused, and two writers racing end with one valid Secret.
import { execFile } from "node:child_process";
import { createPrivateKey, createPublicKey, X509Certificate } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { CoreV1Api } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseAllDocuments, stringify } from "yaml";
import { CertificateAuthorities } from "../core/ca/authorities.ts";
import { FileCaKeyStore } from "../core/ca/key-store.ts";
import { ManualClock } from "../core/clock.ts";
import { loadKubeConfig } from "../core/sources/kube-api.ts";
import { createLogger } from "../server/logger.ts";
import { PROXY_IDENTITY_FILES, ProxyIdentitySecret } from "../server/roles/proxy-identity.ts";
import { type KubeCluster, kubectl, startKube } from "./harness/kube.ts";
import { toolPath } from "./harness/tools.ts";

const NS = "svc-identity";
const SECRET = "svc-proxy-identity";
const run = promisify(execFile);

describe("ProxyIdentitySecret (auth issues the proxy's identity into a Secret)", () => {
  let kube: KubeCluster;
  let dir: string;
  let cas: CertificateAuthorities;
  let authKubeconfig: string;
  const clock = new ManualClock(new Date());
  const logger = createLogger({ level: "silent" });
  const manager = (names: string[]) =>
    new ProxyIdentitySecret({
      kubeConfig: loadKubeConfig(authKubeconfig),
      namespace: NS,
      secretName: SECRET,
      cas,
      names,
      clientName: "c1",
      ttlMs: 3_600_000,
      clock,
      logger,
    });
  const read = async () =>
    loadKubeConfig(kube.adminKubeconfig)
      .makeApiClient(CoreV1Api)
      .readNamespacedSecret({ name: SECRET, namespace: NS });
  const serverCert = async () =>
    new X509Certificate(Buffer.from((await read()).data?.[PROXY_IDENTITY_FILES.certPem] ?? "", "base64"));

  beforeAll(async () => {
    kube = await startKube();
    dir = await mkdtemp(join(tmpdir(), "svc-proxy-identity-"));
    cas = await CertificateAuthorities.loadOrCreate(new FileCaKeyStore(join(dir, "ca")), {
      clusterName: "c1",
      trustDomain: "c1",
      clock,
    });
    const ns = await kubectl(kube.adminKubeconfig, ["create", "namespace", NS]);
    if (ns.code !== 0) throw new Error(ns.stderr);
    const { stdout } = await run(toolPath("helm"), [
      "template",
      "svc",
      join(import.meta.dirname, "..", "charts", "svc"),
      "--namespace",
      NS,
      // The one required value: the RBAC applied here does not depend on it.
      "--set",
      "database.postgres.existingSecret=svc-postgres",
    ]);
    const rbac = parseAllDocuments(stdout)
      .map((d) => d.toJS() as { kind: string; metadata: { labels?: Record<string, string> } } | null)
      .filter((o) => o && ["ServiceAccount", "Role", "RoleBinding"].includes(o.kind))
      .filter((o) => o?.metadata.labels?.["app.kubernetes.io/component"] === "auth");
    const applied = await kubectl(
      kube.adminKubeconfig,
      ["apply", "-f", "-"],
      rbac.map((o) => stringify(o)).join("---\n"),
    );
    if (applied.code !== 0) throw new Error(applied.stderr);
    authKubeconfig = await kube.serviceAccountKubeconfig(NS, "svc-auth");
  }, 300_000);

  afterAll(async () => {
    await kube?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  }, 60_000);

  it("creates it, keeps it before half-life, renews it after, and renews it when the names change", async () => {
    const m = manager(["proxy.example.com"]);
    expect(await m.reconcile()).toBe("created");
    const secret = await read();
    expect(secret.type).toBe("kubernetes.io/tls");
    expect(secret.metadata?.labels).toMatchObject({
      "svc.dev/identity": "proxy",
      "app.kubernetes.io/part-of": "svc",
    });
    const first = await serverCert();
    expect(first.subjectAltName).toContain("DNS:proxy.example.com");
    expect(first.checkIssued(new X509Certificate(cas.hostCa.certPem))).toBe(true);

    clock.advance(20 * 60_000); // 1 h certificates (backdated 1 min): half-life at ~29.5 min
    expect(await m.reconcile()).toBe("kept");
    clock.advance(15 * 60_000);
    expect(await m.reconcile()).toBe("renewed");
    const second = await serverCert();
    expect(second.serialNumber).not.toBe(first.serialNumber);

    expect(await manager(["proxy.example.com", "svc-proxy"]).reconcile()).toBe("renewed");
    expect((await serverCert()).subjectAltName).toContain("DNS:svc-proxy");
  }, 60_000);

  it("two auth replicas racing leave one valid identity", async () => {
    clock.advance(60 * 60_000);
    const names = ["proxy.example.com", "svc-proxy"];
    const outcomes = await Promise.all([manager(names).reconcile(), manager(names).reconcile()]);
    expect(outcomes).toContain("renewed");
    const s = await read();
    const cert = new X509Certificate(Buffer.from(s.data?.[PROXY_IDENTITY_FILES.certPem] ?? "", "base64"));
    const key = createPrivateKey(
      Buffer.from(s.data?.[PROXY_IDENTITY_FILES.keyPem] ?? "", "base64").toString(),
    );
    expect(cert.checkPrivateKey(key)).toBe(true);
    expect(createPublicKey(key).asymmetricKeyType).toBe("ec");
  }, 60_000);

  it("refuses a same-named Secret it did not write, and leaves it alone", async () => {
    const other = "svc-proxy-identity-foreign";
    await kubectl(kube.adminKubeconfig, ["delete", "secret", SECRET, "-n", NS]);
    const created = await kubectl(kube.adminKubeconfig, [
      "create",
      "secret",
      "generic",
      SECRET,
      "-n",
      NS,
      `--from-literal=x=${other}`,
    ]);
    expect(created.code).toBe(0);
    await expect(manager(["proxy.example.com"]).reconcile()).rejects.toThrow(
      /not labelled svc\.dev\/identity=proxy/,
    );
    expect(Buffer.from((await read()).data?.["x"] ?? "", "base64").toString()).toBe(other);
  }, 60_000);

  it("may not touch any other Secret (the chart's Role names only this one)", async () => {
    const can = await kubectl(authKubeconfig, ["auth", "can-i", "update", "secrets/svc-ca-host", "-n", NS]);
    expect(can.stdout.trim()).toBe("no");
    const mine = await kubectl(authKubeconfig, ["auth", "can-i", "update", `secrets/${SECRET}`, "-n", NS]);
    expect(mine.stdout.trim()).toBe("yes");
  }, 60_000);
});
