// Kubernetes mode end to end, on a real kube-apiserver and a real PostgreSQL: the operator, `svcd
// auth` and `svcd proxy` run as child processes with the chart's RBAC (ServiceAccount tokens), and
// every change is made with kubectl, as a user would. Auth decides from its informer cache: a Role
// applied, changed, deleted (or held by a finalizer) changes the principals a certificate gets; a
// bad Role never grants and never crashes auth; an apiserver restart is survived; the proxy takes
// the identity auth issues into a Secret and reloads it when auth renews it.
import { X509Certificate } from "node:crypto";
import { connect } from "node:tls";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openBackend } from "../core/backend/index.ts";
import { systemClock } from "../core/clock.ts";
import { setPassword } from "../server/auth/passwords.ts";
import { kubectl } from "./harness/kube.ts";
import {
  type E2ePlatform,
  eventually,
  NS,
  PROXY_IDENTITY_SECRET,
  ProxyUser,
  roleYaml,
  startE2ePlatform,
  tcpOpen,
  userYaml,
} from "./k8s-e2e-fixture.ts";

const PASSWORD = "k8s-e2e-password-1";

/** The serial number of the certificate the proxy presents now. */
function proxyCertSerial(port: number, ca: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = connect({ host: "127.0.0.1", port, ca, servername: "localhost" }, () => {
      const pem = s.getPeerX509Certificate();
      s.end();
      if (pem instanceof X509Certificate) resolve(pem.serialNumber);
      else reject(new Error("no peer certificate"));
    });
    s.on("error", reject);
  });
}

