// Agentless mode: a real OpenSSH sshd is registered as a node with a node token (its own host key
// certified by auth's host CA, the user CA written for TrustedUserCAKeys), the OpenSSH client logs
// in with an IssueUserCerts certificate trusting it through @cert-authority, and auth's probe shows
// it online while it proves the certified key and offline once it is gone.
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateSshKeyPair } from "../core/certs/ssh-keys.ts";
import { systemClock } from "../core/clock.ts";
import { registerAgentlessNode } from "../server/agent/agentless.ts";
import { AgentlessProbe } from "../server/auth/agent-probe.ts";
import { callUnary, userMetadata } from "../server/auth/client.ts";
import { type AgentAuthEnv, holdablePuts, silent, startAgentAuthEnv } from "./agent-fixture.ts";
import { statusOf } from "./auth-fixture.ts";
import { certSshArgs, keyWithCertificate } from "./harness/ssh-login.ts";
import { type RunningSshd, startSshd } from "./harness/sshd.ts";

const run = promisify(execFile);
let env: AgentAuthEnv;
let dir = "";
let sshd: RunningSshd | undefined;
let port = 0;
let nodeId = "";
let admin = "";

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const a = srv.address();
      srv.close(() => resolve(typeof a === "object" && a ? a.port : 0));
    });
  });
}

async function nodeOf(id: string) {
  const r = await callUnary(env.client, "ListNodes", {}, userMetadata(admin));
  return r.nodes.find((n) => n.id === id);
}

const probe = (backend = env.backend) =>
  new AgentlessProbe({
    backend,
    clock: systemClock,
    logger: silent,
    hostCaKeys: () => [env.cas.sshHostCaPublicKey],
    timeoutMs: 15_000,
  });

beforeAll(async () => {
  env = await startAgentAuthEnv({ heartbeatIntervalSeconds: 1 });
  admin = await env.login("alice");
  dir = await mkdtemp(join(tmpdir(), "svc-agentless-"));
  const hostKeyPath = join(dir, "ssh_host_ed25519_key");
  await run("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", "legacy-db", "-f", hostKeyPath]);
  port = await freePort();
  const reg = await registerAgentlessNode({
    authAddress: env.address,
    authServerName: env.serverName,
    caPin: env.pin,
    token: await env.addToken("agentless-token", { labels: { env: "legacy" } }),
    hostname: "legacy-db",
    address: `127.0.0.1:${port}`,
    labels: { os: "debian" },
    hostPublicKeyFile: `${hostKeyPath}.pub`,
    outDir: join(dir, "svc"),
  });
  nodeId = reg.nodeId;
  sshd = await startSshd({
    hostKey: { privatePath: hostKeyPath, publicLine: await readFile(`${hostKeyPath}.pub`, "utf8") },
    hostCertificatePath: reg.hostCertificatePath,
    trustedUserCaKeys: (await readFile(reg.trustedUserCaKeysPath, "utf8")).split("\n").filter(Boolean),
    // The registered address: sshd listens on every Port line (the harness adds its own).
    extraConfig: [`Port ${port}`, ...reg.sshdConfig],
  });
}, 120_000);

