// `svcctl export` in Kubernetes mode: the CA Secrets on a real kube-apiserver, read offline by the
// built binary with a kubeconfig. The Secrets are created the way auth creates them
// (CertificateAuthorities.loadOrCreate over SecretCaKeyStore); a namespace without them is
// "not found" and stays empty.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CertificateAuthorities } from "../core/ca/authorities.ts";
import { SecretCaKeyStore } from "../core/ca/secret-store.ts";
import { systemClock } from "../core/clock.ts";
import { loadKubeConfig } from "../core/sources/kube-api.ts";
import { run } from "./cli-fixture.ts";
import { type KubeCluster, kubectl, startKube } from "./harness/kube.ts";

const NS = "svc-cli-export";
const EMPTY_NS = "svc-cli-empty";
let kube: KubeCluster | undefined;
let cas: CertificateAuthorities;

const k = (): KubeCluster => {
  if (!kube) throw new Error("kube-apiserver did not start");
  return kube;
};

beforeAll(async () => {
  kube = await startKube();
  for (const ns of [NS, EMPTY_NS])
    expect((await kubectl(k().adminKubeconfig, ["create", "namespace", ns])).code).toBe(0);
  cas = await CertificateAuthorities.loadOrCreate(
    new SecretCaKeyStore({ kubeConfig: loadKubeConfig(k().adminKubeconfig), namespace: NS }),
    { clusterName: "kube-test", trustDomain: "kube-test", clock: systemClock },
  );
});
afterAll(async () => {
  await kube?.stop();
});

describe("svcctl export from Kubernetes Secrets", () => {
  const exportArgs = (type: string, ns: string): string[] => [
    "export",
    "--type",
    type,
    "--kubeconfig",
    k().adminKubeconfig,
    "--namespace",
    ns,
  ];

  it("app-jwt, user-ca and host-ca match the CAs auth keeps in the Secrets", async () => {
    const app = await run("svcctl", exportArgs("app-jwt", NS));
    expect(app.code, app.stderr).toBe(0);
    expect(JSON.parse(app.stdout)).toEqual(cas.appJwks());
    const user = await run("svcctl", [...exportArgs("user-ca", NS), "--cluster-name", "kube-test"]);
    expect(user.code, user.stderr).toBe(0);
    expect(user.stdout.trim()).toBe(cas.sshUserCaPublicKey.trim());
    const host = await run("svcctl", [...exportArgs("host-ca", NS), "--cluster-name", "kube-test", "--json"]);
    expect(host.code, host.stderr).toBe(0);
    expect(JSON.parse(host.stdout)).toMatchObject({
      known_hosts: `@cert-authority * ${cas.sshHostCaPublicKey.trim()}`,
      tls_ca_pem: cas.hostCa.certPem,
    });
  });

  it("a namespace without CA Secrets is not found (5) and no Secret is created", async () => {
    const r = await run("svcctl", exportArgs("app-jwt", EMPTY_NS));
    expect(r.code, r.stderr).toBe(5);
    expect(r.stderr).toMatch(/no CA/);
    const secrets = await kubectl(k().adminKubeconfig, ["get", "secrets", "-n", EMPTY_NS, "-o", "name"]);
    expect(secrets.code).toBe(0);
    expect(secrets.stdout).not.toMatch(/svc-ca-/);
  });

  it("--kubeconfig without --namespace is a usage error (2)", async () => {
    const r = await run("svcctl", ["export", "--type", "app-jwt", "--kubeconfig", k().adminKubeconfig]);
    expect(r.code).toBe(2);
  });
});
