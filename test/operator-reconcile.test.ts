// The operator on a real kube-apiserver, running as its own least-privilege identity (the RBAC in
// operator/rbac.yaml and nothing else): CA Secrets created once, Ready conditions that
// `kubectl wait` understands, reasons visible in `kubectl get`, Events, JoinToken phases, Connector
// Secret references, UnknownRole, and session revocation when a User is deleted.
import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadKubeConfig } from "../core/sources/kube-api.ts";
import type { SessionRevoker, TokenRedemption, TokenUsage } from "../operator/auth-hooks.ts";
import { type OperatorHandle, runOperator } from "../operator/main.ts";
import { REVOKE_SESSIONS_FINALIZER } from "../operator/reconcilers/index.ts";
import { kubectl } from "./harness/kube.ts";
import {
  capturingLogger,
  eventually,
  installBasics,
  jsonpath,
  must,
  NS,
  type OperatorTestCluster,
  startOperatorCluster,
} from "./operator-fixture.ts";

/** Records revocations (auth's gRPC side is another part; the operator only calls the interface). */
class RecordingRevoker implements SessionRevoker {
  readonly revoked: string[] = [];
  async revokeUserSessions(user: string): Promise<void> {
    this.revoked.push(user);
  }
}

class MapTokenUsage implements TokenUsage {
  readonly used = new Map<string, TokenRedemption>();
  async redemption(name: string): Promise<TokenRedemption | undefined> {
    return this.used.get(name);
  }
}

const hash64 = "a".repeat(64);