describe("Kubernetes mode: operator, svcd auth and svcd proxy on a real apiserver", () => {
  let p: E2ePlatform;
  let user: ProxyUser;
  let ca = "";
  const admin = () => p.kube.adminKubeconfig;
  const apply = async (yaml: string) => {
    const r = await kubectl(admin(), ["apply", "-f", "-"], yaml);
    if (r.code !== 0) throw new Error(r.stderr);
  };
  const alive = () => {
    for (const d of p.daemons) {
      if (d.child.exitCode !== null)
        throw new Error(`${d.name} exited ${d.child.exitCode}:\n${d.logText().slice(-3000)}`);
    }
  };
  /** Polls the principals until `want` holds; returns how long that took from `since`. */
  const decision = async (what: string, want: (v: string[] | number) => boolean, since: number) => {
    await eventually(
      what,
      async () => {
        alive();
        return want(await user.principals()) ? true : undefined;
      },
      60_000,
    );
    return Date.now() - since;
  };

  let startedAt = 0;

  beforeAll(async () => {
    startedAt = Date.now();
    // Renewed at half-life (1 min): the proxy's reload happens during this test.
    p = await startE2ePlatform({ identityTtl: "2m" });
  }, 600_000);

  afterAll(async () => {
    await p?.stop();
  }, 120_000);

  it("auth waits for the operator's CA Secrets, serves, and is ready only once its informers synced", async () => {
    p.startOperator();
    const auth = p.startAuth();
    // Diagnostics first: alive but not ready while the CRDs do not exist (lists fail).
    await eventually("auth /healthz", async () =>
      (await p.diag(p.ports.authDiag, "/healthz")) === 200 ? true : undefined,
    );
    // gRPC listening means the CAs were loaded: the operator created them (auth may only read).
    await eventually(
      "auth gRPC listening",
      async () => {
        alive();
        return (await tcpOpen(p.ports.auth)) ? true : undefined;
      },
      120_000,
    );
    const secrets = await kubectl(admin(), ["get", "secrets", "-n", NS, "-l", "svc.dev/ca", "-o", "name"]);
    expect(secrets.stdout).toMatch(/svc-ca-/);
    expect(await p.diag(p.ports.authDiag, "/readyz")).toBe(503);
    await new Promise((r) => setTimeout(r, 1_500));
    expect(await p.diag(p.ports.authDiag, "/readyz")).toBe(503);

    await p.applyCrds();
    await eventually("auth /readyz 200", async () =>
      (await p.diag(p.ports.authDiag, "/readyz")) === 200 ? true : undefined,
    );
    expect(auth.child.exitCode).toBeNull();
    const metrics = await (await fetch(`http://127.0.0.1:${p.ports.authDiag}/metrics`)).text();
    expect(metrics).toMatch(/svc_source_synced\{component="auth"\} 1/);
  }, 300_000);

  it("auth issues the proxy identity Secret; the proxy waits for it, serves HTTPS and logs a user in", async () => {
    const secret = await eventually("proxy identity Secret", async () => {
      const r = await kubectl(admin(), ["get", "secret", PROXY_IDENTITY_SECRET, "-n", NS, "-o", "json"]);
      return r.code === 0
        ? (JSON.parse(r.stdout) as {
            type: string;
            metadata: { labels: Record<string, string> };
            data: Record<string, string>;
          })
        : undefined;
    });
    expect(secret.type).toBe("kubernetes.io/tls");
    expect(secret.metadata.labels["svc.dev/identity"]).toBe("proxy");
    expect(Object.keys(secret.data).sort()).toEqual([
      "ca.crt",
      "client.crt",
      "client.key",
      "tls.crt",
      "tls.key",
    ]);
    const clientCert = new X509Certificate(Buffer.from(secret.data["client.crt"] ?? "", "base64"));
    expect(clientCert.subjectAltName).toContain("URI:svc://proxy/e2e");

    // The proxy starts before its identity is mounted and waits for it.
    const proxy = p.startProxy();
    await eventually("proxy /healthz", async () =>
      (await p.diag(p.ports.proxyDiag, "/healthz")) === 200 ? true : undefined,
    );
    expect(await p.diag(p.ports.proxyDiag, "/readyz")).toBe(503);
    p.startMounting();
    await eventually(
      "proxy /readyz 200",
      async () => ((await p.diag(p.ports.proxyDiag, "/readyz")) === 200 ? true : undefined),
      120_000,
    );
    expect(proxy.child.exitCode).toBeNull();

    await apply(roleYaml("dev", ["dev-a"]) + "---\n" + userYaml("alice", ["dev"]));
    const backend = await openBackend(
      { type: "postgres", connectionString: p.pgUrl, schema: p.schema },
      { clock: systemClock },
    );
    try {
      await setPassword(backend, "alice", PASSWORD);
    } finally {
      await backend.close();
    }
    ca = await p.hostCaPem();
    user = new ProxyUser(p.ports.proxy, ca);
    await eventually("alice logs in", async () =>
      (await user.login("alice", PASSWORD)) === 200 ? true : undefined,
    );
    // The Role and the User come through two informers: poll until both are in auth's cache.
    await decision("dev-a granted", (v) => Array.isArray(v) && v.join() === "dev-a", Date.now());
  }, 300_000);

  it("kubectl apply of a changed Role changes the principals auth grants", async () => {
    const t0 = Date.now();
    await apply(roleYaml("dev", ["dev-b"]));
    const ms = await decision("dev-b granted", (v) => Array.isArray(v) && v.join() === "dev-b", t0);
    console.log(
      `[k8s-e2e] kubectl apply (changed Role) -> enforced by auth: ${ms} ms (kubectl start-up included)`,
    );
  }, 120_000);

  it("a deleted Role's grant is gone; a Role held by a finalizer grants nothing while it is being deleted", async () => {
    await apply(roleYaml("ops", ["ops-1"]) + "---\n" + userYaml("alice", ["dev", "ops"]));
    await decision("dev-b and ops-1", (v) => Array.isArray(v) && v.join() === "dev-b,ops-1", Date.now());

    const t0 = Date.now();
    expect((await kubectl(admin(), ["delete", "roles.svc.dev", "dev", "-n", NS])).code).toBe(0);
    const ms = await decision("dev-b gone", (v) => Array.isArray(v) && v.join() === "ops-1", t0);
    console.log(`[k8s-e2e] kubectl delete Role -> grant gone: ${ms} ms`);

    const hold = '{"metadata":{"finalizers":["e2e.svc.dev/hold"]}}';
    expect(
      (await kubectl(admin(), ["patch", "roles.svc.dev", "ops", "-n", NS, "--type=merge", "-p", hold])).code,
    ).toBe(0);
    expect((await kubectl(admin(), ["delete", "roles.svc.dev", "ops", "-n", NS, "--wait=false"])).code).toBe(
      0,
    );
    const ts = await kubectl(admin(), [
      "get",
      "roles.svc.dev",
      "ops",
      "-n",
      NS,
      "-o",
      "jsonpath={.metadata.deletionTimestamp}",
    ]);
    expect(ts.stdout).not.toBe(""); // still there, being deleted
    // No role left that grants a login: auth refuses the certificate (403).
    await decision("ops-1 gone while deleting", (v) => v === 403, Date.now());
    const release = '{"metadata":{"finalizers":null}}';
    expect(
      (await kubectl(admin(), ["patch", "roles.svc.dev", "ops", "-n", NS, "--type=merge", "-p", release]))
        .code,
    ).toBe(0);
    expect(await user.principals()).toBe(403);
  }, 180_000);

  it("an invalid Role (regex that does not compile) never grants and never crashes auth", async () => {
    await apply(
      roleYaml("bad", ["bad-login"], { node_labels: { env: "^(prod$" } }) +
        "---\n" +
        roleYaml("dev", ["dev-c"]) +
        "---\n" +
        userYaml("alice", ["dev", "bad"]),
    );
    await decision("dev-c granted", (v) => Array.isArray(v) && v.join() === "dev-c", Date.now());
    for (let i = 0; i < 5; i++) {
      expect(await user.principals()).toEqual(["dev-c"]);
      await new Promise((r) => setTimeout(r, 200));
    }
    alive();
    expect(await p.diag(p.ports.authDiag, "/readyz")).toBe(200);
    const auth = p.daemons.find((d) => d.name === "auth");
    expect(auth?.logText()).toMatch(/resource refused/);
    // The operator reports it on the object.
    await eventually("Role bad Ready=False", async () => {
      const r = await kubectl(admin(), [
        "get",
        "roles.svc.dev",
        "bad",
        "-n",
        NS,
        "-o",
        'jsonpath={.status.conditions[?(@.type=="Ready")].reason}',
      ]);
      return r.stdout === "InvalidRegex" ? true : undefined;
    });
  }, 120_000);

  it("survives an apiserver restart: caches recover and a later change is enforced", async () => {
    await p.kube.restartApiserver();
    const t0 = Date.now();
    await eventually("apply after restart", async () => {
      const r = await kubectl(admin(), ["apply", "-f", "-"], roleYaml("dev", ["dev-d"]));
      return r.code === 0 ? true : undefined;
    });
    const ms = await decision(
      "dev-d granted after restart",
      (v) => Array.isArray(v) && v.join() === "dev-d",
      t0,
    );
    console.log(`[k8s-e2e] after restartApiserver(): apply -> enforced ${ms} ms`);
    alive();
    await eventually("auth /readyz 200 after restart", async () =>
      (await p.diag(p.ports.authDiag, "/readyz")) === 200 ? true : undefined,
    );
    await eventually("proxy /readyz 200 after restart", async () =>
      (await p.diag(p.ports.proxyDiag, "/readyz")) === 200 ? true : undefined,
    );
  }, 300_000);

  it("the proxy reloads the identity auth renews at half-life, without a restart", async () => {
    const first = await proxyCertSerial(p.ports.proxy, ca);
    const proxy = p.daemons.find((d) => d.name === "proxy");
    await eventually(
      "a renewed proxy certificate served",
      async () => {
        alive();
        return (await proxyCertSerial(p.ports.proxy, ca)) !== first ? true : undefined;
      },
      180_000,
    );
    expect(proxy?.logText()).toMatch(/proxy identity reloaded/);
    // Renewed at half-life (2 min certificates backdated 1 min: every ~30 s), not in a loop.
    const issued = (
      p.daemons
        .find((d) => d.name === "auth")
        ?.logText()
        .match(/proxy identity issued/g) ?? []
    ).length;
    const minutes = (Date.now() - startedAt) / 60_000;
    expect(issued).toBeGreaterThanOrEqual(2);
    expect(issued).toBeLessThanOrEqual(2 + Math.ceil(minutes * 2));
    // Calls to auth use the renewed client certificate: a fresh login and certificate work.
    const again = new ProxyUser(p.ports.proxy, ca);
    expect(await again.login("alice", PASSWORD)).toBe(200);
    expect(await again.principals()).toEqual(["dev-d"]);
  }, 300_000);

  it("stops cleanly on SIGTERM", async () => {
    for (const name of ["proxy", "auth"]) {
      const d = p.daemons.find((x) => x.name === name);
      d?.child.kill("SIGTERM");
      expect(await d?.exited).toBe(0);
    }
  }, 60_000);
});
