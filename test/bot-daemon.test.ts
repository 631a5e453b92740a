// `svcd bot` (runBot) against a real auth: it bootstraps with the token, renews at a fraction
// of the TTL, writes its outputs atomically, keeps retrying while auth is down and renews once
// auth is back on the same address; a restarted bot continues from its folder without a token.
// Its SSH certificate from the folder logs in to a real sshd. Every retry of one renewal sends
// the same new keys (saved in the folder first), so a renewal whose answer was lost (auth
// committed it) is retried after a restart and gets that generation again instead of a lock.
import { execFile } from "node:child_process";
import { X509Certificate } from "node:crypto";
import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseSshCertificate } from "../core/certs/ssh-cert.ts";
import { generateSshKeyPair } from "../core/certs/ssh-keys.ts";
import { generateEcdsaP256, privateKeyToPem, verifyX509Leaf } from "../core/certs/x509.ts";
import { systemClock } from "../core/clock.ts";
import type { AgentIdentity } from "../core/resources/index.ts";
import { caPin } from "../server/agent/ca-pin.ts";
import { agentMetadata, callUnary } from "../server/auth/client.ts";
import { OUTPUT_FILES, readState, STATE_FILE, writeState } from "../server/bot/files.ts";
import { runBot } from "../server/bot/main.ts";
import { addBot, type MachineEnv, startMachineEnv } from "./bot-fixture.ts";
import { type RunningSshd, startSshd } from "./harness/sshd.ts";

const exec = promisify(execFile);

let env: MachineEnv;
let sshd: RunningSshd | undefined;
const aborts: AbortController[] = [];
/** What the bot logged, to see its retries (messages and fields hold no secrets). */
const warnings: string[] = [];
const logger = {
  info() {},
  warn(_o: object, msg: string) {
    warnings.push(msg);
  },
  error(_o: object, msg: string) {
    warnings.push(msg);
  },
};

beforeAll(async () => {
  env = await startMachineEnv();
});
afterAll(async () => {
  for (const a of aborts) a.abort();
  await sshd?.stop();
  await env?.close();
});

