// Admin writes in Kubernetes mode, end to end: an admin calls the real `svcd auth` over gRPC
// (TLS, user session from AuthenticateLocal) to create and delete a User, a node JoinToken and an
// AgentIdentity; auth writes them as custom resources with its own ServiceAccount, bound only by
// the chart's rendered RBAC, so a missing permission fails here. A non-admin is refused
// (PERMISSION_DENIED) and nothing is written.
import { status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { openBackend } from "../core/backend/index.ts";
import { systemClock } from "../core/clock.ts";
import { presets } from "../core/resources/index.ts";
import { type AuthServiceClient, callUnary, createAuthClient, userMetadata } from "../server/auth/client.ts";
import { setPassword } from "../server/auth/passwords.ts";
import { kubectl } from "./harness/kube.ts";
import {
  type E2ePlatform,
  eventually,
  NS,
  roleYaml,
  startE2ePlatform,
  tcpOpen,
  userYaml,
} from "./k8s-e2e-fixture.ts";

const PASSWORD = "k8s-e2e-admin-password-1";

/** The gRPC status code of a refused call (callUnary keeps the ServiceError as the cause). */
async function grpcCode(call: Promise<unknown>): Promise<number | "ok"> {
  try {
    await call;
    return "ok";
  } catch (err) {
    const cause = err instanceof Error ? (err.cause as { code?: unknown } | undefined) : undefined;
    if (typeof cause?.code === "number") return cause.code;
    throw err;
  }
}

describe("Kubernetes mode: admin RPCs write custom resources through svcd auth's ServiceAccount", () => {
  let p: E2ePlatform;
  let client: AuthServiceClient;
  let adminSession = "";
  let devSession = "";
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
  /** The custom resource as JSON, or undefined when the apiserver says NotFound. */
  const getCr = async (kind: string, name: string): Promise<Record<string, unknown> | undefined> => {
    const r = await kubectl(admin(), ["get", `${kind}.svc.dev`, name, "-n", NS, "-o", "json"]);
    if (r.code === 0) return JSON.parse(r.stdout) as Record<string, unknown>;
    if (r.stderr.includes("NotFound")) return undefined;
    throw new Error(r.stderr);
  };
  const gone = (kind: string, name: string) =>
    eventually(`${kind}/${name} deleted`, async () => ((await getCr(kind, name)) ? undefined : true));
  const login = (username: string) =>
    eventually(`${username} logs in`, async () => {
      alive();
      const r = await callUnary(client, "AuthenticateLocal", {
        username,
        password: PASSWORD,
        client_address: "127.0.0.1",
      });
      return r.session?.session_id || undefined;
    });

  beforeAll(async () => {
    p = await startE2ePlatform();
    await p.applyCrds();
    p.startOperator();
    p.startAuth();
    await eventually(
      "auth /readyz 200",
      async () => {
        alive();
        return (await p.diag(p.ports.authDiag, "/readyz")) === 200 && (await tcpOpen(p.ports.auth))
          ? true
          : undefined;
      },
      180_000,
    );
    // auth writes the proxy identity Secret with the host CA in it: what a client verifies auth by.
    const ca = await eventually("host CA", async () => (await p.hostCaPem().catch(() => "")) || undefined);
    client = createAuthClient({ address: `127.0.0.1:${p.ports.auth}`, caPems: [ca] });

    // The chart installs no Role objects: in Kubernetes mode the preset "admin" Role exists only
    // once applied (the operator counts the preset names as existing, auth decides from objects).
    const presetRoles = presets().map((r) => stringify({ ...r, metadata: { ...r.metadata, namespace: NS } }));
    await apply(
      [
        ...presetRoles,
        roleYaml("dev", ["dev-a"]),
        userYaml("root", ["admin"]),
        userYaml("dev-user", ["dev"]),
      ].join("---\n"),
    );
    const backend = await openBackend(
      { type: "postgres", connectionString: p.pgUrl, schema: p.schema },
      { clock: systemClock },
    );
    try {
      await setPassword(backend, "root", PASSWORD);
      await setPassword(backend, "dev-user", PASSWORD);
    } finally {
      await backend.close();
    }
    adminSession = await login("root");
    devSession = await login("dev-user");
    // The admin Role and the User come through two informers: wait until auth decides with both.
    await eventually("admin allowed by auth", async () => {
      alive();
      return (await grpcCode(callUnary(client, "ListUsers", {}, userMetadata(adminSession)))) === "ok"
        ? true
        : undefined;
    });
  }, 600_000);

  afterAll(async () => {
    client?.close();
    await p?.stop();
  }, 120_000);

  it("an admin creates a User, a node JoinToken and an AgentIdentity; kubectl sees them; deletes remove them", async () => {
    const md = () => userMetadata(adminSession);

    const created = await callUnary(
      client,
      "CreateUser",
      { name: "carol", roles: ["dev"], logins: ["carol"] },
      md(),
    );
    expect(created.user?.name).toBe("carol");
    expect(created.reset?.token).toBeTruthy();
    const user = (await getCr("users", "carol")) as { spec: { roles: string[] } } | undefined;
    expect(user?.spec.roles).toEqual(["dev"]);

    const token = await callUnary(
      client,
      "CreateJoinToken",
      { name: "node-e2e", ttl_seconds: 600, node_labels: { env: "e2e" } },
      md(),
    );
    expect(token.token.startsWith("node-e2e.")).toBe(true);
    const tokenCr = (await getCr("jointokens", "node-e2e")) as { spec: Record<string, unknown> } | undefined;
    expect(tokenCr).toBeDefined();
    // The resource keeps a hash: the secret part of the token is not in it.
    expect(JSON.stringify(tokenCr)).not.toContain(token.token.slice("node-e2e.".length));

    const bot = await callUnary(
      client,
      "CreateAgentIdentity",
      {
        name: "ci-bot",
        roles: ["dev"],
        cert_ttl: "30m",
        token_ttl_seconds: 600,
        allow_workload_svids: false,
      },
      md(),
    );
    expect(bot.identity?.name).toBe("ci-bot");
    const botCr = (await getCr("agentidentities", "ci-bot")) as { spec: { roles: string[] } } | undefined;
    expect(botCr?.spec.roles).toEqual(["dev"]);
    // Its bootstrap token is a JoinToken resource too.
    const botTokenName = bot.token.split(".")[0] ?? "";
    expect(await getCr("jointokens", botTokenName)).toBeDefined();

    // The operator sees them like any kubectl-made object (Ready condition).
    await eventually("carol reconciled", async () => {
      const u = (await getCr("users", "carol")) as
        | { status?: { conditions?: { type: string }[] } }
        | undefined;
      return u?.status?.conditions?.some((c) => c.type === "Ready") ? true : undefined;
    });

    // Deletes go through auth too; auth's cache may lag the create, so retry NotFound briefly.
    const del = (rpc: "DeleteUser" | "DeleteJoinToken" | "DeleteAgentIdentity", name: string) =>
      eventually(`${rpc} ${name}`, async () => {
        alive();
        await callUnary(client, rpc, { name }, md());
        return true;
      });
    await del("DeleteUser", "carol");
    await del("DeleteJoinToken", "node-e2e");
    await del("DeleteAgentIdentity", "ci-bot");
    await gone("users", "carol");
    await gone("jointokens", "node-e2e");
    await gone("agentidentities", "ci-bot");
  }, 300_000);

  it("a non-admin gets PERMISSION_DENIED and no custom resource is written", async () => {
    const md = () => userMetadata(devSession);
    // auth's own decision, not the apiserver refusing auth's ServiceAccount (also PERMISSION_DENIED).
    const refusal = await callUnary(
      client,
      "CreateUser",
      { name: "mallory", roles: ["admin"], logins: [] },
      md(),
    ).then(
      () => "created",
      (err: unknown) => (err instanceof Error ? err.message : String(err)),
    );
    expect(refusal).toMatch(/not allowed to create users/);
    expect(refusal).not.toMatch(/apiserver/);
    expect(
      await grpcCode(
        callUnary(client, "CreateUser", { name: "mallory", roles: ["admin"], logins: [] }, md()),
      ),
    ).toBe(status.PERMISSION_DENIED);
    expect(
      await grpcCode(
        callUnary(client, "CreateJoinToken", { name: "node-evil", ttl_seconds: 600, node_labels: {} }, md()),
      ),
    ).toBe(status.PERMISSION_DENIED);
    expect(
      await grpcCode(
        callUnary(
          client,
          "CreateAgentIdentity",
          {
            name: "evil-bot",
            roles: ["admin"],
            cert_ttl: "",
            token_ttl_seconds: 0,
            allow_workload_svids: false,
          },
          md(),
        ),
      ),
    ).toBe(status.PERMISSION_DENIED);
    // Nor may it delete what an admin made.
    expect(await grpcCode(callUnary(client, "DeleteUser", { name: "root" }, md()))).toBe(
      status.PERMISSION_DENIED,
    );
    expect(await getCr("users", "mallory")).toBeUndefined();
    expect(await getCr("jointokens", "node-evil")).toBeUndefined();
    expect(await getCr("agentidentities", "evil-bot")).toBeUndefined();
    expect(await getCr("users", "root")).toBeDefined();
    // No bootstrap token for the refused bot either.
    const tokens = await kubectl(admin(), ["get", "jointokens.svc.dev", "-n", NS, "-o", "name"]);
    expect(tokens.code).toBe(0);
    expect(tokens.stdout).not.toMatch(/evil/);
  }, 120_000);
});
