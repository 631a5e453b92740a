// Kubernetes mode of CA rotation on a real kube-apiserver: the rotation state in one mutable
// Secret (its resourceVersion is the compare-and-swap), new keys in new immutable CA Secrets, two
// "replicas" agreeing through the apiserver. The identity used has only what auth needs: get and
// create on Secrets, get and update on the one state Secret by name (docs/ca-rotation.md). The
// proxy identity Secret auth keeps follows the host CA's phases.
import { X509Certificate } from "node:crypto";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CertificateAuthorities } from "../core/ca/authorities.ts";
import { emptyDocument, initialState } from "../core/ca/rotation.ts";
import { SecretRotationStateStore } from "../core/ca/rotation-secret-store.ts";
import { SecretCaKeyStore } from "../core/ca/secret-store.ts";
import { ManualClock } from "../core/clock.ts";
import { loadKubeConfig } from "../core/sources/kube-api.ts";
import { PROXY_IDENTITY_FILES, ProxyIdentitySecret } from "../server/roles/proxy-identity.ts";
import { type KubeCluster, kubectl, startKube } from "./harness/kube.ts";

const NS = "svc-rotation-test";
const rbac = `
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: { name: svc-auth, namespace: ${NS} }
rules:
  - apiGroups: [""]
    resources: [secrets]
    verbs: [get, create]
  - apiGroups: [""]
    resources: [secrets]
    verbs: [get, update]
    resourceNames: [svc-ca-rotation, svc-proxy-identity]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: { name: svc-auth, namespace: ${NS} }
roleRef: { apiGroup: rbac.authorization.k8s.io, kind: Role, name: svc-auth }
subjects:
  - kind: ServiceAccount
    name: svc-operator
    namespace: svc-system
`;

let kube: KubeCluster | undefined;
const k = (): KubeCluster => {
  if (!kube) throw new Error("cluster did not start");
  return kube;
};

beforeAll(async () => {
  kube = await startKube();
  expect((await kubectl(k().adminKubeconfig, ["create", "namespace", NS])).code).toBe(0);
  const granted = await kubectl(k().adminKubeconfig, ["apply", "-f", "-"], rbac);
  expect(granted.stderr).toBe("");
});

afterAll(async () => {
  await kube?.stop();
});

const stores = () => {
  const kubeConfig = loadKubeConfig(k().operatorKubeconfig);
  return {
    keys: new SecretCaKeyStore({ kubeConfig, namespace: NS }),
    rotation: new SecretRotationStateStore({ kubeConfig, namespace: NS }),
  };
};