/** Polls `cond` every 100 ms until true or `ms` passed. */
async function until(cond: () => boolean, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("svcd bot", () => {
  const generations: number[] = [];
  const latest = () => generations[generations.length - 1] ?? 0;
  let outDir: string;
  let running: Promise<void>;
  let settled = false;

  function start(token?: string): Promise<void> {
    const abort = new AbortController();
    aborts.push(abort);
    settled = false;
    const p = runBot({
      authAddress: env.address,
      // First contact trusts auth through a pin of the host CA, as printed next to the token.
      caPin: caPin(env.cas.hostCa.certPem),
      serverName: "localhost",
      ...(token ? { token } : {}),
      outDir,
      logger,
      signal: abort.signal,
      backoff: { baseMs: 200, maxMs: 1500 },
      callTimeoutMs: 5000,
      onCredentials: (c) => generations.push(c.generation),
    });
    p.finally(() => {
      settled = true;
    }).catch(() => {});
    return p;
  }

  beforeAll(async () => {
    const token = await addBot(env, { name: "daemon", roles: ["bot-ssh"], ttl: "1m" });
    // Renew every ~6 s (10% of one minute) so the test sees several renewals.
    const bot = env.source.get("AgentIdentity", "daemon") as AgentIdentity;
    await env.source.apply({ ...bot, spec: { ...bot.spec, renewal: { fraction: 0.1 } } });
    outDir = join(env.dir, "bot-out");
    running = start(token);
  });

  it("bootstraps, renews, and writes its outputs atomically with safe modes", async () => {
    await until(() => latest() >= 2, 45_000, "the first renewal");
    expect(generations.slice(0, 2)).toEqual([1, 2]);
    for (const f of [OUTPUT_FILES.sshKey, OUTPUT_FILES.tlsKey, STATE_FILE]) {
      expect((await stat(join(outDir, f))).mode & 0o777, f).toBe(0o600);
    }
    expect((await stat(outDir)).mode & 0o777).toBe(0o700);
    const cert = parseSshCertificate(await readFile(join(outDir, OUTPUT_FILES.sshCert), "utf8"));
    expect(cert.keyId).toMatch(/^bot:daemon:gen:\d+$/);
    const caPem = await readFile(join(outDir, OUTPUT_FILES.caBundle), "utf8");
    expect(caPem).toBe(env.cas.hostCa.certPem);
    const v = await verifyX509Leaf(await readFile(join(outDir, OUTPUT_FILES.tlsCert), "utf8"), [caPem], {
      clock: systemClock,
      usage: "client",
    });
    expect(v.uris).toEqual(["svc://bot/daemon"]);
    expect(await readFile(join(outDir, OUTPUT_FILES.knownHosts), "utf8")).toContain("@cert-authority * ");
  });

  it("its SSH certificate from the folder logs in to a real sshd", async () => {
    sshd = await startSshd({ trustedUserCaKeys: [env.cas.sshUserCaPublicKey] });
    const key = join(outDir, OUTPUT_FILES.sshKey);
    const { stdout } = await exec(
      "ssh",
      [
        ...[
          "-F",
          "/dev/null",
          "-i",
          key,
          "-o",
          `CertificateFile=${key}-cert.pub`,
          "-o",
          "IdentitiesOnly=yes",
        ],
        ...["-o", "IdentityAgent=none", "-o", "BatchMode=yes", "-o", "ConnectTimeout=20"],
        ...["-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null"],
        ...["-p", String(sshd.port), `root@${sshd.host}`, "echo", "bot-ok"],
      ],
      { timeout: 45_000 },
    );
    expect(stdout.trim()).toBe("bot-ok");
  });

  it("keeps retrying while auth is down and renews once auth is back", async () => {
    await env.stopAuth();
    const before = latest();
    const warned = warnings.length;
    // Two renewal periods without auth: no new generation, and the bot is still running.
    await new Promise((r) => setTimeout(r, 13_000));
    expect(latest()).toBe(before);
    expect(settled).toBe(false);
    const retries = warnings.slice(warned).filter((m) => m === "renewal failed; retrying").length;
    expect(retries).toBeGreaterThanOrEqual(2);
    // The keys of the renewal it keeps retrying were saved before the first attempt.
    const pending = (await readState(outDir))?.pendingKeys;
    expect(pending?.tlsPublicPem).toContain("PUBLIC KEY");
    await env.startAuth();
    await until(() => latest() > before, 45_000, "a renewal after auth came back");
    expect(settled).toBe(false);
    // Every attempt sent those keys: the certificate that came back is for them.
    const cert = new X509Certificate(await readFile(join(outDir, OUTPUT_FILES.tlsCert), "utf8"));
    expect(cert.publicKey.export({ type: "spki", format: "pem" }).toString()).toBe(pending?.tlsPublicPem);
    expect((await readState(outDir))?.pendingKeys).toBeUndefined();
  });

  it("a restarted bot continues from its folder without a token", async () => {
    aborts.at(-1)?.abort();
    await running;
    const before = latest();
    running = start();
    await until(() => latest() > before, 45_000, "a renewal by the restarted bot");
    expect(latest()).toBe(before + 1);
  });

  it("a renewal committed but never answered is retried with the same keys: same generation, no lock", async () => {
    aborts.at(-1)?.abort();
    await running;
    const state = await readState(outDir);
    if (!state) throw new Error("no bot state");
    // What the bot saves before a renewal; then auth commits it and the answer is lost.
    const ssh = generateSshKeyPair("ed25519");
    const tls = generateEcdsaP256();
    const pendingKeys = {
      sshPrivateOpenSsh: ssh.privateOpenSsh,
      sshPublicLine: ssh.publicLine,
      tlsKeyPem: privateKeyToPem(tls.privateKey),
      tlsPublicPem: tls.publicKey.export({ type: "spki", format: "pem" }).toString(),
    };
    await writeState(outDir, { ...state, pendingKeys });
    const lost = await callUnary(
      env.clientWith({ certPem: state.tlsCertificatePem, keyPem: state.tlsKeyPem }),
      "RenewAgentIdentity",
      {
        name: state.name,
        renewal_token: state.renewalToken,
        generation: state.generation,
        ssh_public_key: pendingKeys.sshPublicLine,
        tls_public_key_pem: pendingKeys.tlsPublicPem,
      },
      agentMetadata(state.name),
    );
    expect(lost.generation).toBe(state.generation + 1);
    const before = latest();
    running = start();
    await until(() => latest() > before + 1, 45_000, "two renewals after the lost answer");
    // The retry got the committed generation again, and the bot went on from there.
    expect(generations.slice(-2)).toEqual([state.generation + 1, state.generation + 2]);
    expect(settled).toBe(false);
    const stored = (await env.backend.get("bots/daemon")).value as { locked: boolean };
    expect(stored.locked).toBe(false);
  });
});
