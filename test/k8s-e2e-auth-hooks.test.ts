// The operator's auth hooks in Kubernetes mode, on a real kube-apiserver and a real PostgreSQL:
// `svcd operator --auth-addr` and `svcd auth` run as processes with the chart's RBAC. The operator
// calls auth as its own service identity (a host-CA certificate it issues itself, svc://operator/…):
// a node that joins with a JoinToken CR turns the token's status to Used, and a User deleted with
// kubectl has its sessions revoked before its finalizer lets the object go.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { openBackend } from "../core/backend/index.ts";
import { generateSshKeyPair } from "../core/certs/ssh-keys.ts";
import { systemClock } from "../core/clock.ts";
import { type AuthServiceClient, callUnary, createAuthClient, userMetadata } from "../server/auth/client.ts";
import { joinSecretHash } from "../server/auth/join-agent.ts";
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

const PASSWORD = "k8s-hooks-password-1";
const FINALIZER = "svc.dev/revoke-sessions";

interface ObjectView {
  metadata: { finalizers?: string[] };
  status?: { phase?: string; used?: boolean; used_by?: string; used_at?: string };
}

describe("operator ↔ auth hooks on a real apiserver", () => {
  let p: E2ePlatform;
  let client: AuthServiceClient;
  const admin = () => p.kube.adminKubeconfig;
  const apply = async (yaml: string) => {
    const r = await kubectl(admin(), ["apply", "-f", "-"], yaml);
    if (r.code !== 0) throw new Error(r.stderr);
  };
  const getObject = async (resource: string, name: string): Promise<ObjectView | undefined> => {
    const r = await kubectl(admin(), ["get", resource, name, "-n", NS, "-o", "json"]);
    return r.code === 0 ? (JSON.parse(r.stdout) as ObjectView) : undefined;
  };
  const alive = () => {
    for (const d of p.daemons) {
      if (d.child.exitCode !== null)
        throw new Error(`${d.name} exited ${d.child.exitCode}:\n${d.logText().slice(-3000)}`);
    }
  };

  beforeAll(async () => {
    p = await startE2ePlatform();
    await p.applyCrds();
    p.startOperator();
    p.startAuth();
    await eventually(
      "auth ready",
      async () => {
        alive();
        return (await tcpOpen(p.ports.auth)) && (await p.diag(p.ports.authDiag, "/readyz")) === 200
          ? true
          : undefined;
      },
      180_000,
    );
    // Auth writes the proxy identity Secret, which carries the host CA: the trust anchor here.
    const ca = await eventually("host CA", async () => (await p.hostCaPem().catch(() => "")) || undefined);
    client = createAuthClient({
      address: `127.0.0.1:${p.ports.auth}`,
      caPems: [ca],
      serverName: "localhost",
    });
  }, 600_000);

  afterAll(async () => {
    client?.close();
    await p?.stop();
  }, 120_000);

  it("a node joins with a JoinToken CR: the token's status says Used, by whom", async () => {
    const secret = "e2e-join-secret-0123456789abcdef";
    await apply(
      stringify({
        apiVersion: "svc.dev/v1",
        kind: "JoinToken",
        metadata: { name: "node-join-1", namespace: NS },
        spec: {
          roles: ["node"],
          join_method: "token",
          secret_hash: joinSecretHash(secret),
          expires: new Date(Date.now() + 3_600_000).toISOString(),
        },
      }),
    );
    // Pending first (operator reconciled it; auth answered "not used").
    await eventually("JoinToken Pending", async () => {
      alive();
      return (await getObject("jointokens.svc.dev", "node-join-1"))?.status?.phase === "Pending"
        ? true
        : undefined;
    });
    // The node redeems it once auth's informer has the token.
    const joined = await eventually("RegisterAgent", async () =>
      callUnary(client, "RegisterAgent", {
        token: `node-join-1.${secret}`,
        hostname: "e2e-node-1",
        host_ssh_public_key: generateSshKeyPair("ed25519").publicLine,
        tls_public_key_pem: "",
        labels: {},
        addresses: ["127.0.0.1:22"],
        agentless: true,
      }),
    );
    expect(joined.agent_id).not.toBe("");
    const used = await eventually(
      "JoinToken Used",
      async () => {
        alive();
        const t = await getObject("jointokens.svc.dev", "node-join-1");
        return t?.status?.phase === "Used" ? t : undefined;
      },
      60_000,
    );
    expect(used.status?.used).toBe(true);
    expect(used.status?.used_by).toBe("e2e-node-1");
    expect(Date.parse(used.status?.used_at ?? "")).toBeGreaterThan(Date.now() - 600_000);
    // kubectl's printer column shows it too.
    const table = await kubectl(admin(), ["get", "jointokens.svc.dev", "node-join-1", "-n", NS]);
    expect(table.stdout).toMatch(/Used/);
  }, 180_000);

  it("a User deleted with kubectl: its session is refused at once and the object goes after the finalizer ran", async () => {
    await apply(`${roleYaml("hooks-dev", ["dev"])}---\n${userYaml("carol", ["hooks-dev"])}`);
    // The operator adds its finalizer (it has a SessionRevoker now).
    await eventually("User finalizer", async () => {
      alive();
      return (await getObject("users.svc.dev", "carol"))?.metadata.finalizers?.includes(FINALIZER)
        ? true
        : undefined;
    });
    const backend = await openBackend(
      { type: "postgres", connectionString: p.pgUrl, schema: p.schema },
      { clock: systemClock },
    );
    try {
      await setPassword(backend, "carol", PASSWORD);
    } finally {
      await backend.close();
    }
    const login = await eventually("login as carol", async () =>
      callUnary(client, "AuthenticateLocal", { username: "carol", password: PASSWORD, client_address: "" }),
    );
    const sessionId = login.session?.session_id ?? "";
    expect(sessionId).not.toBe("");
    const before = await callUnary(client, "GetSession", {}, userMetadata(sessionId));
    expect(before.username).toBe("carol");

    const del = await kubectl(admin(), ["delete", "users.svc.dev", "carol", "-n", NS, "--wait=false"]);
    expect(del.code).toBe(0);
    const refused = await eventually(
      "session refused",
      async () => {
        try {
          await callUnary(client, "GetSession", {}, userMetadata(sessionId));
          return undefined;
        } catch (err) {
          return err;
        }
      },
      10_000,
    );
    expect((refused as { code?: string }).code).toBe("not_authenticated");
    await eventually(
      "User gone",
      async () => {
        alive();
        const r = await kubectl(admin(), ["get", "users.svc.dev", "carol", "-n", NS]);
        return r.code !== 0 && /NotFound|not found/.test(r.stderr) ? true : undefined;
      },
      60_000,
    );
    // The operator's path ran (not only auth's own reaction to the delete event).
    const events = await kubectl(admin(), [
      "get",
      "events",
      "-n",
      NS,
      "--field-selector",
      "involvedObject.name=carol,reason=SessionsRevoked",
      "-o",
      "name",
    ]);
    expect(events.stdout.trim()).not.toBe("");
    // ... as the operator's own identity, recorded by auth.
    const audit = await openBackend(
      { type: "postgres", connectionString: p.pgUrl, schema: p.schema },
      { clock: systemClock },
    );
    try {
      const found = await audit.searchAudit({
        type: "user.sessions_revoked",
        user: "carol",
        limit: 10,
        offset: 0,
      });
      expect(found.items.map((e) => e.fields["emitted_by"])).toContainEqual(
        expect.stringMatching(/^operator:/),
      );
    } finally {
      await audit.close();
    }
    // Still refused afterwards.
    await expect(callUnary(client, "GetSession", {}, userMetadata(sessionId))).rejects.toMatchObject({
      code: "not_authenticated",
    });
  }, 180_000);
});