describe("CA rotation state in a Secret", () => {
  it("compare-and-swap on the resourceVersion: a stale revision loses", async () => {
    const { rotation } = stores();
    expect(await rotation.read()).toBeUndefined();
    const doc = emptyDocument();
    expect(await rotation.compareAndSwap(undefined, doc)).toBe("swapped");
    expect(await rotation.compareAndSwap(undefined, doc)).toBe("conflict");
    const r1 = await rotation.read();
    expect(r1?.revision).toMatch(/^\d+$/);
    doc.authorities.app = initialState("app-ca");
    expect(await rotation.compareAndSwap(r1?.revision, doc)).toBe("swapped");
    expect(await rotation.compareAndSwap(r1?.revision, doc)).toBe("conflict");
    expect((await rotation.read())?.doc.authorities.app?.current).toBe("app-ca");
    const secret = JSON.parse(
      (await kubectl(k().adminKubeconfig, ["-n", NS, "get", "secret", "svc-ca-rotation", "-o", "json"]))
        .stdout,
    );
    expect(secret.type).toBe("svc.dev/ca-rotation");
    // Reset for the next test: the document is the whole state.
    const r2 = await rotation.read();
    expect(await rotation.compareAndSwap(r2?.revision, emptyDocument())).toBe("swapped");
  });

  it("two auth replicas over the apiserver: one rotates, the other reloads and signs with the same key", async () => {
    const clock = new ManualClock(Date.UTC(2026, 5, 1));
    const open = () => {
      const s = stores();
      return CertificateAuthorities.loadOrCreate(s.keys, {
        clusterName: "rot.test",
        trustDomain: "rot.test",
        clock,
        rotationStore: s.rotation,
      });
    };
    const a = await open();
    const b = await open();
    const oldKey = a.sshUserCaPublicKey;
    await a.rotate({ type: "user_ssh", phase: "init", who: "test" });
    await expect(b.rotate({ type: "user_ssh", phase: "init" })).rejects.toThrow(/already in phase init/);
    await a.rotate({ type: "user_ssh", phase: "update_clients" });
    // b last read init (its refused request); a has moved since.
    expect(await b.reload()).toBe(true);
    expect(b.phase("user_ssh")).toBe("update_clients");
    await b.rotate({ type: "user_ssh", phase: "update_servers" });
    await a.reload();
    expect(a.phase("user_ssh")).toBe("update_servers");
    expect(b.sshUserCaPublicKey).toBe(a.sshUserCaPublicKey);
    expect(a.sshUserCaPublicKey).not.toBe(oldKey);
    expect(a.trustedUserCaKeys()).toEqual([a.sshUserCaPublicKey, oldKey]);
    // The new key is a new immutable CA Secret.
    const secret = JSON.parse(
      (await kubectl(k().adminKubeconfig, ["-n", NS, "get", "secret", "svc-ca-ssh-user-ca-g2", "-o", "json"]))
        .stdout,
    );
    expect(secret.immutable).toBe(true);
    expect(secret.type).toBe("svc.dev/ca");
  });

  it("the proxy identity Secret carries every trusted host CA and is re-issued when the signing key switches", async () => {
    const clock = new ManualClock(Date.UTC(2026, 5, 1));
    const s = stores();
    const cas = await CertificateAuthorities.loadOrCreate(s.keys, {
      clusterName: "rot.test",
      trustDomain: "rot.test",
      clock,
      rotationStore: s.rotation,
    });
    const identity = new ProxyIdentitySecret({
      kubeConfig: loadKubeConfig(k().operatorKubeconfig),
      namespace: NS,
      secretName: "svc-proxy-identity",
      cas,
      names: ["proxy.rot.test"],
      clientName: "rot.test",
      ttlMs: 24 * 3600_000,
      clock,
      logger: pino({ level: "silent" }),
    });
    const read = async () => {
      const secret = JSON.parse(
        (await kubectl(k().adminKubeconfig, ["-n", NS, "get", "secret", "svc-proxy-identity", "-o", "json"]))
          .stdout,
      ) as { data: Record<string, string> };
      const file = (name: string) => Buffer.from(secret.data[name] ?? "", "base64").toString("utf8");
      return {
        ca: file(PROXY_IDENTITY_FILES.caPem),
        cert: new X509Certificate(file(PROXY_IDENTITY_FILES.certPem)),
      };
    };
    const issuedBy = (cert: X509Certificate, pem: string) => cert.checkIssued(new X509Certificate(pem));
    expect(await identity.reconcile()).toBe("created");
    const oldCa = cas.hostCa.certPem;
    expect(await identity.reconcile()).toBe("kept");

    await cas.rotate({ type: "host_x509", phase: "init" });
    expect(await identity.reconcile()).toBe("renewed");
    let now = await read();
    expect(now.ca).toBe(cas.trustedHostCaPems().join(""));
    expect(cas.trustedHostCaPems()).toHaveLength(2);
    expect(issuedBy(now.cert, oldCa)).toBe(true);

    await cas.rotate({ type: "host_x509", phase: "update_clients" });
    expect(await identity.reconcile()).toBe("renewed");
    now = await read();
    expect(issuedBy(now.cert, cas.hostCa.certPem)).toBe(true);
    expect(issuedBy(now.cert, oldCa)).toBe(false);
    await cas.rotate({ type: "host_x509", phase: "update_servers" });
    expect(await identity.reconcile()).toBe("kept");
    await cas.rotate({ type: "host_x509", phase: "standby", force: true });
    expect(await identity.reconcile()).toBe("renewed");
    expect((await read()).ca).toBe(cas.hostCa.certPem);
  });
});
