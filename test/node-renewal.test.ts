// Node certificate renewal (docs/agent.md "Renewal") against a real auth server with short node
// certificates (90 s): the agent renews on its schedule before expiry and keeps serving the real
// OpenSSH client (ssh-keyscan sees the new host certificate, a session open across the renewal
// keeps running) and heartbeating with the new client certificate; the old certificate stays
// valid until it expires; auth refuses a renewal too soon, from a removed node or for a key it does
// not allow; a crash between the RPC and the save (or during the save) leaves the old identity
// usable for the next start; an agent offline past expiry says to join again, and joins again
// with a token under its old name.
import { execFile, spawn } from "node:child_process";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseSshCertificate } from "../core/certs/ssh-cert.ts";
import { generateSshKeyPair } from "../core/certs/ssh-keys.ts";
import { generateEcdsaP256 } from "../core/certs/x509.ts";
import { API_VERSION } from "../core/resources/index.ts";
import { AgentCredentials, identityValidity } from "../server/agent/credentials.ts";
import { type AgentIdentity, IDENTITY_FILE, loadIdentity, saveIdentity } from "../server/agent/identity.ts";
import { joinCluster } from "../server/agent/join.ts";
import { type RunningAgent, runAgent } from "../server/agent/main.ts";
import { DEFAULT_RENEWAL_POLICY, renewalDelay, retryDelay } from "../server/agent/renewal.ts";
import { agentMetadata, callUnary, createAuthClient, userMetadata } from "../server/auth/client.ts";
import { AGENT_PREFIX } from "../server/auth/join-agent.ts";
import { type AgentAuthEnv, silent, startAgentAuthEnv } from "./agent-fixture.ts";
import { statusOf } from "./auth-fixture.ts";
import { type CertLogin, certSshArgs, keyWithCertificate } from "./harness/ssh-login.ts";

const run = promisify(execFile);
const TTL_SECONDS = 90;
let env: AgentAuthEnv;
let dir = "";
let admin = "";
const agents: RunningAgent[] = [];

beforeAll(async () => {
  env = await startAgentAuthEnv({ nodeCertTtlSeconds: TTL_SECONDS, heartbeatIntervalSeconds: 1 });
  dir = await mkdtemp(join(tmpdir(), "svc-node-renewal-"));
  admin = await env.login("alice");
}, 60_000);

