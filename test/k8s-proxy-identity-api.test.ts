// proxy.identity_secret: a freshly installed proxy does not wait for the kubelet to mount its
// identity Secret (Secret volumes are refreshed about once a minute, which held every fresh
// install's proxy unready that long); it reads the same Secret through the API, with the chart's
// RBAC (get on that one name), and taking the mounted copy later is not a reload.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { kubectl } from "./harness/kube.ts";
import { type E2ePlatform, eventually, NS, ProxyUser, startE2ePlatform } from "./k8s-e2e-fixture.ts";

describe("svcd proxy with proxy.identity_secret", () => {
  let p: E2ePlatform;

  beforeAll(async () => {
    p = await startE2ePlatform({ identitySecret: true });
    await p.applyCrds();
    p.startOperator();
    p.startAuth();
  }, 600_000);

  afterAll(async () => {
    await p?.stop();
  }, 120_000);

  it("serves before the identity is mounted, from the Secret auth wrote", async () => {
    const proxy = p.startProxy();
    await eventually(
      "proxy /readyz 200 with nothing mounted",
      async () => {
        if (proxy.child.exitCode !== null) throw new Error(`proxy exited:\n${proxy.logText().slice(-3000)}`);
        return (await p.diag(p.ports.proxyDiag, "/readyz")) === 200 ? true : undefined;
      },
      180_000,
    );
    // A real HTTPS answer with the identity auth issued (the client trusts only the host CA).
    const user = new ProxyUser(p.ports.proxy, await p.hostCaPem());
    expect(await user.login("nobody", "not-a-password-at-all")).toBe(401);
    // Then the kubelet's copy appears: the same bytes, so the proxy does not reload.
    p.startMounting();
    await new Promise((r) => setTimeout(r, 8_000));
    expect(proxy.logText()).not.toContain("proxy identity reloaded");
    expect(proxy.logText()).not.toMatch(/BEGIN [A-Z ]*PRIVATE KEY/);
  }, 300_000);

  it("may read its own identity Secret and no other (the chart's Role names only that one)", async () => {
    const other = await kubectl(p.kubeconfigs.proxy, ["-n", NS, "get", "secret", "svc-ca-ssh-user-ca"]);
    expect(other.code).not.toBe(0);
    expect(other.stderr).toMatch(/forbidden/i);
    const list = await kubectl(p.kubeconfigs.proxy, ["-n", NS, "get", "secrets"]);
    expect(list.code).not.toBe(0);
  });
});
