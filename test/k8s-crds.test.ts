// The generated CRDs on a real kube-apiserver, driven by the real kubectl: every CRD becomes
// Established, valid examples of every kind are accepted and read back (category, short names,
// printer columns), and invalid ones are refused with the apiserver's own schema/CEL messages.
import { resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isResourceKind, kindInfo, RESOURCE_KINDS, validateResource } from "../core/resources/index.ts";
import { crdName } from "../scripts/gen-crds.ts";
import { type KubeCluster, type KubectlResult, kubectl, startKube } from "./harness/kube.ts";
import { examples, HASH, type Manifest, toYaml, V } from "./k8s-examples.ts";

const NS = "svc-crds-test";
const CRD_DIR = resolve(import.meta.dirname, "..", "crds");

let kube: KubeCluster | undefined;
const k = (): KubeCluster => {
  if (!kube) throw new Error("cluster did not start");
  return kube;
};
const run = (args: string[], input?: string): Promise<KubectlResult> =>
  kubectl(k().adminKubeconfig, args, input);
const apply = (yaml: string, validate = "strict"): Promise<KubectlResult> =>
  run(["-n", NS, "apply", `--validate=${validate}`, "-f", "-"], yaml);

beforeAll(async () => {
  kube = await startKube();
  const ns = await run(["create", "namespace", NS]);
  expect(ns.stderr).toBe("");
  const crds = await run(["apply", "-f", CRD_DIR]);
  expect(crds.stderr).toBe("");
  expect(crds.code).toBe(0);
  const established = await run(
    [
      "wait",
      "--for=condition=Established",
      "--timeout=120s",
      ...RESOURCE_KINDS.map((kd) => `crd/${crdName(kd)}`),
    ],
    undefined,
  );
  expect(established.stderr).toBe("");
  expect(established.code).toBe(0);
});

afterAll(async () => {
  await kube?.stop();
});

