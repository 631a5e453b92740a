// Informer staleness of the Kubernetes resource source (what auth and proxy decide from), on the
// harness apiserver: watches ask for bookmarks and get them; while the apiserver is stopped
// (restartApiserver) staleSeconds grows and sourceFresh (their /readyz) turns false; after the
// restart every kind is current again and changes flow.
import { Watch } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RESOURCE_KINDS } from "../core/resources/index.ts";
import { crPath, loadKubeConfig } from "../core/sources/kube-api.ts";
import { KubernetesSource } from "../core/sources/kubernetes.ts";
import { BookmarkWatch } from "../core/sources/watch-health.ts";
import { checkConfig } from "../server/config.ts";
import { sourceFresh } from "../server/roles/common.ts";
import { type KubeCluster, kubectl } from "./harness/kube.ts";
import { eventually, installBasics, must, NS, sleep, startOperatorCluster } from "./operator-fixture.ts";

const configWith = (staleAfter: string) =>
  checkConfig({
    cluster_name: "stale",
    auth: { listen_addr: "127.0.0.1:1" },
    proxy: { listen_addr: "127.0.0.1:2", public_addr: "localhost:2", oidc_issuer_url: "https://localhost:2" },
    client_tools: { min_version: "0.1.0", recommended_version: "0.1.0" },
    backend: { type: "sqlite", path: "x.db" },
    source: { type: "kubernetes", namespace: NS, stale_after: staleAfter },
    ca_store: { type: "files", path: "ca" },
  });

describe("Kubernetes source staleness and bookmarks (real kube-apiserver)", () => {
  let kube: KubeCluster | undefined;
  let stopCluster: (() => Promise<void>) | undefined;
  let source: KubernetesSource | undefined;

  beforeAll(async () => {
    const cluster = await startOperatorCluster();
    stopCluster = cluster.stop;
    kube = cluster.kube;
    await installBasics(cluster.adminKubeconfig);
    source = new KubernetesSource({ kubeConfig: loadKubeConfig(cluster.adminKubeconfig), namespace: NS });
    await source.start();
    await source.waitSynced();
  }, 300_000);

  afterAll(async () => {
    await source?.stop();
    await stopCluster?.();
  }, 120_000);

  it("config: source.stale_after defaults to 60s and preset_roles to true", () => {
    const c = checkConfig({ ...configWith("1s"), source: { type: "kubernetes", namespace: NS } });
    expect(c.source).toMatchObject({ type: "kubernetes", stale_after: "60s", preset_roles: true });
  });

  it("every kind is current once its watch is open", async () => {
    await eventually("watches open", async () =>
      Object.values(source?.staleSeconds() ?? { x: 1 }).every((s) => s === 0) ? true : undefined,
    );
    // one watch per kind: every kind the source reads, none missing
    expect(Object.keys(source?.staleSeconds() ?? {}).sort()).toEqual([...RESOURCE_KINDS].sort());
    expect(Object.keys(source?.staleSeconds() ?? {})).toContain("App");
    expect(sourceFresh(configWith("1s"), source ?? {})).toBe(true);
  });

  it("a watch asks for bookmarks and the apiserver sends them (only then)", async () => {
    // The apiserver's watch cache sends bookmarks once it has seen an event of the kind.
    await must(
      kubectl(
        kube?.adminKubeconfig ?? "",
        ["-n", NS, "apply", "-f", "-"],
        "apiVersion: svc.dev/v1\nkind: Role\nmetadata:\n  name: bookmarked\nspec:\n  allow:\n    logins: [x]\n",
      ),
    );
    const kc = loadKubeConfig(kube?.adminKubeconfig);
    const watchPhases = async (w: Watch): Promise<string[]> => {
      const phases: string[] = [];
      // resourceVersion 0: served from the watch cache, which follows the ADDED events with a
      // bookmark when (and only when) the watch asked for them.
      await new Promise<void>((resolve) => {
        void w.watch(
          crPath(NS, "Role"),
          { resourceVersion: "0", timeoutSeconds: 3 },
          (phase: string) => phases.push(phase),
          () => resolve(),
        );
      });
      return phases;
    };
    let opened = 0;
    let closed = 0;
    const events: string[] = [];
    const asked = await watchPhases(
      new BookmarkWatch(kc, {
        onOpen: () => opened++,
        onEvent: (t) => events.push(t),
        onClose: () => closed++,
      }),
    );
    expect(asked).toContain("ADDED");
    expect(asked).toContain("BOOKMARK");
    expect(events).toEqual(asked);
    expect(opened).toBe(1);
    expect(closed).toBe(1);
    const plain = await watchPhases(new Watch(kc));
    expect(plain).toContain("ADDED");
    expect(plain).not.toContain("BOOKMARK");
  }, 30_000);

  it("apiserver stopped: kinds grow stale and readiness fails; after the restart they are current again", async () => {
    let maxStale = 0;
    let sawUnfresh = false;
    let polling = true;
    const poll = (async () => {
      while (polling) {
        const s = Object.values(source?.staleSeconds() ?? {});
        maxStale = Math.max(maxStale, ...s);
        if (!sourceFresh(configWith("1s"), source ?? {})) sawUnfresh = true;
        await sleep(50);
      }
    })();
    const t0 = Date.now();
    await kube?.restartApiserver();
    const restartMs = Date.now() - t0;
    await eventually(
      "current again",
      async () =>
        Object.values(source?.staleSeconds() ?? { x: 1 }).every((s) => s === 0) ? true : undefined,
      60_000,
    );
    polling = false;
    await poll;
    expect(maxStale).toBeGreaterThan(1);
    expect(sawUnfresh).toBe(true);
    expect(sourceFresh(configWith("1s"), source ?? {})).toBe(true);
    // and the watch resumed: a change after the restart arrives
    await must(
      kubectl(
        kube?.adminKubeconfig ?? "",
        ["-n", NS, "apply", "-f", "-"],
        "apiVersion: svc.dev/v1\nkind: Role\nmetadata:\n  name: after-restart\nspec:\n  allow:\n    logins: [x]\n",
      ),
    );
    await eventually("change after restart seen", async () =>
      source?.get("Role", "after-restart") ? true : undefined,
    );
    console.log(`apiserver restart ${restartMs} ms; largest staleness seen ${maxStale.toFixed(1)} s`);
  }, 240_000);
});