describe("operator on a real kube-apiserver", () => {
  let cluster: OperatorTestCluster | undefined;
  let op: OperatorHandle | undefined;
  const logs: string[] = [];
  const revoker = new RecordingRevoker();
  const usage = new MapTokenUsage();
  const admin = () => {
    if (!cluster) throw new Error("no cluster");
    return cluster.adminKubeconfig;
  };
  const apply = (yaml: string) => must(kubectl(admin(), ["-n", NS, "apply", "-f", "-"], yaml));
  const start = async () =>
    await runOperator({
      kubeConfig: loadKubeConfig(cluster?.operatorKubeconfig),
      namespace: NS,
      clusterName: "op-test",
      identity: `in-process-${Date.now()}`,
      leaseDurationMs: 4_000,
      renewDeadlineMs: 3_000,
      retryPeriodMs: 500,
      recheckMs: 1_000,
      resyncMs: 60_000,
      logger: capturingLogger(logs),
      sessionRevoker: revoker,
      tokenUsage: usage,
      diagnosticsAddr: "127.0.0.1:0",
    });

  beforeAll(async () => {
    cluster = await startOperatorCluster();
    await installBasics(cluster.adminKubeconfig);
    op = await start();
  });

  afterAll(async () => {
    await op?.stop();
    await cluster?.stop();
  });

  interface SecretJson {
    metadata: { name: string; uid: string; resourceVersion: string; labels?: Record<string, string> };
    type?: string;
    immutable?: boolean;
    data?: Record<string, string>;
  }

  async function caSecrets() {
    const out = await must(kubectl(admin(), ["-n", NS, "get", "secrets", "-l", "svc.dev/ca", "-o", "json"]));
    const items = (JSON.parse(out) as { items: SecretJson[] }).items;
    return items.map((s) => ({
      name: s.metadata.name,
      uid: s.metadata.uid,
      rv: s.metadata.resourceVersion,
      dataHash: createHash("sha256").update(JSON.stringify(s.data)).digest("hex"),
      type: s.type,
      labels: s.metadata.labels ?? {},
      immutable: s.immutable === true,
    }));
  }

  it("creates the CA Secrets (typed, labelled, immutable) before reconciling, and never logs key material", async () => {
    await eventually("operator reconciling", async () => (op?.isReconciling() ? true : undefined), 120_000);
    const secrets = await caSecrets();
    expect(secrets.map((s) => s.name).sort()).toEqual([
      "svc-ca-app-ca",
      "svc-ca-spiffe-ca",
      "svc-ca-ssh-host-ca",
      "svc-ca-ssh-user-ca",
      "svc-ca-x509-host-ca",
    ]);
    for (const s of secrets) {
      expect(s.type).toBe("svc.dev/ca");
      expect(s.labels["app.kubernetes.io/part-of"]).toBe("svc");
      expect(s.immutable).toBe(true);
    }
    expect(logs.some((l) => l.includes("created CA Secrets"))).toBe(true);
    expect(logs.join("\n")).not.toMatch(/PRIVATE KEY|sshKeyPem|keyPem/);
  });

  it("a valid Role becomes Ready=True (kubectl wait) with observedGeneration", async () => {
    await apply(`
apiVersion: svc.dev/v1
kind: Role
metadata: { name: dev }
spec:
  allow:
    logins: ["{{internal.logins}}", ubuntu]
    node_labels: { env: ["^dev-[a-z]+$", staging] }
`);
    await must(
      kubectl(admin(), ["-n", NS, "wait", "--for=condition=Ready", "--timeout=60s", "roles.svc.dev/dev"]),
    );
    const generation = await jsonpath(admin(), "roles.svc.dev/dev", "{.metadata.generation}");
    expect(await jsonpath(admin(), "roles.svc.dev/dev", "{.status.observedGeneration}")).toBe(generation);
    expect(
      await jsonpath(admin(), "roles.svc.dev/dev", '{.status.conditions[?(@.type=="Ready")].reason}'),
    ).toBe("Valid");
  });

  it("a Role with a bad regex is Ready=False InvalidRegex, visible in kubectl get, with a Warning Event", async () => {
    await apply(`
apiVersion: svc.dev/v1
kind: Role
metadata: { name: badregex }
spec:
  allow:
    node_labels: { env: "^dev-(unclosed$" }
`);
    await must(
      kubectl(admin(), [
        "-n",
        NS,
        "wait",
        "--for=condition=Ready=False",
        "--timeout=60s",
        "roles.svc.dev/badregex",
      ]),
    );
    const table = await must(kubectl(admin(), ["-n", NS, "get", "roles.svc.dev", "badregex"]));
    expect(table).toMatch(/badregex\s+.*False/);
    const reason = await jsonpath(
      admin(),
      "roles.svc.dev/badregex",
      '{.status.conditions[?(@.type=="Ready")].reason}',
    );
    expect(reason).toBe("InvalidRegex");
    const message = await jsonpath(
      admin(),
      "roles.svc.dev/badregex",
      '{.status.conditions[?(@.type=="Ready")].message}',
    );
    expect(message).toContain("spec.allow.node_labels");
    const events = await eventually("InvalidRegex event", async () => {
      const out = await must(
        kubectl(admin(), [
          "-n",
          NS,
          "get",
          "events",
          "--field-selector",
          "involvedObject.name=badregex",
          "-o",
          "json",
        ]),
      );
      const items = (
        JSON.parse(out) as {
          items: Array<{ reason: string; type: string; involvedObject: { kind: string } }>;
        }
      ).items;
      return items.some((e) => e.reason === "InvalidRegex") ? items : undefined;
    });
    const ev = events.find((e) => e.reason === "InvalidRegex");
    expect(ev?.type).toBe("Warning");
    expect(ev?.involvedObject.kind).toBe("Role");
    // kubectl describe shows it too
    const describe = await must(kubectl(admin(), ["-n", NS, "describe", "roles.svc.dev", "badregex"]));
    expect(describe).toContain("InvalidRegex");
  });

  it("fixing the Role flips Ready to True and moves lastTransitionTime only on the transition", async () => {
    const path = '{.status.conditions[?(@.type=="Ready")].lastTransitionTime}';
    const before = await jsonpath(admin(), "roles.svc.dev/badregex", path);
    await apply(`
apiVersion: svc.dev/v1
kind: Role
metadata: { name: badregex }
spec:
  allow:
    node_labels: { env: "^dev-(closed)$" }
`);
    await must(
      kubectl(admin(), [
        "-n",
        NS,
        "wait",
        "--for=condition=Ready",
        "--timeout=60s",
        "roles.svc.dev/badregex",
      ]),
    );
    const flipped = await jsonpath(admin(), "roles.svc.dev/badregex", path);
    expect(Date.parse(flipped)).toBeGreaterThanOrEqual(Date.parse(before));
    // A spec change that keeps it valid: observedGeneration follows, lastTransitionTime stays.
    await apply(`
apiVersion: svc.dev/v1
kind: Role
metadata: { name: badregex }
spec:
  allow:
    node_labels: { env: "^dev-(closed|open)$" }
`);
    const generation = await jsonpath(admin(), "roles.svc.dev/badregex", "{.metadata.generation}");
    await eventually("observedGeneration", async () =>
      (await jsonpath(admin(), "roles.svc.dev/badregex", "{.status.observedGeneration}")) === generation
        ? true
        : undefined,
    );
    expect(await jsonpath(admin(), "roles.svc.dev/badregex", path)).toBe(flipped);
  });

  it("a JoinToken whose expiry has passed is phase Expired; one that expires soon flips on time", async () => {
    const past = new Date(Date.now() - 3_600_000).toISOString();
    const soon = new Date(Date.now() + 4_000).toISOString();
    await apply(`
apiVersion: svc.dev/v1
kind: JoinToken
metadata: { name: old-token }
spec: { roles: [node], join_method: token, secret_hash: "${hash64}", expires: "${past}" }
---
apiVersion: svc.dev/v1
kind: JoinToken
metadata: { name: soon-token }
spec: { roles: [node], join_method: token, secret_hash: "${hash64}", expires: "${soon}" }
`);
    await must(
      kubectl(admin(), [
        "-n",
        NS,
        "wait",
        "--for=jsonpath={.status.phase}=Expired",
        "--timeout=60s",
        "jointokens.svc.dev/old-token",
      ]),
    );
    expect(await must(kubectl(admin(), ["-n", NS, "get", "jointokens.svc.dev", "old-token"]))).toMatch(
      /old-token\s+.*Expired/,
    );
    expect(
      await jsonpath(
        admin(),
        "jointokens.svc.dev/old-token",
        '{.status.conditions[?(@.type=="Ready")].reason}',
      ),
    ).toBe("Expired");
    await eventually("Expired event", async () => {
      const out = await must(
        kubectl(admin(), [
          "-n",
          NS,
          "get",
          "events",
          "--field-selector",
          "involvedObject.name=old-token,reason=Expired",
          "-o",
          "name",
        ]),
      );
      return out.trim() ? out : undefined;
    });
    // The second one is Pending first, then Expired once its time passed (requeued for it).
    await must(
      kubectl(admin(), [
        "-n",
        NS,
        "wait",
        "--for=jsonpath={.status.phase}=Expired",
        "--timeout=60s",
        "jointokens.svc.dev/soon-token",
      ]),
    );
  });

  it("a JoinToken redeemed in auth is phase Used with who and when", async () => {
    const later = new Date(Date.now() + 3_600_000).toISOString();
    await apply(`
apiVersion: svc.dev/v1
kind: JoinToken
metadata: { name: used-token }
spec: { roles: [node], join_method: token, secret_hash: "${hash64}", expires: "${later}" }
`);
    await must(
      kubectl(admin(), [
        "-n",
        NS,
        "wait",
        "--for=jsonpath={.status.phase}=Pending",
        "--timeout=60s",
        "jointokens.svc.dev/used-token",
      ]),
    );
    usage.used.set("used-token", { usedBy: "node-1", usedAt: "2026-11-23T01:02:03Z" });
    // No watch event tells the operator: it asks auth again every recheck period (1 s here).
    await must(
      kubectl(admin(), [
        "-n",
        NS,
        "wait",
        "--for=jsonpath={.status.phase}=Used",
        "--timeout=60s",
        "jointokens.svc.dev/used-token",
      ]),
    );
    expect(await jsonpath(admin(), "jointokens.svc.dev/used-token", "{.status.used_by}")).toBe("node-1");
  });

  it("a Connector whose Secret is missing is SecretNotFound until the Secret appears", async () => {
    await apply(`
apiVersion: svc.dev/v1
kind: Connector
metadata: { name: github }
spec:
  type: github
  display_name: GitHub
  settings: { client_id: abc, redirect_url: "https://svc.example.com/v1/webapi/github/callback", org: acme }
  client_secret_ref: { secret_name: github-client, key: secret }
`);
    await must(
      kubectl(admin(), [
        "-n",
        NS,
        "wait",
        "--for=condition=Ready=False",
        "--timeout=60s",
        "connectors.svc.dev/github",
      ]),
    );
    expect(
      await jsonpath(admin(), "connectors.svc.dev/github", '{.status.conditions[?(@.type=="Ready")].reason}'),
    ).toBe("SecretNotFound");
    await must(
      kubectl(admin(), ["-n", NS, "create", "secret", "generic", "github-client", "--from-literal=wrong=x"]),
    );
    await eventually("SecretKeyNotFound", async () =>
      (await jsonpath(
        admin(),
        "connectors.svc.dev/github",
        '{.status.conditions[?(@.type=="Ready")].reason}',
      )) === "SecretKeyNotFound"
        ? true
        : undefined,
    );
    await must(kubectl(admin(), ["-n", NS, "delete", "secret", "github-client"]));
    await must(
      kubectl(admin(), [
        "-n",
        NS,
        "create",
        "secret",
        "generic",
        "github-client",
        "--from-literal=secret=s3cr3t-value",
      ]),
    );
    await must(
      kubectl(admin(), [
        "-n",
        NS,
        "wait",
        "--for=condition=Ready",
        "--timeout=60s",
        "connectors.svc.dev/github",
      ]),
    );
    expect(logs.join("\n")).not.toContain("s3cr3t-value");
  });

  it("a User naming an unknown Role is UnknownRole until the Role exists", async () => {
    await apply(`
apiVersion: svc.dev/v1
kind: User
metadata: { name: alice }
spec: { roles: [access, ops] }
`);
    await must(
      kubectl(admin(), [
        "-n",
        NS,
        "wait",
        "--for=condition=Ready=False",
        "--timeout=60s",
        "users.svc.dev/alice",
      ]),
    );
    expect(
      await jsonpath(admin(), "users.svc.dev/alice", '{.status.conditions[?(@.type=="Ready")].reason}'),
    ).toBe("UnknownRole");
    expect(
      await jsonpath(admin(), "users.svc.dev/alice", '{.status.conditions[?(@.type=="Ready")].message}'),
    ).toContain('"ops"');
    await apply(`
apiVersion: svc.dev/v1
kind: Role
metadata: { name: ops }
spec: { allow: { logins: [ops] } }
`);
    await must(
      kubectl(admin(), ["-n", NS, "wait", "--for=condition=Ready", "--timeout=60s", "users.svc.dev/alice"]),
    );
  });

  it("an AgentIdentity is Ready when its roles exist", async () => {
    await apply(`
apiVersion: svc.dev/v1
kind: AgentIdentity
metadata: { name: ci-bot }
spec: { roles: [ops], cert_ttl: 30m }
`);
    await must(
      kubectl(admin(), [
        "-n",
        NS,
        "wait",
        "--for=condition=Ready",
        "--timeout=60s",
        "agentidentities.svc.dev/ci-bot",
      ]),
    );
  });

  it("an App is Ready=True when valid; one the CRD admits but our rules refuse is Ready=False with the reason", async () => {
    await apply(`
apiVersion: svc.dev/v1
kind: App
metadata: { name: grafana, labels: { env: staging } }
spec:
  uri: http://grafana.monitoring.svc:3000
  rewrite:
    headers: [{ name: X-User, value: "{{user}}" }]
---
apiVersion: svc.dev/v1
kind: App
metadata: { name: badtemplate }
spec:
  uri: http://grafana.monitoring.svc:3000
  rewrite:
    headers: [{ name: X-User, value: "{{secret.token}}" }]
`);
    await must(
      kubectl(admin(), ["-n", NS, "wait", "--for=condition=Ready", "--timeout=60s", "apps.svc.dev/grafana"]),
    );
    expect(
      await jsonpath(admin(), "apps.svc.dev/grafana", '{.status.conditions[?(@.type=="Ready")].reason}'),
    ).toBe("Valid");
    await must(
      kubectl(admin(), [
        "-n",
        NS,
        "wait",
        "--for=condition=Ready=False",
        "--timeout=60s",
        "apps.svc.dev/badtemplate",
      ]),
    );
    expect(
      await jsonpath(admin(), "apps.svc.dev/badtemplate", '{.status.conditions[?(@.type=="Ready")].reason}'),
    ).toBe("InvalidHeaderTemplate");
    expect(
      await jsonpath(admin(), "apps.svc.dev/badtemplate", '{.status.conditions[?(@.type=="Ready")].message}'),
    ).toContain('spec.rewrite.headers[0].value: "secret.token" is not user');
  });

  it("deleting a User revokes its sessions through auth before the object goes", async () => {
    await eventually("finalizer on alice", async () =>
      (await jsonpath(admin(), "users.svc.dev/alice", "{.metadata.finalizers}")).includes(
        REVOKE_SESSIONS_FINALIZER,
      )
        ? true
        : undefined,
    );
    await must(kubectl(admin(), ["-n", NS, "delete", "users.svc.dev/alice", "--wait=true", "--timeout=60s"]));
    expect(revoker.revoked).toContain("alice");
    const gone = await kubectl(admin(), ["-n", NS, "get", "users.svc.dev/alice"]);
    expect(gone.code).not.toBe(0);
    expect(gone.stderr).toContain("NotFound");
  });

  it("the operator identity has no more than its Role grants", async () => {
    const kc = cluster?.operatorKubeconfig ?? "";
    const can = async (verb: string, what: string, ns = NS) =>
      (await kubectl(kc, ["auth", "can-i", "-n", ns, verb, what])).stdout.trim();
    expect(await can("list", "secrets")).toBe("no");
    expect(await can("delete", "roles.svc.dev")).toBe("no");
    expect(await can("update", "leases.coordination.k8s.io/someone-elses")).toBe("no");
    expect(await can("patch", "roles.svc.dev/status")).toBe("yes");
    expect(await can("get", "secrets", "default")).toBe("no");
  });

  it("exposes reconcile and leadership metrics on the diagnostics listener", async () => {
    const res = await fetch(`http://127.0.0.1:${op?.diagnosticsPort}/metrics`);
    expect(res.status).toBe(200);
    const text = await res.text();
    const ok = /svc_operator_reconciles_total\{[^}]*kind="Role"[^}]*result="ok"[^}]*\} (\d+)/.exec(text);
    expect(Number(ok?.[1] ?? 0)).toBeGreaterThan(0);
    expect(text).toMatch(/svc_operator_leader(\{[^}]*\})? 1/);
    expect((await fetch(`http://127.0.0.1:${op?.diagnosticsPort}/healthz`)).status).toBe(200);
  });

  it("recovers after an apiserver restart: watches resume and new objects are reconciled", async () => {
    // Under make e2e-kind there is no apiserver to restart; the rest of the test still runs.
    await cluster?.kube?.restartApiserver();
    await apply(`
apiVersion: svc.dev/v1
kind: Role
metadata: { name: after-apiserver-restart }
spec: { allow: { logins: [yuser] } }
`);
    await must(
      kubectl(admin(), [
        "-n",
        NS,
        "wait",
        "--for=condition=Ready",
        "--timeout=120s",
        "roles.svc.dev/after-apiserver-restart",
      ]),
    );
    await eventually("leading again", async () => (op?.isReconciling() ? true : undefined));
  });

  it("a second start keeps the CA Secrets exactly as they were", async () => {
    const before = await caSecrets();
    await op?.stop();
    op = await start();
    await eventually(
      "operator reconciling again",
      async () => (op?.isReconciling() ? true : undefined),
      120_000,
    );
    const after = await caSecrets();
    expect(after).toEqual(before);
    // …and it reconciles again: a new Role still becomes Ready.
    await apply(`
apiVersion: svc.dev/v1
kind: Role
metadata: { name: after-restart }
spec: { allow: { logins: [x] } }
`);
    await must(
      kubectl(admin(), [
        "-n",
        NS,
        "wait",
        "--for=condition=Ready",
        "--timeout=60s",
        "roles.svc.dev/after-restart",
      ]),
    );
  });
});