describe("CRDs on a real kube-apiserver", () => {
  it("are served as namespaced, with the svcdev category and short names", async () => {
    const res = await run(["api-resources", "--api-group=svc.dev", "-o", "wide", "--no-headers"]);
    expect(res.code).toBe(0);
    for (const kind of RESOURCE_KINDS) {
      const line = res.stdout.split("\n").find((l) => new RegExp(`\\s${kind}\\s`).test(l));
      expect(line, kind).toBeDefined();
      expect(line).toContain("svc.dev/v1");
      expect(line).toContain("true"); // NAMESPACED
      expect(line).toContain("svcdev");
    }
  });

  it("accept a valid example of every kind; kubectl reads them back, lists the category, shows columns", async () => {
    const all = examples();
    const res = await apply(toYaml(...Object.values(all)));
    expect(res.stderr).toBe("");
    expect(res.code).toBe(0);

    const listed = await run(["-n", NS, "get", "svcdev", "-o", "name"]);
    expect(listed.stdout.trim().split("\n").sort()).toEqual(
      [
        "agentidentity.svc.dev/ci-bot",
        "app.svc.dev/grafana",
        "connector.svc.dev/github",
        "jointoken.svc.dev/node-1",
        "lock.svc.dev/lock-mallory",
        "role.svc.dev/dev",
        "user.svc.dev/alice",
      ].sort(),
    );

    // What the apiserver stores (with its defaults) is what our own validation accepts.
    for (const kind of RESOURCE_KINDS) {
      const got = await run([
        "-n",
        NS,
        "get",
        `${kindPlural(kind)}.svc.dev`,
        all[kind].metadata["name"] as string,
        "-o",
        "json",
      ]);
      expect(got.code).toBe(0);
      const obj = JSON.parse(got.stdout) as Manifest;
      const checked = validateResource(obj);
      expect(checked.ok ? [] : checked.errors, kind).toEqual([]);
      expect(obj["spec"]).toMatchObject(all[kind]["spec"] as object);
    }
    const role = JSON.parse((await run(["-n", NS, "get", "roles.svc.dev", "dev", "-o", "json"])).stdout);
    // Structural-schema defaults applied by the apiserver.
    expect(role.spec.options.permit_pty).toBe(true);
    expect(role.spec.options.max_session_ttl).toBe("8h");

    const tokens = await run(["-n", NS, "get", "jt"]);
    expect(tokens.stdout.split("\n")[0]).toMatch(/^NAME\s+ROLES\s+METHOD\s+EXPIRES\s+PHASE\s+READY\s+AGE/);
    expect(tokens.stdout).toMatch(/node-1\s+\["node"\]\s+token\s+2030-01-01T00:00:00Z/);
    const roles = await run(["-n", NS, "get", "svcrole"]);
    expect(roles.stdout.split("\n")[0]).toMatch(/^NAME\s+MFA\s+MAX-TTL\s+READY\s+AGE/);
    expect(roles.stdout).toMatch(/dev\s+true\s+8h/);
    const apps = await run(["-n", NS, "get", "svcapp"]);
    expect(apps.stdout.split("\n")[0]).toMatch(/^NAME\s+URI\s+PUBLIC-ADDR\s+READY\s+AGE/);
    expect(apps.stdout).toMatch(/grafana\s+http:\/\/grafana\.monitoring\.svc:3000/);
  });

  it("accept a Role with allow and deny app_labels (string and list values) and keep them", async () => {
    const appRole: Manifest = {
      apiVersion: V,
      kind: "Role",
      metadata: { name: "app-reader" },
      spec: {
        allow: { app_labels: { env: ["staging", "^dev-[0-9]+$"], "*": "*" } },
        deny: { app_labels: { team: "payments" } },
      },
    };
    const res = await apply(toYaml(appRole));
    expect(res.stderr).toBe("");
    const got = JSON.parse(
      (await run(["-n", NS, "get", "roles.svc.dev", "app-reader", "-o", "json"])).stdout,
    );
    expect(got.spec.allow.app_labels).toEqual({ env: ["staging", "^dev-[0-9]+$"], "*": "*" });
    expect(got.spec.deny.app_labels).toEqual({ team: "payments" });
    const checked = validateResource(got);
    expect(checked.ok ? [] : checked.errors).toEqual([]);
  });

  it("has a status subresource: the Ready column shows the Ready condition", async () => {
    const status = {
      status: {
        conditions: [
          {
            type: "Ready",
            status: "True",
            reason: "Reconciled",
            message: "ok",
            lastTransitionTime: "2026-01-01T00:00:00Z",
          },
        ],
      },
    };
    const patched = await run([
      "-n",
      NS,
      "patch",
      "users.svc.dev",
      "alice",
      "--subresource=status",
      "--type=merge",
      "-p",
      JSON.stringify(status),
    ]);
    expect(patched.stderr).toBe("");
    const users = await run(["-n", NS, "get", "svcuser"]);
    expect(users.stdout.split("\n")[0]).toMatch(/^NAME\s+ROLES\s+DISABLED\s+READY\s+AGE/);
    expect(users.stdout).toMatch(/alice\s+\["dev"\]\s+false\s+True/);
    // A spec write through the main resource cannot change status.
    const spec = await run([
      "-n",
      NS,
      "patch",
      "users.svc.dev",
      "alice",
      "--type=merge",
      "-p",
      '{"status":null}',
    ]);
    expect(spec.code).toBe(0);
    const again = await run([
      "-n",
      NS,
      "get",
      "svcuser",
      "alice",
      "-o",
      "jsonpath={.status.conditions[0].status}",
    ]);
    expect(again.stdout).toBe("True");
  });

  const invalid: Array<{ name: string; object: Manifest; messages: RegExp[] }> = [
    {
      name: "wrong type (logins as a string)",
      object: {
        apiVersion: V,
        kind: "Role",
        metadata: { name: "bad-type" },
        spec: { allow: { logins: "root" } },
      },
      messages: [/spec\.allow\.logins/, /must be of type array/],
    },
    {
      name: "unknown field",
      object: {
        apiVersion: V,
        kind: "Role",
        metadata: { name: "bad-field" },
        spec: { allow: { logins: ["x"], colour: "red" } },
      },
      messages: [/unknown field "spec\.allow\.colour"/],
    },
    {
      name: "too-long user name",
      object: { apiVersion: V, kind: "User", metadata: { name: "u".repeat(65) }, spec: { roles: ["dev"] } },
      messages: [/metadata\.name/, /Too long/, /64/],
    },
    {
      name: "name that is not a DNS subdomain",
      object: { apiVersion: V, kind: "User", metadata: { name: "Bob_1" }, spec: { roles: ["dev"] } },
      messages: [/metadata\.name/, /RFC 1123 subdomain/],
    },
    {
      name: "token method iam without allow rules",
      object: {
        apiVersion: V,
        kind: "JoinToken",
        metadata: { name: "iam-empty" },
        spec: { roles: ["node"], join_method: "iam", expires: "2030-01-01T00:00:00Z" },
      },
      messages: [/join_method iam needs at least one allow rule/],
    },
    {
      name: "bot token without bot_name",
      object: {
        apiVersion: V,
        kind: "JoinToken",
        metadata: { name: "bot-nameless" },
        spec: { roles: ["bot"], join_method: "token", secret_hash: HASH, expires: "2030-01-01T00:00:00Z" },
      },
      messages: [/a token with role bot needs bot_name/],
    },
    {
      name: "inline secret in a connector",
      object: {
        apiVersion: V,
        kind: "Connector",
        metadata: { name: "inline" },
        spec: {
          type: "github",
          display_name: "GitHub",
          settings: {
            client_id: "abc",
            redirect_url: "https://p.example/cb",
            client_secret: "hunter2-inline",
          },
        },
      },
      messages: [/unknown field "spec\.settings\.client_secret"/],
    },
    {
      name: "secret reference with both forms",
      object: {
        apiVersion: V,
        kind: "Connector",
        metadata: { name: "two-refs" },
        spec: {
          type: "github",
          display_name: "GitHub",
          settings: { client_id: "abc", redirect_url: "https://p.example/cb" },
          client_secret_ref: { secret_name: "s", key: "k", file: "/x" },
        },
      },
      messages: [/client_secret_ref needs either secret_name and key, or file/],
    },
    {
      name: "bad enum (connector type)",
      object: {
        apiVersion: V,
        kind: "Connector",
        metadata: { name: "ldap" },
        spec: { type: "ldap", display_name: "LDAP", settings: {} },
      },
      messages: [/spec\.type/, /Unsupported value: "ldap"/, /"github", "oidc", "saml"/],
    },
    {
      name: "bad duration pattern",
      object: {
        apiVersion: V,
        kind: "AgentIdentity",
        metadata: { name: "bad-ttl" },
        spec: { roles: ["dev"], cert_ttl: "1 hour" },
      },
      messages: [/spec\.cert_ttl/, /should match/],
    },
    {
      name: "a Lock naming two targets (CEL)",
      object: {
        apiVersion: V,
        kind: "Lock",
        metadata: { name: "two-targets" },
        spec: { target: { user: "mallory", node: "n1" } },
      },
      messages: [/spec\.target/, /a lock target names exactly one of user, role, bot, node, key_id/],
    },
    ...appInvalid(),
  ];

  it.each(invalid)("refuse $name with the apiserver's message", async ({ object, messages }) => {
    const res = await apply(toYaml(object));
    expect(res.code).not.toBe(0);
    for (const m of messages) expect(res.stderr).toMatch(m);
    expect(res.stderr).not.toContain("hunter2");
    const plural = kindPlural(object.kind);
    const name = object.metadata["name"] as string;
    const got = await run(["-n", NS, "get", `${plural}.svc.dev`, name, "--ignore-not-found", "-o", "name"]);
    expect(got.stdout).toBe("");
  });

  it("stores a node-label value of the wrong type (an untyped spot CEL cannot see); our validation refuses it", async () => {
    const object: Manifest = {
      apiVersion: V,
      kind: "Role",
      metadata: { name: "label-number" },
      spec: { allow: { node_labels: { env: 5 } } },
    };
    const res = await apply(toYaml(object));
    expect(res.stderr).toBe("");
    const got = await run(["-n", NS, "get", "roles.svc.dev", "label-number", "-o", "json"]);
    const checked = validateResource(JSON.parse(got.stdout));
    expect(checked.ok ? [] : checked.errors).toEqual([
      "spec.allow.node_labels.env: must be a string or a list of strings",
    ]);
  });

  it("refuses invalid YAML before it reaches the apiserver", async () => {
    const res = await apply("apiVersion: svc.dev/v1\nkind: Role\nmetadata: {name: [unclosed\n");
    expect(res.code).not.toBe(0);
    expect(res.stderr).toMatch(/yaml|json/i);
  });

  it("prunes an inlined secret when strict validation is off: it is never stored", async () => {
    const object: Manifest = {
      apiVersion: V,
      kind: "Connector",
      metadata: { name: "pruned" },
      spec: {
        type: "github",
        display_name: "GitHub",
        settings: { client_id: "abc", redirect_url: "https://p.example/cb", client_secret: "hunter2-pruned" },
      },
    };
    // `create`, not client-side `apply`: apply would keep the raw input in its last-applied
    // annotation, which is why strict validation (kubectl's default) matters (docs/kubernetes.md).
    const res = await run(["-n", NS, "create", "--validate=ignore", "-f", "-"], toYaml(object));
    expect(res.stderr).toBe("");
    expect(res.code).toBe(0);
    const got = await run(["-n", NS, "get", "connectors.svc.dev", "pruned", "-o", "json"]);
    expect(got.code).toBe(0);
    const stored = JSON.parse(got.stdout);
    expect(stored.spec.settings).toEqual({ client_id: "abc", redirect_url: "https://p.example/cb" });
    expect(got.stdout).not.toContain("hunter2");
  });
});