afterAll(async () => {
  await sshd?.stop();
  await env?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("agentless sshd node", () => {
  it("is listed with the token's labels and reached by ssh with an IssueUserCerts certificate", async () => {
    const node = await nodeOf(nodeId);
    expect(node).toMatchObject({
      hostname: "legacy-db",
      addresses: [`127.0.0.1:${port}`],
      version: "agentless",
    });
    expect(node?.labels).toEqual({ os: "debian", env: "legacy" });

    const keyPath = join(dir, "alice");
    await keyWithCertificate(keyPath, async (pub) => {
      const md = userMetadata(admin);
      return (await callUnary(env.client, "IssueUserCerts", { ssh_public_key: pub, ttl_seconds: 600 }, md))
        .ssh_certificate;
    });
    const knownHosts = join(dir, "known_hosts");
    await writeFile(knownHosts, `@cert-authority legacy-db ${env.cas.sshHostCaPublicKey}\n`);
    const { stdout } = await run(
      "ssh",
      [...certSshArgs({ key: keyPath, knownHosts, port, hostAlias: "legacy-db" }), "echo agentless-ok"],
      { timeout: 60_000 },
    );
    expect(stdout).toBe("agentless-ok\n");
  });

  it("gets <login>@<node id> principals; the probe restores the index of nodes registered before it", async () => {
    const principals = async () =>
      (
        await callUnary(
          env.client,
          "IssueUserCerts",
          { ssh_public_key: generateSshKeyPair("ed25519").publicLine, ttl_seconds: 600, node: "" },
          userMetadata(admin),
        )
      ).principals;
    expect(await principals()).toContain(`alice@${nodeId}`);
    // As a registration from before the index: the node gets no such principals...
    await env.backend.deleteRange("agentless-nodes/");
    await new Promise((r) => setTimeout(r, 2100)); // past the per-process reuse of the list
    expect(await principals()).not.toContain(`alice@${nodeId}`);
    // ...until the probe's next round writes the index again.
    await probe().probeOnce();
    expect(await principals()).toContain(`alice@${nodeId}`);
  });

  it("is online while the probe sees its certified key, and not for an impostor key", async () => {
    // An impostor registration: the same address, but a key the sshd does not hold.
    const impostor = await callUnary(env.client, "RegisterAgent", {
      token: await env.addToken("agentless-impostor"),
      hostname: "impostor",
      host_ssh_public_key: generateSshKeyPair("ed25519").publicLine,
      tls_public_key_pem: "",
      labels: {},
      addresses: [`127.0.0.1:${port}`],
      agentless: true,
    });
    // Let the join-time records age out (offline after 3 x 1 s), then probe.
    await new Promise((r) => setTimeout(r, 3500));
    const results = await probe().probeOnce();
    expect(results).toContainEqual({ id: nodeId, online: true });
    expect(results).toContainEqual({ id: impostor.agent_id, online: false });
    expect((await nodeOf(nodeId))?.status).toBe("online");
    expect((await nodeOf(impostor.agent_id ?? ""))?.status).toBe("offline");
  });

  it("a node removed while the probe checks it stays removed: not listed, no <login>@<id> principals", async () => {
    // A second sshd registered as its own agentless node.
    const keyPath = join(dir, "race_host_ed25519_key");
    await run("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", keyPath]);
    const racePort = await freePort();
    const reg = await registerAgentlessNode({
      authAddress: env.address,
      authServerName: env.serverName,
      caPin: env.pin,
      token: await env.addToken("agentless-race"),
      hostname: "race-db",
      address: `127.0.0.1:${racePort}`,
      labels: {},
      hostPublicKeyFile: `${keyPath}.pub`,
      outDir: join(dir, "race"),
    });
    const raceSshd = await startSshd({
      hostKey: { privatePath: keyPath, publicLine: await readFile(`${keyPath}.pub`, "utf8") },
      hostCertificatePath: reg.hostCertificatePath,
      trustedUserCaKeys: (await readFile(reg.trustedUserCaKeysPath, "utf8")).split("\n").filter(Boolean),
      extraConfig: [`Port ${racePort}`, ...reg.sshdConfig],
    });
    try {
      expect(await probe().probeOnce()).toContainEqual({ id: reg.nodeId, online: true });
      // The probe listed the node and is about to write it back into the agentless index when
      // the admin removes it (as on another auth replica); then it reaches the live sshd.
      const puts = holdablePuts(env.backend);
      const gate = puts.hold(`agentless-nodes/${encodeURIComponent(reg.nodeId)}`);
      const round = probe(puts.backend).probeOnce();
      await gate.reached;
      await callUnary(env.client, "DeleteNode", { node: "race-db" }, userMetadata(admin));
      gate.release();
      // It reached the live sshd, but reports (and keeps) the node as the removed one it is.
      expect(await round).toContainEqual({ id: reg.nodeId, online: false });
      expect(await nodeOf(reg.nodeId)).toBeUndefined();
      await new Promise((r) => setTimeout(r, 2100)); // past the per-process reuse of the index
      const cert = await callUnary(
        env.client,
        "IssueUserCerts",
        { ssh_public_key: generateSshKeyPair("ed25519").publicLine, ttl_seconds: 600, node: "" },
        userMetadata(admin),
      );
      expect(cert.principals).not.toContain(`alice@${reg.nodeId}`);
      expect(cert.principals).toContain(`alice@${nodeId}`);
    } finally {
      await raceSshd.stop();
    }
  });

  it("goes offline once the sshd is gone", async () => {
    await sshd?.stop();
    sshd = undefined;
    await new Promise((r) => setTimeout(r, 3500));
    const results = await probe().probeOnce();
    expect(results).toContainEqual({ id: nodeId, online: false });
    expect((await nodeOf(nodeId))?.status).toBe("offline");
  });

  it("refuses an agentless join that asks for a client certificate", async () => {
    const r = await statusOf(
      callUnary(env.client, "RegisterAgent", {
        token: await env.addToken("agentless-bad"),
        hostname: "x",
        host_ssh_public_key: generateSshKeyPair("ed25519").publicLine,
        tls_public_key_pem: "-----BEGIN PUBLIC KEY-----\n-----END PUBLIC KEY-----\n",
        labels: {},
        addresses: ["127.0.0.1:22"],
        agentless: true,
      }),
    );
    expect(r.code).toBe(status.INVALID_ARGUMENT);
    expect(r.details).toMatch(/agentless node gets no client certificate/);
  });
});
