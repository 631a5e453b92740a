// RegisterAgent against the real auth server over gRPC/TLS 1.3: the host certificate verifies
// against the host CA (also with the real ssh-keygen), the client certificate authenticates the
// agent's calls, tokens are one-time with clear refusals, the race for one token has exactly one
// winner, and heartbeats keep the joined hostname and the token's labels.
import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifySshCertificate } from "../core/certs/ssh-cert.ts";
import { generateSshKeyPair } from "../core/certs/ssh-keys.ts";
import { generateEcdsaP256, privateKeyToPem, verifyX509Leaf } from "../core/certs/x509.ts";
import { systemClock } from "../core/clock.ts";
import type { RegisterAgentRequest } from "../proto/generated/svc/v1/RegisterAgentRequest.ts";
import { fetchPinnedHostCa } from "../server/agent/ca-pin.ts";
import { RECORDING_FORMAT } from "../server/agent/recorder.ts";
import { uploadRecordingFile } from "../server/agent/upload.ts";
import { agentMetadata, callUnary, createAuthClient, userMetadata } from "../server/auth/client.ts";
import { type AgentAuthEnv, holdablePuts, startAgentAuthEnv } from "./agent-fixture.ts";
import { statusOf } from "./auth-fixture.ts";

const run = promisify(execFile);
let env: AgentAuthEnv;
let dir = "";
let puts: ReturnType<typeof holdablePuts>;

let seq = 0;
/** A join request with a fresh hostname (names are unique per node) unless `over` names one. */
function joinRequest(token: string, over: Partial<RegisterAgentRequest> = {}) {
  const host = generateSshKeyPair("ed25519");
  const tls = generateEcdsaP256();
  return {
    host,
    tls,
    req: {
      token,
      hostname: `node-${++seq}`,
      host_ssh_public_key: host.publicLine,
      tls_public_key_pem: String(tls.publicKey.export({ type: "spki", format: "pem" })),
      labels: { env: "dev", role: "web" },
      addresses: ["127.0.0.1:3022"],
      ...over,
    } satisfies RegisterAgentRequest,
  };
}

async function joinEvents(success: boolean) {
  const admin = await env.login("alice");
  const r = await callUnary(
    env.client,
    "SearchAuditEvents",
    { type: "node.join", limit: 500 },
    userMetadata(admin),
  );
  return r.items.filter((e) => e.success === success);
}

beforeAll(async () => {
  env = await startAgentAuthEnv({
    wrapBackend: (b) => {
      puts = holdablePuts(b);
      return puts.backend;
    },
  });
  dir = await mkdtemp(join(tmpdir(), "svc-agent-join-"));
});