function kindPlural(kind: string): string {
  if (!isResourceKind(kind)) throw new Error(`not a kind: ${kind}`);
  return kindInfo[kind].plural;
}

/** Apps the apiserver refuses: its schema patterns and the CEL rules on rewrite.headers. */
function appInvalid(): Array<{ name: string; object: Manifest; messages: RegExp[] }> {
  const app = (name: string, spec: Record<string, unknown>): Manifest => ({
    apiVersion: V,
    kind: "App",
    metadata: { name },
    spec: { uri: "http://grafana.monitoring.svc:3000", ...spec },
  });
  const headers = (...hs: Array<[string, string]>) => ({
    rewrite: { headers: hs.map(([name, value]) => ({ name, value })) },
  });
  return [
    {
      name: "an App setting the assertion header (CEL)",
      object: app("forge", headers(["SVC-JWT-ASSERTION", "x"])),
      messages: [/spec\.rewrite\.headers/, /may not set a header the proxy owns/],
    },
    {
      name: "an App naming a header twice (CEL)",
      object: app("twice", headers(["X-User", "a"], ["x-user", "b"])),
      messages: [/spec\.rewrite\.headers/, /names each header once/],
    },
    {
      name: "an App header value with a line break",
      object: app("crlf", headers(["X-User", "a\r\nX-Admin: 1"])),
      messages: [/spec\.rewrite\.headers\[0\]\.value/, /should match/],
    },
    {
      name: "an App whose name has a dot (not a DNS label)",
      object: app("grafana.eu", {}),
      messages: [/metadata\.name/, /should match/],
    },
    {
      name: "an App URI with credentials",
      object: app("creds", { uri: "http://bob:pw@grafana.monitoring.svc" }),
      messages: [/spec\.uri/, /should match/],
    },
    {
      name: "an App URI that is not http(s)",
      object: app("ftp", { uri: "ftp://files.monitoring.svc/" }),
      messages: [/spec\.uri/, /should match/],
    },
  ];
}
