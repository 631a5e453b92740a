// The agent daemon as a real process against a real auth server: it joins with a token and the
// CA pin, stores its credentials 0600, serves SSH to the real OpenSSH client holding a certificate
// from IssueUserCerts (trusting the node through @cert-authority), records a PTY session
// (asciicast v2 with output and resize) that is listed and played back with session.start /
// session.end audit events naming it, shows online while heartbeating and offline once stopped,
// and comes back with the same identity on restart without a token.
import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateSshKeyPair } from "../core/certs/ssh-keys.ts";
import { systemClock } from "../core/clock.ts";
import { connectWithCertificate, hostCertificateVerifier, shell } from "../core/sshclient/index.ts";
import type { GetRecordingResponse__Output } from "../proto/generated/svc/v1/GetRecordingResponse.ts";
import { IDENTITY_FILE } from "../server/agent/identity.ts";
import { callUnary, userMetadata } from "../server/auth/client.ts";
import {
  type AgentAuthEnv,
  type AgentProcess,
  startAgentAuthEnv,
  startAgentProcess,
} from "./agent-fixture.ts";
import { certSsh, keyWithCertificate, type SshResult } from "./harness/ssh-login.ts";

let env: AgentAuthEnv;
let dir = "";
let dataDir = "";
let agent: AgentProcess | undefined;
let info: Awaited<AgentProcess["ready"]>;
let adminSession = "";

async function until<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** A user key and a certificate for it from IssueUserCerts (alice: logins alice + root). */
async function userCertFiles(
  name: string,
): Promise<{ keyPath: string; certLine: string; privateOpenSsh: string }> {
  const keyPath = join(dir, name);
  const certLine = await keyWithCertificate(keyPath, async (pub) => {
    const md = userMetadata(adminSession);
    return (await callUnary(env.client, "IssueUserCerts", { ssh_public_key: pub, ttl_seconds: 600 }, md))
      .ssh_certificate;
  });
  return { keyPath, certLine, privateOpenSsh: await readFile(keyPath, "utf8") };
}

function ssh(keyPath: string, knownHosts: string, port: number, command: string): Promise<SshResult> {
  // Host certificates name the node ID and hostname, never an address.
  return certSsh({ key: keyPath, knownHosts, port, hostAlias: "agent-one" }, command);
}

async function nodeStatus(id: string): Promise<string | undefined> {
  const r = await callUnary(env.client, "ListNodes", {}, userMetadata(adminSession));
  return r.nodes.find((n) => n.id === id)?.status;
}

function agentOptions(withToken: string | undefined) {
  return {
    authAddress: env.address,
    authServerName: env.serverName,
    dataDir,
    listen: "127.0.0.1:0",
    labels: { env: "test", team: "core" },
    hostname: "agent-one",
    ...(withToken ? { token: withToken, caPin: env.pin } : {}),
  };
}

beforeAll(async () => {
  env = await startAgentAuthEnv({ heartbeatIntervalSeconds: 1 });
  dir = await mkdtemp(join(tmpdir(), "svc-agent-daemon-"));
  dataDir = join(dir, "data");
  adminSession = await env.login("alice");
  agent = startAgentProcess(agentOptions(await env.addToken("daemon-token")));
  info = await agent.ready;
}, 120_000);

