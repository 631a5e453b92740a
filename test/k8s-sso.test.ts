// Single sign-on in Kubernetes mode on a real kube-apiserver (the k8s-e2e fixture: `svcd operator`
// and `svcd auth` as processes with the chart's RBAC, PostgreSQL state) against a real OpenID
// provider process: a Connector custom resource whose client secret is a Secret reference is
// reconciled Ready by the operator (NotFound until the Secret exists), auth sees it through its
// informers and reads the Secret through the API at login, the login works at the RPC level, and
// the secret's value appears in no status, event, log or public view.
import { randomBytes } from "node:crypto";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse, stringify } from "yaml";
import { parseResource } from "../core/resources/index.ts";
import { publicConnectorView } from "../core/resources/public-view.ts";
import { type AuthServiceClient, callUnary, createAuthClient, userMetadata } from "../server/auth/client.ts";
import { type RunningOidcProvider, startOidcProvider } from "./harness/idp/oidc.ts";
import { kubectl } from "./harness/kube.ts";
import { type E2ePlatform, eventually, NS, startE2ePlatform, tcpOpen } from "./k8s-e2e-fixture.ts";
import { signInAtProvider } from "./sso-provider-login.ts";

const CALLBACK = "https://svc.example.test/v1/webapi/sso/callback";
const CLIENT_SECRET = `k8s-oidc-${randomBytes(16).toString("hex")}`;
const PW = "k8s-idp-password";

interface ConnectorView {
  status?: { conditions?: { type: string; status: string; reason: string; message: string }[] };
}

describe("SSO with a Connector custom resource and a Secret reference", () => {
  let p: E2ePlatform;
  let idp: RunningOidcProvider;
  let client: AuthServiceClient;
  const admin = () => p.kube.adminKubeconfig;
  const kc = async (args: string[], stdin?: string) => {
    const r = await kubectl(admin(), args, stdin);
    if (r.code !== 0) throw new Error(r.stderr);
    return r.stdout;
  };
  const alive = () => {
    for (const d of p.daemons)
      if (d.child.exitCode !== null)
        throw new Error(`${d.name} exited ${d.child.exitCode}:\n${d.logText().slice(-3000)}`);
  };
  const ready = async () => {
    const c = JSON.parse(
      await kc(["get", "connectors.svc.dev", "corp", "-n", NS, "-o", "json"]),
    ) as ConnectorView;
    return c.status?.conditions?.find((x) => x.type === "Ready");
  };

  beforeAll(async () => {
    idp = await startOidcProvider({
      clients: [{ client_id: "svc", client_secret: CLIENT_SECRET, redirect_uris: [CALLBACK] }],
      users: [
        { username: "alice", password: PW, claims: { email: "alice@example.com", groups: ["developers"] } },
      ],
    });
    p = await startE2ePlatform();
    // auth.sso.ca_file: auth trusts the test provider's CA (the chart mounts such a file from a ConfigMap).
    const caFile = join(p.dir, "idp-ca.pem");
    await writeFile(caFile, idp.caPem);
    const config = parse(await readFile(p.authConfig, "utf8")) as { auth: Record<string, unknown> };
    config.auth["sso"] = { ca_file: caFile };
    await writeFile(p.authConfig, stringify(config));
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
    await idp?.stop();
  }, 120_000);

  it("is not Ready while its Secret is missing, then Ready once the Secret exists", async () => {
    await kc(
      ["apply", "-f", "-"],
      stringify({
        apiVersion: "svc.dev/v1",
        kind: "Connector",
        metadata: { name: "corp", namespace: NS },
        spec: {
          type: "oidc",
          display_name: "Corp",
          settings: {
            client_id: "svc",
            issuer_url: idp.issuer,
            redirect_url: CALLBACK,
            scopes: ["email", "groups"],
          },
          client_secret_ref: { secret_name: "corp-oidc", key: "client-secret" },
          claims_to_roles: [{ claim: "groups", value: "dev*", roles: ["access"] }],
        },
      }),
    );
    const missing = await eventually("Ready=False SecretNotFound", async () => {
      alive();
      const r = await ready();
      return r?.status === "False" ? r : undefined;
    });
    expect(missing.reason).toBe("SecretNotFound");
    await kc(
      ["apply", "-f", "-"],
      stringify({
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name: "corp-oidc", namespace: NS },
        stringData: { "client-secret": CLIENT_SECRET },
      }),
    );
    const ok = await eventually("Ready=True", async () => {
      alive();
      const r = await ready();
      return r?.status === "True" ? r : undefined;
    });
    expect(ok.reason).toBe("Valid");
  }, 120_000);

  it("logs in through auth, which read the Connector from its informers and the Secret through the API", async () => {
    const cookie = randomBytes(32).toString("base64url");
    const binding = (await import("node:crypto")).createHash("sha256").update(cookie).digest("hex");
    // auth's informer may lag the operator's status write by a moment.
    const req = await eventually("CreateSSOAuthRequest", async () =>
      callUnary(client, "CreateSSOAuthRequest", {
        connector: "corp",
        browser_binding_hash: binding,
        client_redirect_url: "/web/",
      }),
    );
    expect(req.redirect_url.startsWith(`${idp.issuer}/`)).toBe(true);
    const query = await signInAtProvider({
      authUrl: req.redirect_url,
      login: "alice",
      password: PW,
      caPem: idp.caPem,
      callback: CALLBACK,
    });
    const r = await callUnary(client, "ValidateSSOResponse", {
      callback_query: query,
      browser_binding_hash: binding,
    });
    expect(r.username).toBe("alice@example.com");
    expect(r.login?.session?.roles).toEqual(["access"]);
    const s = await callUnary(client, "GetSession", {}, userMetadata(r.login?.session?.session_id ?? ""));
    expect(s.username).toBe("alice@example.com");
  }, 120_000);

  it("never shows the client secret: not in status, events, logs or the public view", async () => {
    const object = JSON.parse(await kc(["get", "connectors.svc.dev", "corp", "-n", NS, "-o", "json"]));
    expect(JSON.stringify(object)).not.toContain(CLIENT_SECRET);
    expect(JSON.stringify(object.status)).not.toContain('client-secret":');
    const events = await kc(["get", "events", "-n", NS, "-o", "json"]);
    expect(events).not.toContain(CLIENT_SECRET);
    for (const d of p.daemons) expect(d.logText(), d.name).not.toContain(CLIENT_SECRET);
    const view = publicConnectorView(parseResource(object) as Parameters<typeof publicConnectorView>[0]);
    expect(view).toEqual({ name: "corp", type: "oidc", display_name: "Corp" });
    expect(JSON.stringify(view)).not.toContain(CLIENT_SECRET);
  });
});
