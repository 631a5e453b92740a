// AuthorizeSshLogin through the real gRPC server, called by a joined agent with its own client
// certificate: what the certificate carries is checked against what holds now, on the labels of
// the calling agent's own node record. Every way a certificate could open more than its roles
// allow today is tried here; test/node-rules.test.ts drives the same decision end to end.
import { generateKeyPairSync } from "node:crypto";
import { status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SshCertSigner } from "../core/certs/ssh-cert.ts";
import { generateSshKeyPair } from "../core/certs/ssh-keys.ts";
import { generateEcdsaP256, privateKeyToPem } from "../core/certs/x509.ts";
import { encodeCertIdentity } from "../core/rbac/cert-identity.ts";
import { API_VERSION } from "../core/resources/index.ts";
import type { AuthServiceClient } from "../proto/generated/svc/v1/AuthService.ts";
import { agentMetadata, callUnary, createAuthClient, userMetadata } from "../server/auth/client.ts";
import { setPassword } from "../server/auth/passwords.ts";
import { type AgentAuthEnv, startAgentAuthEnv } from "./agent-fixture.ts";
import { PASSWORD, statusOf } from "./auth-fixture.ts";

let env: AgentAuthEnv;
let agent: AuthServiceClient;
let agentId = "";

async function userCert(user: string, o: { node?: string } = {}): Promise<string> {
  const key = generateSshKeyPair("ed25519");
  const r = await callUnary(
    env.client,
    "IssueUserCerts",
    { ssh_public_key: key.publicLine, ttl_seconds: 600, node: o.node ?? "" },
    userMetadata(await env.login(user)),
  );
  return r.ssh_certificate ?? "";
}

const ask = (cert: string, login: string) =>
  callUnary(
    agent,
    "AuthorizeSshLogin",
    { ssh_certificate: cert, login, remote_address: "127.0.0.1" },
    agentMetadata(agentId),
  );

beforeAll(async () => {
  env = await startAgentAuthEnv();
  await env.source.apply({
    apiVersion: API_VERSION,
    kind: "Role",
    metadata: { name: "no-prod" },
    spec: { deny: { node_labels: { env: "prod" } } },
  } as never);
  await env.source.apply({
    apiVersion: API_VERSION,
    kind: "Role",
    metadata: { name: "lab-root" },
    spec: { allow: { logins: ["root"], node_labels: { env: "lab" } } },
  } as never);
  // A node joined with a token pinning env=prod; it asks for env=lab itself (the token wins).
  const tls = generateEcdsaP256();
  const res = await callUnary(env.client, "RegisterAgent", {
    token: await env.addToken("prod-node", { labels: { env: "prod" } }),
    hostname: "prod-node",
    host_ssh_public_key: generateSshKeyPair("ed25519").publicLine,
    tls_public_key_pem: String(tls.publicKey.export({ type: "spki", format: "pem" })),
    labels: { env: "lab" },
    addresses: ["127.0.0.1:3022"],
  });
  agentId = res.agent_id ?? "";
  for (const name of ["carl", "lara"]) await setPassword(env.backend, name, PASSWORD);
  agent = createAuthClient({
    address: env.address,
    caPems: res.host_ca_pems ?? [],
    serverName: env.serverName,
    certPem: res.tls_certificate_pem ?? "",
    keyPem: privateKeyToPem(tls.privateKey),
  });
}, 120_000);

afterAll(async () => {
  agent?.close();
  await env?.close();
});