afterAll(async () => {
  await agent?.stop();
  await env?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("agent daemon", () => {
  it("joins once and keeps its credentials private on disk", async () => {
    expect(info.joined).toBe(true);
    expect(info.hostname).toBe("agent-one");
    expect((await stat(join(dataDir, IDENTITY_FILE))).mode & 0o777).toBe(0o600);
    expect((await stat(dataDir)).mode & 0o777).toBe(0o700);
  });

  it("serves the OpenSSH client with an IssueUserCerts certificate, trusted through @cert-authority", async () => {
    const { keyPath } = await userCertFiles("alice-openssh");
    const knownHosts = join(dir, "known_hosts");
    await writeFile(knownHosts, `@cert-authority agent-one ${env.cas.sshHostCaPublicKey}\n`);
    const r = await ssh(keyPath, knownHosts, info.ssh.port, "echo hello-from-agent; id -un");
    expect(r.stdout).toBe("hello-from-agent\nroot\n");
    expect(r.code).toBe(0);
    // A client trusting another host CA refuses the node: the host certificate is what proves it.
    const otherCa = generateSshKeyPair("ed25519").publicLine;
    const strangers = join(dir, "known_hosts_other");
    await writeFile(strangers, `@cert-authority agent-one ${otherCa}\n`);
    const refused = await ssh(keyPath, strangers, info.ssh.port, "true");
    expect(refused.code).not.toBe(0);
    expect(refused.stdout).toBe("");
  });

  it("records a PTY session (output and resize) that is listed, played back and audited", async () => {
    const { certLine, privateOpenSsh } = await userCertFiles("alice-pty");
    const client = await connectWithCertificate({
      host: "127.0.0.1",
      port: info.ssh.port,
      username: "root",
      privateKey: privateOpenSsh,
      certificate: certLine,
      requireHostCertificate: true,
      hostVerifier: hostCertificateVerifier({
        trustedCaKeys: [env.cas.sshHostCaPublicKey],
        principal: info.agentId,
        clock: systemClock,
      }),
    });
    const marker = `rec-${Date.now()}`;
    try {
      const ch = await shell(client, { cols: 80, rows: 24 });
      let seen = "";
      ch.on("data", (d: Buffer) => {
        seen += d.toString("utf8");
      });
      ch.write(`echo ${marker}-$((6*7))\n`);
      await until("shell output", async () => (seen.includes(`${marker}-42`) ? true : undefined));
      ch.setWindow(40, 100, 0, 0);
      ch.write("stty size\n");
      await until("resized tty", async () => (seen.includes("40 100") ? true : undefined));
      ch.write("exit\n");
      await new Promise<void>((resolve) => ch.once("close", () => resolve()));
    } finally {
      client.end();
    }

    const end = await until("session.end with a recording", async () => {
      const r = await callUnary(
        env.client,
        "SearchAuditEvents",
        { type: "session.end", limit: 500 },
        userMetadata(adminSession),
      );
      for (const e of r.items) {
        const f = JSON.parse(e.fields_json) as Record<string, unknown>;
        if (typeof f["recording_id"] === "string" && (await recordingHas(f["recording_id"], marker)))
          return e;
      }
      return undefined;
    });
    const fields = JSON.parse(end.fields_json) as Record<string, unknown>;
    const recordingId = String(fields["recording_id"]);
    expect(end.user_name).toBe("alice");
    expect(fields["emitted_by"]).toBe(`agent:${info.agentId}`);
    expect(fields["node"]).toBe("agent-one");

    const list = await callUnary(
      env.client,
      "ListRecordings",
      { limit: 50, offset: 0, user: "", protocol: "ssh" },
      userMetadata(adminSession),
    );
    const rec = list.items.find((i) => i.id === recordingId);
    expect(rec).toMatchObject({
      user_name: "alice",
      login: "root",
      node: "agent-one",
      format: "asciicast-v2",
    });

    const cast = await download(recordingId);
    const lines = cast.trimEnd().split("\n");
    const header = JSON.parse(lines[0] ?? "{}") as Record<string, unknown>;
    expect(header).toMatchObject({ version: 2, width: 80, height: 24 });
    const events = lines.slice(1).map((l) => JSON.parse(l) as [number, string, string]);
    expect(events.every(([t, code]) => typeof t === "number" && (code === "o" || code === "r"))).toBe(true);
    expect(
      events
        .filter(([, c]) => c === "o")
        .map(([, , d]) => d)
        .join(""),
    ).toContain(`${marker}-42`);
    expect(events).toContainEqual([expect.any(Number), "r", "100x40"]);
    const times = events.map(([t]) => t);
    expect(times).toEqual([...times].sort((a, b) => a - b));

    const starts = await callUnary(
      env.client,
      "SearchAuditEvents",
      { type: "session.start", user: "alice", limit: 500 },
      userMetadata(adminSession),
    );
    expect(
      starts.items.some(
        (e) => (JSON.parse(e.fields_json) as Record<string, unknown>)["session_id"] === recordingId,
      ),
    ).toBe(true);
  });

  it("shows online while heartbeating, offline once stopped, and restarts without a token", async () => {
    expect(
      await until("online", async () => ((await nodeStatus(info.agentId)) === "online" ? true : undefined)),
    ).toBe(true);
    await agent?.stop();
    expect(await agent?.exited).toBe(0);
    await until("offline", async () => ((await nodeStatus(info.agentId)) === "offline" ? true : undefined));

    // No token, no pin and no labels: all of it comes from the stored identity.
    const { labels: _joinedWith, ...restart } = agentOptions(undefined);
    agent = startAgentProcess(restart);
    const again = await agent.ready;
    expect(again).toMatchObject({ agentId: info.agentId, hostname: "agent-one", joined: false });
    await until("online again", async () =>
      (await nodeStatus(info.agentId)) === "online" ? true : undefined,
    );
    const listed = await callUnary(env.client, "ListNodes", {}, userMetadata(adminSession));
    expect(listed.nodes.find((n) => n.id === info.agentId)?.labels).toEqual({ env: "test", team: "core" });
    const { keyPath } = await userCertFiles("alice-restart");
    const knownHosts = join(dir, "known_hosts_restart");
    await writeFile(knownHosts, `@cert-authority agent-one ${env.cas.sshHostCaPublicKey}\n`);
    const r = await ssh(keyPath, knownHosts, again.ssh.port, "echo back");
    expect(r.stdout).toBe("back\n");
  });

  it("lets exactly one of two agent processes racing for one token join", async () => {
    const token = await env.addToken("race-token");
    const racers = [1, 2].map((i) =>
      startAgentProcess({ ...agentOptions(token), dataDir: join(dir, `race-${i}`), hostname: `racer-${i}` }),
    );
    try {
      const outcomes = await Promise.allSettled(racers.map((r) => r.ready));
      expect(outcomes.filter((o) => o.status === "fulfilled")).toHaveLength(1);
      const loser = racers[outcomes.findIndex((o) => o.status === "rejected")];
      expect(await loser?.exited).toBe(1);
      expect(loser?.stderr()).toContain("join token has already been used");
    } finally {
      for (const r of racers) await r.stop();
    }
  });
});

async function download(id: string): Promise<string> {
  const call = env.client.GetRecording({ id }, userMetadata(adminSession));
  const chunks: Buffer[] = [];
  for await (const msg of call as AsyncIterable<GetRecordingResponse__Output>) {
    if (msg.chunk) chunks.push(Buffer.from(msg.chunk));
  }
  return Buffer.concat(chunks).toString("utf8");
}

async function recordingHas(id: string, marker: string): Promise<boolean> {
  return (await download(id)).includes(marker);
}
