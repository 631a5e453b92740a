// The Helm chart rendered with helm (no cluster): values.schema.json refuses bad values with a
// message naming them, every template renders (defaults, evaluation mode, every option on), the
// rendered svcd config is one svcd accepts, and every Pod is hardened as Pod Security "restricted"
// requires. test/chart-install.test.ts applies the same renders to a real apiserver.
import type {
  V1Deployment,
  V1Ingress,
  V1PersistentVolumeClaim,
  V1PodDisruptionBudget,
  V1Service,
} from "@kubernetes/client-node";
import { beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { type Config, checkConfig } from "../server/config.ts";
import { chart, ci, find, helm, type K8sObject, podSpecs, render } from "./chart-helm.ts";

type Deployment = { spec: NonNullable<V1Deployment["spec"]> };
/** A Certificate's or a route's names. */
type Named = { spec: { dnsNames?: string[]; hostnames?: string[] } };

function configOf(objects: K8sObject[]): Config {
  const cm = find(objects, "ConfigMap", "svc-config");
  return checkConfig(parse(cm.data?.["svc.yaml"] ?? ""), "chart");
}

function container(objects: K8sObject[], deployment: string) {
  const c = find<Deployment>(objects, "Deployment", deployment).spec.template.spec?.containers[0];
  if (!c) throw new Error(`${deployment} has no container`);
  return c;
}

describe("charts/svc values and templates", () => {
  let defaults: K8sObject[] = [];
  let all: K8sObject[] = [];
  let evaluation: K8sObject[] = [];

  beforeAll(async () => {
    [defaults, all, evaluation] = await Promise.all([
      render(["-f", ci("default")]),
      render(["-f", ci("all-options")]),
      render(["-f", ci("evaluation")]),
    ]);
  });

  it("passes helm lint --strict with each ci/ values file", async () => {
    for (const name of ["default", "evaluation", "all-options"] as const) {
      const r = await helm(["lint", chart, "--strict", "-f", ci(name)]);
      expect(r.stdout, name).toMatch(/1 chart\(s\) linted, 0 chart\(s\) failed/);
    }
  });

  it.each([
    // The PostgreSQL Secret is required unless evaluation mode is chosen.
    [[], /database\/postgres\/existingSecret.*minLength/],
    [["--set", "database.mode=sqlite"], /database\/mode.*must be one of 'postgres', 'evaluation'/],
    [["--set", "proxy.publicAddr=https://svc.example.com"], /proxy\/publicAddr.*does not match pattern/],
    [["--set", "proxy.replicas=0"], /proxy\/replicas.*minimum/],
    [["--set", "proxy.service.type=ExternalName"], /proxy\/service\/type.*must be one of/],
    [["--set", "proxy.replica=3"], /additional properties 'replica' not allowed/],
    [["--set", "logLevel=verbose"], /logLevel.*must be one of/],
    [["--set", "clusterName=Prod_1"], /clusterName.*does not match pattern/],
    [["--set", "auth.sessionTTL=forever"], /auth\/sessionTTL.*does not match pattern/],
    [["--set", "proxy.trustedProxies={lb.example.com}"], /proxy\/trustedProxies\/0.*does not match pattern/],
    [["--set", "tls.certManager.enabled=true"], /tls\/certManager\/issuerRef\/name.*minLength/],
    [["--set", "firstAdmin.user=Admin"], /firstAdmin\/user.*does not match pattern/],
  ])("refuses bad values with a message naming them (%#)", async (args, message) => {
    const base = args.length === 0 ? [] : ["--set", "database.postgres.existingSecret=svc-postgres"];
    const r = await helm(["template", "svc", chart, ...base, ...args]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(message);
  });

  it("renders a config svcd accepts, with the PostgreSQL URL as a mounted file and no init container", () => {
    const config = configOf(defaults);
    expect(config.backend).toEqual({ type: "postgres", url_file: "/var/run/svc/postgres/url" });
    expect(config.trust_domain).toBe("svc");
    expect(config.auth.first_admin).toEqual({ user: "admin", secret_name: "svc-first-admin" });
    expect(config.proxy.public_tls).toBeUndefined();
    expect(config.proxy.oidc_issuer_url).toBe("https://svc.example.com");
    expect(config.source).toMatchObject({ preset_roles: true, stale_after: "60s" });
    expect(container(defaults, "svc-operator").args).toEqual(
      expect.arrayContaining(["--stale-after=60", "--finalizer-timeout=120", "--preset-roles=true"]),
    );
    const auth = find<Deployment>(defaults, "Deployment", "svc-auth").spec.template.spec;
    expect(auth?.initContainers).toBeUndefined();
    expect(auth?.volumes?.find((v) => v.name === "postgres")?.secret).toMatchObject({
      secretName: "svc-postgres",
      items: [{ key: "url", path: "url" }],
    });
    expect(container(defaults, "svc-auth").volumeMounts).toContainEqual({
      name: "postgres",
      mountPath: "/var/run/svc/postgres",
      readOnly: true,
    });
    // The proxy never sees the database Secret; the ConfigMap never holds a URL.
    expect(JSON.stringify(find(defaults, "Deployment", "svc-proxy"))).not.toContain("svc-postgres");
    expect(JSON.stringify(find(defaults, "ConfigMap", "svc-config"))).not.toMatch(/postgres(ql)?:\/\//);
    // A custom key and schema reach the volume and the config.
    expect(configOf(all).backend).toMatchObject({ schema: "svc_prod" });
    expect(JSON.stringify(find(all, "Deployment", "svc-auth"))).toContain(
      '"key":"postgres-url","path":"url"',
    );
  });

  it("tells each proxy Pod its own peer host (the Pod IP by default) for relaying to its tunnels", async () => {
    const env = container(defaults, "svc-proxy").env ?? [];
    expect(env.find((e) => e.name === "SVC_PROXY_PEER_HOST")).toEqual({
      name: "SVC_PROXY_PEER_HOST",
      valueFrom: { fieldRef: { fieldPath: "status.podIP" } },
    });
    // Per Pod: never in the shared config.
    expect(configOf(defaults).proxy.peer_addr).toBeUndefined();
    const named = await render(["-f", ci("default"), "--set", "proxy.peerHost=$(POD_NAME).peers.svc"]);
    const namedEnv = container(named, "svc-proxy").env ?? [];
    expect(namedEnv.find((e) => e.name === "SVC_PROXY_PEER_HOST")?.value).toBe("$(POD_NAME).peers.svc");
    // Kubernetes expands $(POD_NAME) only from variables defined before it.
    expect(namedEnv.findIndex((e) => e.name === "POD_NAME")).toBeLessThan(
      namedEnv.findIndex((e) => e.name === "SVC_PROXY_PEER_HOST"),
    );
  });

  it("sends trustDomain (default clusterName) to auth's config and the operator alike", async () => {
    expect(container(defaults, "svc-operator").args).toContain("--trust-domain=svc");
    expect(configOf(all).trust_domain).toBe("svc.example.com");
    expect(container(all, "svc-operator").args).toContain("--trust-domain=svc.example.com");
    const off = await render(["-f", ci("default"), "--set", "presetRoles=false"]);
    expect(configOf(off).source).toMatchObject({ preset_roles: false });
    expect(container(off, "svc-operator").args).toContain("--preset-roles=false");
  });

  it("rolls auth and proxy without dropping requests: surge first, serve a while after the delete", () => {
    for (const name of ["svc-auth", "svc-proxy"]) {
      expect(find<Deployment>(defaults, "Deployment", name).spec.strategy?.rollingUpdate).toEqual({
        maxUnavailable: 0,
        maxSurge: 1,
      });
      expect(container(defaults, name).lifecycle?.preStop).toEqual({ sleep: { seconds: 5 } });
    }
  });

  it("puts podLabels and podAnnotations on every component's Pods, never in their selectors", () => {
    for (const name of ["svc-operator", "svc-auth", "svc-proxy"]) {
      const d = find<Deployment>(all, "Deployment", name);
      expect(d.spec.template.metadata?.labels?.["team"]).toBe("platform");
      expect(d.spec.template.metadata?.annotations?.["sidecar.istio.io/inject"]).toBe("false");
      expect(d.spec.selector.matchLabels?.["team"]).toBeUndefined();
    }
  });

  it("probes the operator's /readyz and /healthz on its diagnostics port", () => {
    const op = container(defaults, "svc-operator");
    expect(op.readinessProbe?.httpGet).toEqual({ path: "/readyz", port: "diagnostics" });
    expect(op.livenessProbe?.httpGet).toEqual({ path: "/healthz", port: "diagnostics" });
    expect(op.ports).toContainEqual({ name: "diagnostics", containerPort: 8081 });
  });

  it("hardens every Pod as Pod Security 'restricted' requires, with a writable /tmp only", () => {
    for (const objects of [defaults, all, evaluation]) {
      const pods = podSpecs(objects);
      expect(pods.map((p) => p.owner).sort()).toEqual([
        "Deployment/svc-auth",
        "Deployment/svc-operator",
        "Deployment/svc-proxy",
        "Pod/svc-test-ping",
      ]);
      for (const { owner, spec } of pods) {
        expect(spec.securityContext, owner).toMatchObject({
          runAsNonRoot: true,
          runAsUser: 10001,
          seccompProfile: { type: "RuntimeDefault" },
        });
        expect(spec.initContainers, owner).toBeUndefined();
        for (const c of spec.containers) {
          expect(c.securityContext, owner).toEqual({
            allowPrivilegeEscalation: false,
            readOnlyRootFilesystem: true,
            capabilities: { drop: ["ALL"] },
          });
          expect(c.resources?.requests, owner).toHaveProperty("memory");
        }
        if (owner.startsWith("Deployment/")) {
          expect(spec.containers[0]?.volumeMounts, owner).toContainEqual({ name: "tmp", mountPath: "/tmp" });
          expect(spec.volumes?.find((v) => v.name === "tmp")?.emptyDir, owner).toBeDefined();
        }
      }
    }
  });

  it("spreads replicas across nodes and zones without blocking scheduling, with a PDB per component", () => {
    for (const component of ["operator", "auth", "proxy"]) {
      const spec = find<Deployment>(defaults, "Deployment", `svc-${component}`).spec.template.spec;
      expect(spec?.topologySpreadConstraints?.map((t) => [t.topologyKey, t.whenUnsatisfiable])).toEqual([
        ["kubernetes.io/hostname", "ScheduleAnyway"],
        ["topology.kubernetes.io/zone", "ScheduleAnyway"],
      ]);
      expect(spec?.topologySpreadConstraints?.[0]?.labelSelector?.matchLabels).toMatchObject({
        "app.kubernetes.io/component": component,
      });
      const pdb = find<{ spec: V1PodDisruptionBudget["spec"] }>(
        defaults,
        "PodDisruptionBudget",
        `svc-${component}`,
      );
      expect(pdb.spec?.maxUnavailable).toBe(1);
      expect(pdb.spec?.selector?.matchLabels).toEqual(
        find<Deployment>(defaults, "Deployment", `svc-${component}`).spec.selector.matchLabels,
      );
    }
  });

  it("creates the first admin as a kept User with the admin Role; firstAdmin.user='' creates none", async () => {
    const user = find(defaults, "User", "admin");
    expect(user.apiVersion).toBe("svc.dev/v1");
    expect(user.spec).toEqual({ roles: ["admin"] });
    expect(user.metadata.annotations?.["helm.sh/resource-policy"]).toBe("keep");
    const none = await render(["-f", ci("default"), "--set", "firstAdmin.user="]);
    expect(none.some((o) => o.kind === "User")).toBe(false);
    expect(configOf(none).auth.first_admin).toBeUndefined();
  });

  it("evaluation mode: one auth replica on SQLite in a volume, no database Secret", async () => {
    const config = configOf(evaluation);
    expect(config.backend).toEqual({ type: "sqlite", path: "/var/lib/svc/state.db" });
    const auth = find<Deployment>(evaluation, "Deployment", "svc-auth");
    expect(auth.spec.replicas).toBe(1);
    expect(auth.spec.strategy?.type).toBe("Recreate");
    expect(auth.spec.template.spec?.volumes?.find((v) => v.name === "state")?.persistentVolumeClaim).toEqual({
      claimName: "svc-auth-state",
    });
    const pvc = find<{ spec: V1PersistentVolumeClaim["spec"] }>(
      evaluation,
      "PersistentVolumeClaim",
      "svc-auth-state",
    );
    expect(pvc.spec?.resources?.requests).toEqual({ storage: "2Gi" });
    expect(pvc.metadata.annotations?.["helm.sh/resource-policy"]).toBe("keep");
    expect(JSON.stringify(evaluation)).not.toContain("postgres");
    // Without persistence: an emptyDir, still one replica whatever auth.replicas says.
    const memory = await render(["--set", "database.mode=evaluation", "--set", "auth.replicas=3"]);
    const a = find<Deployment>(memory, "Deployment", "svc-auth");
    expect(a.spec.replicas).toBe(1);
    expect(a.spec.template.spec?.volumes?.find((v) => v.name === "state")?.emptyDir).toBeDefined();
    expect(memory.some((o) => o.kind === "PersistentVolumeClaim")).toBe(false);
  });

  it("public TLS from cert-manager: a Certificate for the public host, mounted by the proxy as public_tls", () => {
    const cert = find(all, "Certificate", "svc-public-tls");
    expect(cert.spec).toMatchObject({
      secretName: "svc-public-tls",
      dnsNames: ["svc.example.com"],
      issuerRef: { name: "letsencrypt", kind: "ClusterIssuer", group: "cert-manager.io" },
    });
    expect(configOf(all).proxy.public_tls).toEqual({
      cert_file: "/var/run/svc/public-tls/tls.crt",
      key_file: "/var/run/svc/public-tls/tls.key",
    });
    const proxy = find<Deployment>(all, "Deployment", "svc-proxy").spec.template.spec;
    expect(proxy?.volumes?.find((v) => v.name === "public-tls")?.secret).toMatchObject({
      secretName: "svc-public-tls",
      optional: true,
    });
    // An existing Secret instead: no Certificate, the same mount.
    return render(["-f", ci("default"), "--set", "tls.existingSecret=wildcard-tls"]).then((objects) => {
      expect(objects.some((o) => o.kind === "Certificate")).toBe(false);
      expect(JSON.stringify(find(objects, "Deployment", "svc-proxy"))).toContain(
        '"secretName":"wildcard-tls"',
      );
      expect(configOf(objects).proxy.public_tls).toBeDefined();
    });
  });

  it("apps.enabled puts *.<public host> on the Certificate and the TLSRoute only; off by default; explicit names win", async () => {
    // Off (the all-options file leaves it unset): no wildcard anywhere.
    expect(JSON.stringify(all)).not.toContain("*.svc.example.com");
    const on = await render(["-f", ci("all-options"), "--set", "apps.enabled=true"]);
    expect(find<Named>(on, "Certificate", "svc-public-tls").spec.dnsNames).toEqual([
      "svc.example.com",
      "*.svc.example.com",
    ]);
    expect(find<Named>(on, "TLSRoute", "svc-proxy").spec.hostnames).toEqual([
      "svc.example.com",
      "*.svc.example.com",
    ]);
    // Routes that terminate TLS do not carry app hosts (the proxy needs the client's SNI).
    expect(find<Named>(on, "HTTPRoute", "svc-proxy").spec.hostnames).toEqual(["svc.example.com"]);
    const ing = find<{ spec: V1Ingress["spec"] }>(on, "Ingress", "svc-proxy");
    expect(ing.spec?.rules?.map((r) => r.host)).toEqual(["svc.example.com"]);
    // Names given explicitly are used as they are.
    const named = await render([
      "-f",
      ci("all-options"),
      "--set",
      "apps.enabled=true",
      "--set",
      "tls.certManager.dnsNames={svc.example.com,apps.example.com}",
    ]);
    expect(find<Named>(named, "Certificate", "svc-public-tls").spec.dnsNames).toEqual([
      "svc.example.com",
      "apps.example.com",
    ]);
    const bad = await helm(["template", "svc", chart, "-f", ci("default"), "--set", "apps.enable=true"]);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/additional properties 'enable' not allowed/);
  });

  it("Ingress: HTTPS to the backend, long timeouts for WebSockets, host and TLS from the public address", () => {
    const ing = find<{ spec: V1Ingress["spec"] }>(all, "Ingress", "svc-proxy");
    expect(ing.metadata.annotations).toMatchObject({
      "nginx.ingress.kubernetes.io/backend-protocol": "HTTPS",
      "nginx.ingress.kubernetes.io/proxy-read-timeout": "3600",
    });
    expect(ing.spec?.ingressClassName).toBe("nginx");
    expect(ing.spec?.tls).toEqual([{ secretName: "svc-public-tls", hosts: ["svc.example.com"] }]);
    expect(ing.spec?.rules?.[0]).toMatchObject({
      host: "svc.example.com",
      http: { paths: [{ path: "/", backend: { service: { name: "svc-proxy", port: { name: "https" } } } }] },
    });
  });

  it("Gateway API: HTTPRoute with a BackendTLSPolicy, and a TLSRoute for passthrough", () => {
    expect(find(all, "HTTPRoute", "svc-proxy").spec).toMatchObject({
      parentRefs: [{ name: "public", namespace: "gateways", sectionName: "https" }],
      hostnames: ["svc.example.com"],
      rules: [{ backendRefs: [{ name: "svc-proxy", port: 443 }] }],
    });
    expect(find(all, "BackendTLSPolicy", "svc-proxy").spec).toMatchObject({
      targetRefs: [{ group: "", kind: "Service", name: "svc-proxy" }],
      validation: { hostname: "svc.example.com", wellKnownCACertificates: "System" },
    });
    expect(find(all, "TLSRoute", "svc-proxy").spec).toMatchObject({
      parentRefs: [{ name: "passthrough", sectionName: "tls" }],
      hostnames: ["svc.example.com"],
    });
  });

  it("LoadBalancer Services: annotations, source ranges, traffic policy, node port", () => {
    const svc = find<{ spec: V1Service["spec"] }>(all, "Service", "svc-proxy");
    expect(svc.metadata.annotations).toEqual({
      "service.beta.kubernetes.io/aws-load-balancer-scheme": "internet-facing",
    });
    expect(svc.spec).toMatchObject({
      type: "LoadBalancer",
      loadBalancerSourceRanges: ["203.0.113.0/24"],
      externalTrafficPolicy: "Local",
      ports: [{ name: "https", port: 443, targetPort: "https", nodePort: 30443 }],
    });
    expect(find<{ spec: V1Service["spec"] }>(defaults, "Service", "svc-proxy").spec?.type).toBe("ClusterIP");
    // auth's gRPC for node agents outside the cluster: exposed only when asked.
    expect(find<{ spec: V1Service["spec"] }>(defaults, "Service", "svc-auth").spec?.type).toBe("ClusterIP");
    expect(find<{ spec: V1Service["spec"] }>(all, "Service", "svc-auth").spec).toMatchObject({
      type: "LoadBalancer",
      loadBalancerSourceRanges: ["198.51.100.0/24"],
      ports: [{ name: "grpc", port: 3025 }],
    });
  });

  it("ServiceMonitors scrape each component's /metrics through its diagnostics Service", () => {
    for (const component of ["operator", "auth", "proxy"]) {
      const sm = find<{ spec: { selector: { matchLabels: Record<string, string> }; endpoints: unknown[] } }>(
        all,
        "ServiceMonitor",
        `svc-${component}`,
      );
      expect(sm.metadata.labels?.["release"]).toBe("prometheus");
      expect(sm.spec.endpoints).toEqual([
        { port: "diagnostics", path: "/metrics", scheme: "http", interval: "30s" },
      ]);
      // The selector picks exactly this component's diagnostics Service, whose port has that name.
      const picked = all.filter(
        (o) =>
          o.kind === "Service" &&
          Object.entries(sm.spec.selector.matchLabels).every(([k, v]) => o.metadata.labels?.[k] === v),
      );
      expect(picked.map((s) => s.metadata.name)).toEqual([`svc-${component}-diagnostics`]);
      const port = (picked[0]?.spec as V1Service["spec"])?.ports?.[0];
      expect(port?.name).toBe("diagnostics");
    }
    expect(defaults.some((o) => o.kind === "ServiceMonitor")).toBe(false);
  });

  it("the helm test Pod pings the proxy Service over HTTPS, trusting the host CA only", () => {
    const pod = find(defaults, "Pod", "svc-test-ping");
    expect(pod.metadata.annotations?.["helm.sh/hook"]).toBe("test");
    const spec = podSpecs([pod])[0]?.spec;
    expect(spec?.containers[0]?.env).toContainEqual({
      name: "PING_URL",
      value: "https://svc-proxy.svc-system.svc:443/v1/webapi/ping",
    });
    expect(spec?.volumes?.[0]?.secret).toMatchObject({
      secretName: "svc-proxy-identity",
      items: [{ key: "ca.crt", path: "ca.crt" }],
    });
    expect(spec?.automountServiceAccountToken).toBe(false);
  });
});