afterAll(async () => {
  for (const a of agents) await a.close().catch(() => undefined);
  await env?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** The host certificate a real OpenSSH client is offered now. */
async function scanHostCert(port: number): Promise<ReturnType<typeof parseSshCertificate>> {
  const { stdout } = await run("ssh-keyscan", ["-c", "-T", "10", "-p", String(port), "127.0.0.1"], {
    timeout: 30_000,
  });
  // "<cert type> <base64>" per certificate offered (-c prints no host); comments start with "#".
  const m = /^(\S+-cert-v01@openssh\.com) (\S+)/m.exec(stdout);
  if (!m) throw new Error(`ssh-keyscan saw no host certificate: ${stdout}`);
  return parseSshCertificate(`${m[1]} ${m[2]}`);
}

async function userCert(name: string): Promise<string> {
  const keyPath = join(dir, name);
  await keyWithCertificate(keyPath, async (pub) => {
    const md = userMetadata(admin);
    return (await callUnary(env.client, "IssueUserCerts", { ssh_public_key: pub, ttl_seconds: 600 }, md))
      .ssh_certificate;
  });
  return keyPath;
}

async function startAgent(
  hostname: string,
  dataDir: string,
  extra: Partial<Parameters<typeof runAgent>[0]> = {},
) {
  const agent = await runAgent({
    authAddress: env.address,
    authServerName: env.serverName,
    dataDir,
    listen: "127.0.0.1:0",
    hostname,
    logger: silent,
    heartbeatIntervalSeconds: 1,
    ...extra,
  });
  agents.push(agent);
  return agent;
}

/** A node joined directly (join.ts) and saved, for the RPC-level tests. */
async function joinedNode(hostname: string): Promise<{ identity: AgentIdentity; dataDir: string }> {
  const identity = await joinCluster({
    authAddress: env.address,
    authServerName: env.serverName,
    caPin: env.pin,
    token: await env.addToken(`tok-${hostname}`),
    hostname,
    addresses: ["127.0.0.1:3022"],
    labels: {},
  });
  const dataDir = join(dir, hostname);
  await saveIdentity(dataDir, identity);
  return { identity, dataDir };
}

function clientOf(id: AgentIdentity) {
  return createAuthClient({
    address: env.address,
    serverName: env.serverName,
    caPems: id.hostCaPems,
    certPem: id.tlsCertificatePem,
    keyPem: id.tlsKeyPem,
  });
}

function renewRequest(sshKind: "ed25519" | "rsa" = "ed25519") {
  return {
    ssh_public_key: generateSshKeyPair(sshKind).publicLine,
    tls_public_key_pem: String(generateEcdsaP256().publicKey.export({ type: "spki", format: "pem" })),
  };
}

describe("node certificate renewal", () => {
  it("joins with node_cert_ttl certificates, renews them on schedule before expiry and keeps serving SSH and heartbeats", async () => {
    const dataDir = join(dir, "renew-one");
    // Renew at half the lifetime (certificates are backdated 60 s: about 15 s after the join).
    const agent = await startAgent("renew-one", dataDir, {
      token: await env.addToken("tok-renew-one"),
      caPin: env.pin,
      renewal: { at: 0.5, jitter: 0 },
    });
    const before = agent.credentials.identity();
    const first = identityValidity(before);
    expect(first.validBefore.getTime() - Date.now()).toBeLessThanOrEqual(TTL_SECONDS * 1000);
    expect(first.validBefore.getTime() - Date.now()).toBeGreaterThan((TTL_SECONDS - 10) * 1000);
    const scanned1 = await scanHostCert(agent.ssh.port);
    expect(scanned1.principals).toEqual([agent.agentId, "renew-one"]);

    // A session open across the renewal keeps running.
    const keyPath = await userCert("alice-renew");
    const knownHosts = join(dir, "known_hosts");
    await writeFile(knownHosts, `@cert-authority renew-one ${env.cas.sshHostCaPublicKey}\n`);
    const alice: CertLogin = { key: keyPath, knownHosts, port: agent.ssh.port, hostAlias: "renew-one" };
    const long = spawn("ssh", [...certSshArgs(alice), "sleep 25; echo still-open"], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let longOut = "";
    long.stdout.on("data", (d: Buffer) => {
      longOut += d.toString();
    });
    const longDone = new Promise<number | null>((resolve) => long.once("exit", (code) => resolve(code)));

    const renewed = await new Promise<AgentIdentity>((resolve, reject) => {
      const t = setTimeout(() => reject(new Error("no renewal within 60 s")), 60_000);
      agent.credentials.once("renewed", (next) => {
        clearTimeout(t);
        resolve(next);
      });
    });
    // Renewing again at once is refused: at most one renewal per tenth of the lifetime (9 s).
    const newClient = clientOf(renewed);
    try {
      const failuresBefore = (
        await env.backend.searchAudit({ type: "node.renewed", limit: 500, offset: 0 })
      ).items.filter((e) => e.success === false).length;
      for (let i = 0; i < 5; i++) {
        const again = await statusOf(
          callUnary(newClient, "RenewNodeCredentials", renewRequest(), agentMetadata(agent.agentId)),
        );
        expect(again.code).toBe(status.RESOURCE_EXHAUSTED);
      }
      // Refusals for coming too soon write no audit event (a node cannot flood the log).
      const failuresAfter = (
        await env.backend.searchAudit({ type: "node.renewed", limit: 500, offset: 0 })
      ).items.filter((e) => e.success === false).length;
      expect(failuresAfter).toBe(failuresBefore);
    } finally {
      newClient.close();
    }
    // Renewed on schedule: before the old certificates expired.
    expect(Date.now()).toBeLessThan(first.validBefore.getTime());
    expect(renewed.hostCertificate).not.toBe(before.hostCertificate);
    expect(renewed.tlsCertificatePem).not.toBe(before.tlsCertificatePem);
    expect(identityValidity(renewed).validBefore.getTime()).toBeGreaterThan(first.validBefore.getTime());

    // The real OpenSSH client is now offered the new certificate: same names, new key and serial.
    const scanned2 = await scanHostCert(agent.ssh.port);
    expect(scanned2.serial).not.toBe(scanned1.serial);
    expect(scanned2.principals).toEqual([agent.agentId, "renew-one"]);
    expect(scanned2.keyId).toBe(`host:${agent.agentId}`);
    expect(scanned2.validBefore.getTime()).toBeGreaterThan(scanned1.validBefore.getTime());
    expect(scanned2.blob.equals(parseSshCertificate(renewed.hostCertificate).blob)).toBe(true);
    const fresh = await run("ssh", [...certSshArgs(alice), "echo after-renewal"], { timeout: 30_000 });
    expect(fresh.stdout).toBe("after-renewal\n");

    // Heartbeats go on with the new client certificate; the new identity is what is on disk.
    await agent.heartbeat();
    expect((await loadIdentity(dataDir))?.tlsCertificatePem).toBe(renewed.tlsCertificatePem);
    // Auth recorded it.
    const events = await env.backend.searchAudit({ type: "node.renewed", limit: 50, offset: 0 });
    expect(events.items.some((e) => e.success && e.fields.agent_id === agent.agentId)).toBe(true);
    // The next renewal is planned before the new expiry.
    expect(agent.renewal.next()?.getTime()).toBeLessThan(identityValidity(renewed).validBefore.getTime());

    expect(await longDone).toBe(0);
    expect(longOut).toBe("still-open\n");

    // The old certificate was not revoked: it still authenticates until it expires.
    const old = clientOf(before);
    try {
      const hb = await callUnary(
        old,
        "Heartbeat",
        { hostname: "renew-one", addresses: agent.addresses, labels: {}, version: "test" },
        agentMetadata(agent.agentId),
      );
      expect(hb.interval_seconds).toBeGreaterThan(0);
    } finally {
      old.close();
    }
  }, 120_000);

  it("refuses a host key it does not allow, a locked node and a removed node", async () => {
    const { identity } = await joinedNode("renew-gone");
    const client = clientOf(identity);
    try {
      const md = agentMetadata(identity.agentId);
      const rsa = await statusOf(callUnary(client, "RenewNodeCredentials", renewRequest("rsa"), md));
      expect(rsa.code).toBe(status.INVALID_ARGUMENT);
      expect(rsa.details).toMatch(/ssh-rsa is not allowed/);
      const ok = await callUnary(client, "RenewNodeCredentials", renewRequest(), md);
      expect(parseSshCertificate(ok.host_certificate).principals).toEqual([identity.agentId, "renew-gone"]);
      expect(ok.host_ca_pems).toEqual([env.cas.hostCa.certPem]);
      expect(Date.parse(ok.expires) - Date.now()).toBeLessThanOrEqual(TTL_SECONDS * 1000);

      // A locked node gets no new certificates (auth's lock check covers every call of the node).
      await env.source.apply({
        apiVersion: API_VERSION,
        kind: "Lock",
        metadata: { name: "renew-gone-lock" },
        spec: { target: { node: identity.agentId }, message: "renewal test" },
      } as never);
      const locked = await statusOf(callUnary(client, "RenewNodeCredentials", renewRequest(), md));
      expect(locked.code).toBe(status.PERMISSION_DENIED);
      expect(locked.details).toMatch(/renewal test/);
      await env.source.remove("Lock", "renew-gone-lock");

      await callUnary(env.client, "DeleteNode", { node: "renew-gone" }, userMetadata(admin));
      const removed = await statusOf(callUnary(client, "RenewNodeCredentials", renewRequest(), md));
      expect(removed.code).toBe(status.UNAUTHENTICATED);
      expect(removed.details).toMatch(/removed/);
    } finally {
      client.close();
    }
  });

  it("a crash between the RPC and the save, or during the save, leaves the old identity usable", async () => {
    const { identity, dataDir } = await joinedNode("renew-crash");
    const onDisk = await readFile(join(dataDir, IDENTITY_FILE), "utf8");
    const creds = new AgentCredentials({
      identity,
      route: { address: env.address, serverName: env.serverName },
      dataDir,
      logger: silent,
      // The process dies half-way through writing: a partial temp file, no rename.
      save: async (d, next) => {
        await writeFile(join(d, `.${IDENTITY_FILE}.crash.tmp`), JSON.stringify(next).slice(0, 100), {
          mode: 0o600,
        });
        throw new Error("killed during save");
      },
    });
    try {
      await expect(creds.renew()).rejects.toThrow(/killed during save/);
      // Auth did certify new keys, but nothing was swapped in or replaced on disk.
      expect(creds.identity()).toBe(identity);
      expect(await readFile(join(dataDir, IDENTITY_FILE), "utf8")).toBe(onDisk);
      expect((await readdir(dataDir)).filter((f) => f.endsWith(".tmp"))).toHaveLength(1);
    } finally {
      creds.close();
    }
    // The next start uses the old identity: no token, same node, heartbeats accepted.
    const agent = await startAgent("renew-crash", dataDir);
    expect(agent.joined).toBe(false);
    expect(agent.agentId).toBe(identity.agentId);
    await agent.heartbeat();
    expect(agent.credentials.identity().hostCertificate).toBe(identity.hostCertificate);
  });

  it.each(["after-rpc", "mid-save"] as const)(
    "an agent process killed (SIGKILL) %s starts again with its old identity",
    async (at) => {
      const { identity, dataDir } = await joinedNode(`renew-kill-${at}`);
      const onDisk = await readFile(join(dataDir, IDENTITY_FILE), "utf8");
      const child = spawn(
        process.execPath,
        [
          join(import.meta.dirname, "renewal-crash-process.ts"),
          JSON.stringify({ dataDir, address: env.address, serverName: env.serverName, at }),
        ],
        { stdio: ["ignore", "pipe", "inherit"] },
      );
      let out = "";
      child.stdout.on("data", (d: Buffer) => {
        out += d.toString();
      });
      const signal = await new Promise<NodeJS.Signals | null>((resolve) =>
        child.once("exit", (_code, sig) => resolve(sig)),
      );
      // It died where asked: after auth certified the new keys, before the rename.
      expect(signal).toBe("SIGKILL");
      expect(out).toBe("KILL\n");
      expect(await readFile(join(dataDir, IDENTITY_FILE), "utf8")).toBe(onDisk);
      const events = await env.backend.searchAudit({ type: "node.renewed", limit: 500, offset: 0 });
      expect(events.items.some((e) => e.success && e.fields.agent_id === identity.agentId)).toBe(true);
      // The next start: no token, the same node, heartbeats accepted with the old certificate.
      const agent = await startAgent(`renew-kill-${at}`, dataDir);
      expect(agent.joined).toBe(false);
      expect(agent.agentId).toBe(identity.agentId);
      expect(agent.credentials.identity().tlsCertificatePem).toBe(identity.tlsCertificatePem);
      await agent.heartbeat();
    },
    60_000,
  );

  it("an agent offline past expiry cannot renew and says to join again; with a token it joins again under its name", async () => {
    const { identity, dataDir } = await joinedNode("renew-late");
    // Two days later by the agent's clock: its certificates have expired.
    const later = { now: () => new Date(Date.now() + 2 * 86_400_000) };
    await expect(startAgent("renew-late", dataDir, { clock: later })).rejects.toThrow(
      /expired at .*join again with a new token/,
    );
    const creds = new AgentCredentials({
      identity,
      route: { address: env.address, serverName: env.serverName },
      dataDir,
      logger: silent,
      clock: later,
    });
    try {
      await expect(creds.renew()).rejects.toThrow(/offline too long.*join again with a new token/);
    } finally {
      creds.close();
    }
    // Auth, too, sees the old certificates expired (as it will TTL seconds after the last renewal).
    const key = AGENT_PREFIX + encodeURIComponent(identity.agentId);
    const reg = (await env.backend.get(key)).value as Record<string, unknown>;
    await env.backend.put(key, { ...reg, certs_expire: new Date(Date.now() - 1000).toISOString() } as never);
    const agent = await startAgent("renew-late", dataDir, {
      clock: later,
      token: await env.addToken("tok-renew-late-2"),
      caPin: env.pin,
    });
    expect(agent.joined).toBe(true);
    expect(agent.hostname).toBe("renew-late");
    expect(agent.agentId).not.toBe(identity.agentId);
    const nodes = await callUnary(env.client, "ListNodes", {}, userMetadata(admin));
    expect(nodes.nodes.filter((n) => n.hostname === "renew-late").map((n) => n.id)).toEqual([agent.agentId]);
  });
});

describe("renewal schedule", () => {
  const validity = { validAfter: new Date(0), validBefore: new Date(24 * 3600_000) };

  it("renews at 2/3 of the lifetime, moved by at most the jitter", () => {
    const at = (r: number) => renewalDelay(validity, new Date(0), DEFAULT_RENEWAL_POLICY, () => r);
    expect(at(0.5)).toBe(16 * 3600_000);
    expect(at(0)).toBe(16 * 3600_000 - 0.05 * 24 * 3600_000);
    expect(at(1)).toBe(16 * 3600_000 + 0.05 * 24 * 3600_000);
    // Already past the planned time (a restart late in the lifetime): at once.
    expect(renewalDelay(validity, new Date(20 * 3600_000), DEFAULT_RENEWAL_POLICY, () => 0.5)).toBe(0);
  });

  it("backs off exponentially up to the cap, and never past expiry", () => {
    const now = new Date(0);
    const far = new Date(30 * 86_400_000);
    const waits = [0, 1, 2, 3, 10, 40].map((a) => retryDelay(a, now, far, DEFAULT_RENEWAL_POLICY, () => 1));
    expect(waits).toEqual([10_000, 20_000, 40_000, 80_000, 600_000, 600_000]);
    // Half of the step at least (jitter in the upper half).
    expect(retryDelay(3, now, far, DEFAULT_RENEWAL_POLICY, () => 0)).toBe(40_000);
    // Five minutes left: the last try still lands before expiry (a tenth of what is left early).
    expect(retryDelay(10, now, new Date(5 * 60_000), DEFAULT_RENEWAL_POLICY, () => 1)).toBe(270_000);
    expect(retryDelay(10, now, new Date(3600_000), DEFAULT_RENEWAL_POLICY, () => 1)).toBe(600_000);
    expect(retryDelay(0, now, new Date(0), DEFAULT_RENEWAL_POLICY, () => 1)).toBeUndefined();
  });
});