describe("AuthorizeSshLogin", () => {
  it("allows a login one of the certificate's roles grants on this node, and names the identity", async () => {
    const r = await ask(await userCert("bob"), "deploy");
    expect(r).toMatchObject({ kind: "user", name: "bob", roles: ["access"] });
    expect(r.reason).toMatch(/allowed by role "access"/);
  });

  it("refuses a login the certificate does not name", async () => {
    const r = await statusOf(ask(await userCert("bob"), "root"));
    expect(r.code).toBe(status.PERMISSION_DENIED);
    expect(r.details).toMatch(/not valid for principal "root"/);
  });

  it("decides on the node record's labels, not on what the node asked for", async () => {
    // root on env=lab: the node asked for env=lab, but its record says env=prod (the token's).
    await env.source.apply({
      apiVersion: API_VERSION,
      kind: "User",
      metadata: { name: "lara" },
      spec: { roles: ["lab-root"], traits: {} },
    } as never);
    const r = await statusOf(ask(await userCert("lara"), "root"));
    expect(r.code).toBe(status.PERMISSION_DENIED);
    expect(r.details).toMatch(/no role allows login "root" on this node/);
  });

  it("applies deny node labels of a role the certificate carries", async () => {
    await env.source.apply({
      apiVersion: API_VERSION,
      kind: "User",
      metadata: { name: "bob" },
      spec: { roles: ["access", "no-prod"], traits: { logins: ["bob", "deploy"] } },
    } as never);
    try {
      const r = await statusOf(ask(await userCert("bob"), "bob"));
      expect(r.code).toBe(status.PERMISSION_DENIED);
      expect(r.details).toMatch(/node denied by role "no-prod"/);
    } finally {
      await env.source.apply({
        apiVersion: API_VERSION,
        kind: "User",
        metadata: { name: "bob" },
        spec: { roles: ["access"], traits: { logins: ["bob", "deploy"] } },
      } as never);
    }
  });

  it("uses the user's traits of now: a login template that no longer expands to the login grants nothing", async () => {
    const cert = await userCert("bob");
    await env.source.apply({
      apiVersion: API_VERSION,
      kind: "User",
      metadata: { name: "bob" },
      spec: { roles: ["access"], traits: { logins: ["bob"] } },
    } as never);
    try {
      expect((await statusOf(ask(cert, "deploy"))).code).toBe(status.PERMISSION_DENIED);
      expect((await ask(cert, "bob")).name).toBe("bob");
    } finally {
      await env.source.apply({
        apiVersion: API_VERSION,
        kind: "User",
        metadata: { name: "bob" },
        spec: { roles: ["access"], traits: { logins: ["bob", "deploy"] } },
      } as never);
    }
  });

  it("refuses once the user is disabled or deleted", async () => {
    const cert = await userCert("carl");
    expect((await ask(cert, "carl")).name).toBe("carl");
    await env.source.apply({
      apiVersion: API_VERSION,
      kind: "User",
      metadata: { name: "carl" },
      spec: { roles: ["access", "prod-viewer"], traits: { logins: ["carl"] }, disabled: true },
    } as never);
    const r = await statusOf(ask(cert, "carl"));
    expect(r.code).toBe(status.PERMISSION_DENIED);
    expect(r.details).toMatch(/user carl may not log in any more/);
  });

  it("refuses a certificate from the user CA that carries no identity", async () => {
    // Signed by the real user CA, as a certificate from before the identity extension would be.
    const key = generateSshKeyPair("ed25519");
    const cert = env.cas.sshUserSigner.sign({
      type: "user",
      publicKey: key.publicLine,
      keyId: "user=bob session=0",
      principals: ["bob"],
      validAfter: new Date(Date.now() - 60_000),
      validBefore: new Date(Date.now() + 600_000),
    });
    const r = await statusOf(ask(cert.line, "bob"));
    expect(r.code).toBe(status.UNAUTHENTICATED);
    expect(r.details).toMatch(/carries no svc identity/);
  });

  it("refuses a certificate with an admin identity signed by another CA", async () => {
    const other = new SshCertSigner(generateKeyPairSync("ed25519").privateKey);
    const cert = other.sign({
      type: "user",
      publicKey: generateSshKeyPair("ed25519").publicLine,
      keyId: "user=alice",
      principals: ["root"],
      validAfter: new Date(Date.now() - 60_000),
      validBefore: new Date(Date.now() + 600_000),
      valueExtensions: encodeCertIdentity({ kind: "user", name: "alice", roles: ["admin"], traits: {} }),
    });
    const r = await statusOf(ask(cert.line, "root"));
    expect(r.code).toBe(status.UNAUTHENTICATED);
  });

  it("refuses an expired certificate and malformed input with clear statuses", async () => {
    const key = generateSshKeyPair("ed25519");
    const expired = env.cas.sshUserSigner.sign({
      type: "user",
      publicKey: key.publicLine,
      keyId: "user=bob",
      principals: ["bob"],
      validAfter: new Date(Date.now() - 7200_000),
      validBefore: new Date(Date.now() - 3600_000),
      valueExtensions: encodeCertIdentity({ kind: "user", name: "bob", roles: ["access"], traits: {} }),
    });
    expect((await statusOf(ask(expired.line, "bob"))).code).toBe(status.UNAUTHENTICATED);
    expect((await statusOf(ask("not a certificate", "bob"))).code).toBe(status.INVALID_ARGUMENT);
    expect((await statusOf(ask(await userCert("bob"), ""))).code).toBe(status.INVALID_ARGUMENT);
  });

  it("is for agents only: a user session cannot ask", async () => {
    const r = await statusOf(
      callUnary(
        env.client,
        "AuthorizeSshLogin",
        { ssh_certificate: await userCert("bob"), login: "bob", remote_address: "" },
        userMetadata(await env.login("bob")),
      ),
    );
    expect(r.code).toBe(status.PERMISSION_DENIED);
  });

  it("scoped certificates list only the node's logins; hidden nodes are NOT_FOUND", async () => {
    const key = generateSshKeyPair("ed25519");
    const scoped = await callUnary(
      env.client,
      "IssueUserCerts",
      { ssh_public_key: key.publicLine, ttl_seconds: 600, node: "prod-node" },
      userMetadata(await env.login("bob")),
    );
    expect(scoped.principals).toEqual(["bob", "deploy"]);
    const hidden = await statusOf(
      callUnary(
        env.client,
        "IssueUserCerts",
        { ssh_public_key: key.publicLine, ttl_seconds: 600, node: "prod-node" },
        userMetadata(await env.login("lara")),
      ),
    );
    expect(hidden.code).toBe(status.NOT_FOUND);
  });
});