afterAll(async () => {
  await env?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("RegisterAgent", () => {
  it("issues a host certificate from the host CA and a client certificate that authenticates the agent", async () => {
    const token = await env.addToken("join-ok", { labels: { env: "prod" } });
    const { host, tls, req } = joinRequest(token, { hostname: "node-a" });
    const res = await callUnary(env.client, "RegisterAgent", req);
    const id = res.agent_id ?? "";
    expect(id).toMatch(/^[0-9a-f-]{36}$/);

    const cert = verifySshCertificate(res.host_ssh_certificate ?? "", {
      trustedCaKeys: [env.cas.sshHostCaPublicKey],
      type: "host",
      principal: id,
      clock: systemClock,
    });
    // The node ID and the (unique) hostname; never the addresses the node claimed for itself.
    expect(cert.principals).toEqual([id, "node-a"]);
    expect(cert.keyId).toBe(`host:${id}`);
    expect(cert.publicKey.export({ format: "jwk" })).toEqual(host.publicKey.export({ format: "jwk" }));
    // The real ssh-keygen reads it as a host certificate.
    await writeFile(join(dir, "host-cert.pub"), `${res.host_ssh_certificate}\n`);
    const { stdout } = await run("ssh-keygen", ["-L", "-f", join(dir, "host-cert.pub")]);
    expect(stdout).toMatch(/Type: ssh-ed25519-cert-v01@openssh.com host certificate/);
    expect(stdout).toContain("node-a");

    const leaf = await verifyX509Leaf(res.tls_certificate_pem ?? "", [env.cas.hostCa.certPem], {
      clock: systemClock,
      usage: "client",
    });
    expect(leaf.uris).toEqual([`svc://agent/${id}`]);
    expect(res.host_ca_pems).toEqual([env.cas.hostCa.certPem]);
    expect(res.user_ca_ssh_public_keys).toEqual([env.cas.sshUserCaPublicKey]);

    // The client certificate + x-agent-id make the agent's calls; the token's label wins.
    const agent = createAuthClient({
      address: env.address,
      caPems: res.host_ca_pems ?? [],
      serverName: env.serverName,
      certPem: res.tls_certificate_pem ?? "",
      keyPem: privateKeyToPem(tls.privateKey),
    });
    try {
      await callUnary(
        agent,
        "Heartbeat",
        {
          hostname: "node-a",
          addresses: ["127.0.0.1:3022"],
          labels: { env: "staging", extra: "1" },
          version: "t",
        },
        agentMetadata(id),
      );
      const nodes = await callUnary(env.client, "ListNodes", {}, userMetadata(await env.login("alice")));
      const node = nodes.nodes.find((n) => n.id === id);
      expect(node).toMatchObject({ hostname: "node-a", status: "online", addresses: ["127.0.0.1:3022"] });
      expect(node?.labels).toEqual({ env: "prod", extra: "1" });

      // A heartbeat under another hostname is refused.
      const renamed = await statusOf(
        callUnary(
          agent,
          "Heartbeat",
          { hostname: "node-b", addresses: [], labels: {}, version: "t" },
          agentMetadata(id),
        ),
      );
      expect(renamed.code).toBe(status.INVALID_ARGUMENT);
      expect(renamed.details).toMatch(/hostname must stay "node-a"/);
    } finally {
      agent.close();
    }
    expect((await joinEvents(true)).some((e) => JSON.parse(e.fields_json).agent_id === id)).toBe(true);
  });

  it("refuses a used token with a clear message and audits the failure", async () => {
    const token = await env.addToken("join-once");
    await callUnary(env.client, "RegisterAgent", joinRequest(token).req);
    const again = await statusOf(callUnary(env.client, "RegisterAgent", joinRequest(token).req));
    expect(again).toEqual({ code: status.PERMISSION_DENIED, details: "join token has already been used" });
    const failures = await joinEvents(false);
    expect(
      failures.some((e) => JSON.parse(e.fields_json).reason === "join token has already been used"),
    ).toBe(true);
  });

  it("refuses an expired token", async () => {
    const token = await env.addToken("join-old", { expires: new Date(Date.now() - 1000) });
    const r = await statusOf(callUnary(env.client, "RegisterAgent", joinRequest(token).req));
    expect(r).toEqual({ code: status.PERMISSION_DENIED, details: "join token has expired" });
  });

  it("says only 'not valid' for a wrong secret or an unknown name, and why for the right secret", async () => {
    const token = await env.addToken("join-secret");
    const wrong = await statusOf(
      callUnary(env.client, "RegisterAgent", joinRequest("join-secret.AAAAwrong").req),
    );
    const unknown = await statusOf(
      callUnary(env.client, "RegisterAgent", joinRequest("no-such.AAAAwrong").req),
    );
    expect(wrong).toEqual({ code: status.PERMISSION_DENIED, details: "join token is not valid" });
    expect(unknown).toEqual(wrong);
    const malformed = await statusOf(callUnary(env.client, "RegisterAgent", joinRequest("no-dot-here").req));
    expect(malformed.code).toBe(status.INVALID_ARGUMENT);
    expect(malformed.details).toBe("join token must look like <name>.<secret>");
    // The wrong attempts did not spend the token.
    const ok = await callUnary(env.client, "RegisterAgent", joinRequest(token).req);
    expect(ok.agent_id).toBeTruthy();

    const bot = await env.addToken("join-bot", { roles: ["bot"] });
    const r = await statusOf(callUnary(env.client, "RegisterAgent", joinRequest(bot).req));
    expect(r).toEqual({
      code: status.PERMISSION_DENIED,
      details: "join token is not for nodes (roles: bot)",
    });
  });

  it("refuses bad requests before spending the token", async () => {
    const token = await env.addToken("join-bad");
    for (const over of [
      { host_ssh_public_key: "ssh-ed25519 AAAA" },
      { tls_public_key_pem: "" },
      { addresses: ["no-port"] },
      { hostname: "bad host" },
    ]) {
      const r = await statusOf(callUnary(env.client, "RegisterAgent", joinRequest(token, over).req));
      expect(r.code).toBe(status.INVALID_ARGUMENT);
    }
    expect((await callUnary(env.client, "RegisterAgent", joinRequest(token).req)).agent_id).toBeTruthy();
  });

  it("admits an agent that advertises no address (it serves through a reverse tunnel), never an agentless one", async () => {
    const agentless = await statusOf(
      callUnary(
        env.client,
        "RegisterAgent",
        joinRequest(await env.addToken("join-noaddr-agentless"), {
          addresses: [],
          agentless: true,
          tls_public_key_pem: "",
        }).req,
      ),
    );
    expect(agentless).toEqual({
      code: status.INVALID_ARGUMENT,
      details: "at least one address (host:port) is required",
    });
    const r = await callUnary(
      env.client,
      "RegisterAgent",
      joinRequest(await env.addToken("join-noaddr"), { addresses: [], hostname: "tunnel-only" }).req,
    );
    expect(r.agent_id).toBeTruthy();
  });

  it("lets exactly one of many concurrent joins win a token", async () => {
    const token = await env.addToken("join-race");
    const clients = Array.from({ length: 6 }, () =>
      createAuthClient({
        address: env.address,
        caPems: [env.cas.hostCa.certPem],
        serverName: env.serverName,
      }),
    );
    try {
      const results = await Promise.all(
        clients.map((c, i) =>
          statusOf(callUnary(c, "RegisterAgent", joinRequest(token, { hostname: `racer-${i}` }).req)),
        ),
      );
      expect(results.filter((r) => r.code === 0)).toHaveLength(1);
      for (const r of results.filter((x) => x.code !== 0)) {
        expect(r).toEqual({ code: status.PERMISSION_DENIED, details: "join token has already been used" });
      }
    } finally {
      for (const c of clients) c.close();
    }
  });

  it("replaces an unspecified advertised host with the address auth sees", async () => {
    const token = await env.addToken("join-any");
    const res = await callUnary(
      env.client,
      "RegisterAgent",
      joinRequest(token, { addresses: ["0.0.0.0:4022"] }).req,
    );
    const nodes = await callUnary(env.client, "ListNodes", {}, userMetadata(await env.login("alice")));
    expect(nodes.nodes.find((n) => n.id === res.agent_id)?.addresses).toEqual(["127.0.0.1:4022"]);
  });

  it("refuses a second node under a registered hostname (any case), audits it, and keeps the token", async () => {
    const first = await callUnary(
      env.client,
      "RegisterAgent",
      joinRequest(await env.addToken("name-first"), { hostname: "web-1" }).req,
    );
    expect(first.agent_id).toBeTruthy();
    const token = await env.addToken("name-second");
    for (const hostname of ["web-1", "WEB-1"]) {
      const r = await statusOf(callUnary(env.client, "RegisterAgent", joinRequest(token, { hostname }).req));
      expect(r.code).toBe(status.ALREADY_EXISTS);
      expect(r.details).toMatch(/hostname "(web-1|WEB-1)" is already registered to another node/);
    }
    const failures = await joinEvents(false);
    expect(failures.some((e) => /already registered/.test(JSON.parse(e.fields_json).reason))).toBe(true);
    // The refused joins did not spend the token.
    expect((await callUnary(env.client, "RegisterAgent", joinRequest(token).req)).agent_id).toBeTruthy();
  });

  it("a failed join leaves its hostname free; a join in progress holds it, one that died does not forever", async () => {
    // A used token: refused after the name was reserved, which must not keep the name.
    const used = await env.addToken("name-used");
    await callUnary(env.client, "RegisterAgent", joinRequest(used).req);
    const refused = await statusOf(
      callUnary(env.client, "RegisterAgent", joinRequest(used, { hostname: "free-1" }).req),
    );
    expect(refused.code).toBe(status.PERMISSION_DENIED);
    const ok = await callUnary(
      env.client,
      "RegisterAgent",
      joinRequest(await env.addToken("name-free"), { hostname: "free-1" }).req,
    );
    expect(ok.agent_id).toBeTruthy();
    // A reservation without a registration: a join in progress (recent) holds the name...
    const key = "node-hostnames/half-1";
    await env.backend.put(key, { agent_id: "in-progress", at: new Date().toISOString() });
    const token = await env.addToken("name-half");
    const busy = await statusOf(
      callUnary(env.client, "RegisterAgent", joinRequest(token, { hostname: "half-1" }).req),
    );
    expect(busy.code).toBe(status.ALREADY_EXISTS);
    // ...but one left by a join that died long ago is taken over.
    await env.backend.put(key, { agent_id: "died", at: new Date(Date.now() - 3600_000).toISOString() });
    const taken = await callUnary(
      env.client,
      "RegisterAgent",
      joinRequest(token, { hostname: "half-1" }).req,
    );
    expect(taken.agent_id).toBeTruthy();
    expect((await env.backend.get(key)).value).toMatchObject({ agent_id: taken.agent_id });
  });

  it("DeleteNode: the node's certificate is refused at once, its name is free, and only admins may", async () => {
    const { tls, req } = joinRequest(await env.addToken("to-remove"), { hostname: "gone-1" });
    const res = await callUnary(env.client, "RegisterAgent", req);
    const id = res.agent_id ?? "";
    const agent = createAuthClient({
      address: env.address,
      caPems: res.host_ca_pems ?? [],
      serverName: env.serverName,
      certPem: res.tls_certificate_pem ?? "",
      keyPem: privateKeyToPem(tls.privateKey),
    });
    const beat = () =>
      callUnary(
        agent,
        "Heartbeat",
        { hostname: "gone-1", addresses: ["127.0.0.1:3022"], labels: {}, version: "t" },
        agentMetadata(id),
      );
    try {
      await beat();
      const bob = await statusOf(
        callUnary(env.client, "DeleteNode", { node: "gone-1" }, userMetadata(await env.login("bob"))),
      );
      expect(bob.code).toBe(status.PERMISSION_DENIED);
      const admin = userMetadata(await env.login("alice"));
      expect(await callUnary(env.client, "DeleteNode", { node: "gone-1" }, admin)).toEqual({
        id,
        hostname: "gone-1",
      });
      const after = await statusOf(beat());
      expect(after).toEqual({ code: status.UNAUTHENTICATED, details: "this node has been removed" });
      const emit = await statusOf(
        callUnary(agent, "EmitAuditEvent", { event_type: "ssh.auth", user_name: "x" }, agentMetadata(id)),
      );
      expect(emit.code).toBe(status.UNAUTHENTICATED);
      // The node-side login decision and recording uploads too: the interceptor refuses every
      // agent RPC of a removed node, whatever the handler.
      const login = await statusOf(
        callUnary(
          agent,
          "AuthorizeSshLogin",
          { ssh_certificate: "", login: "root", remote_address: "" },
          agentMetadata(id),
        ),
      );
      expect(login).toEqual({ code: status.UNAUTHENTICATED, details: "this node has been removed" });
      await writeFile(join(dir, "gone.cast"), '{"version":2,"width":80,"height":24}\n');
      const upload = uploadRecordingFile(
        agent,
        agentMetadata(id),
        {
          id: "gone-recording",
          user_name: "alice",
          login: "root",
          protocol: "ssh",
          format: RECORDING_FORMAT,
          start_unix_ms: Date.now() - 1000,
          end_unix_ms: Date.now(),
          truncated: false,
        },
        join(dir, "gone.cast"),
      );
      await expect(upload).rejects.toThrow("this node has been removed");
      const nodes = await callUnary(env.client, "ListNodes", {}, admin);
      expect(nodes.nodes.some((n) => n.id === id)).toBe(false);
      expect((await statusOf(callUnary(env.client, "DeleteNode", { node: "gone-1" }, admin))).code).toBe(
        status.NOT_FOUND,
      );
      const audit = await callUnary(env.client, "SearchAuditEvents", { type: "node.delete" }, admin);
      expect(audit.items.map((e) => JSON.parse(e.fields_json))).toContainEqual(
        expect.objectContaining({ node_id: id, hostname: "gone-1" }),
      );
      // The name is free for a new node.
      const again = await callUnary(
        env.client,
        "RegisterAgent",
        joinRequest(await env.addToken("reuse-name"), { hostname: "gone-1" }).req,
      );
      expect(again.agent_id).not.toBe(id);
    } finally {
      agent.close();
    }
  });

  it("nodes that share a name from before names were unique: the name is taken, removal needs the ID", async () => {
    // Two registrations written as an older auth did (no hostname reservation).
    const twins = ["twin-a", "twin-b"].map((suffix) => ({
      id: `00000000-0000-4000-8000-0000000000${suffix === "twin-a" ? "0a" : "0b"}`,
      hostname: "legacy-twin",
      addresses: ["127.0.0.1:3022"],
      labels: {},
      pinned_labels: {},
      agentless: false,
      host_public_key: generateSshKeyPair("ed25519").publicLine,
      host_key_fingerprint: "",
      token: "old",
      joined_at: new Date().toISOString(),
    }));
    for (const t of twins) await env.backend.put(`agents/${t.id}`, t);
    const joined = await statusOf(
      callUnary(
        env.client,
        "RegisterAgent",
        joinRequest(await env.addToken("twin-3"), { hostname: "Legacy-Twin" }).req,
      ),
    );
    expect(joined.code).toBe(status.ALREADY_EXISTS);
    const admin = userMetadata(await env.login("alice"));
    const byName = await statusOf(callUnary(env.client, "DeleteNode", { node: "legacy-twin" }, admin));
    expect(byName.code).toBe(status.INVALID_ARGUMENT);
    expect(byName.details).toContain(`2 nodes are named "legacy-twin": remove one by its node ID`);
    const id = twins[1]?.id ?? "";
    expect(await callUnary(env.client, "DeleteNode", { node: id }, admin)).toEqual({
      id,
      hostname: "legacy-twin",
    });
    // One left: the name now says which.
    expect((await callUnary(env.client, "DeleteNode", { node: "legacy-twin" }, admin)).id).toBe(twins[0]?.id);
  });

  it("a heartbeat in flight while the node is removed (by ID) does not bring it back", async () => {
    const { tls, req } = joinRequest(await env.addToken("removed-mid-beat"), { hostname: "mid-1" });
    const res = await callUnary(env.client, "RegisterAgent", req);
    const id = res.agent_id ?? "";
    const agent = createAuthClient({
      address: env.address,
      caPems: res.host_ca_pems ?? [],
      serverName: env.serverName,
      certPem: res.tls_certificate_pem ?? "",
      keyPem: privateKeyToPem(tls.privateKey),
    });
    const admin = userMetadata(await env.login("alice"));
    try {
      // The heartbeat has passed every check and is about to write the node record when the
      // admin removes the node (as on another auth replica).
      const gate = puts.hold(`nodes/${encodeURIComponent(id)}`);
      const beat = statusOf(
        callUnary(
          agent,
          "Heartbeat",
          { hostname: "mid-1", addresses: ["127.0.0.1:3022"], labels: {}, version: "t" },
          agentMetadata(id),
        ),
      );
      await gate.reached;
      expect(await callUnary(env.client, "DeleteNode", { node: id }, admin)).toEqual({
        id,
        hostname: "mid-1",
      });
      gate.release();
      expect(await beat).toEqual({ code: status.UNAUTHENTICATED, details: "this node has been removed" });
      const nodes = await callUnary(env.client, "ListNodes", {}, admin);
      expect(nodes.nodes.some((n) => n.id === id)).toBe(false);
    } finally {
      agent.close();
    }
  });

  it("hands out the host CA only when it matches the pin", async () => {
    expect(await fetchPinnedHostCa(env.address, env.pin)).toEqual([env.cas.hostCa.certPem]);
    await expect(fetchPinnedHostCa(env.address, `sha256:${"0".repeat(64)}`)).rejects.toThrow(
      /does not match the CA pin/,
    );
  });
});
