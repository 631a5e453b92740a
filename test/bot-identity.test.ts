// Bots over the real auth server (TLS 1.3, real gRPC clients): admin creation, one-time
// bootstrap, renewal by the bot's own certificate and credential, the stale-generation lock with
// its audit event, one winner among concurrent renewals, a renewal retried after a lost answer
// (same keys: the generation issued again; other keys: locked), and the bot's SSH certificate at a
// real sshd.
import { execFile } from "node:child_process";
import { X509Certificate } from "node:crypto";
import { chmod, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseSshCertificate } from "../core/certs/ssh-cert.ts";
import { generateSshKeyPair } from "../core/certs/ssh-keys.ts";
import { generateEcdsaP256, privateKeyToPem, verifyX509Leaf } from "../core/certs/x509.ts";
import { systemClock } from "../core/clock.ts";
import type { AgentIdentityCredentials__Output } from "../proto/generated/svc/v1/AgentIdentityCredentials.ts";
import { agentMetadata, callUnary, userMetadata } from "../server/auth/client.ts";
import { statusOf } from "./auth-fixture.ts";
import { addBot, CLUSTER, type MachineEnv, PASSWORD, startMachineEnv } from "./bot-fixture.ts";
import { type RunningSshd, startSshd } from "./harness/sshd.ts";

const exec = promisify(execFile);

interface Held {
  creds: AgentIdentityCredentials__Output;
  ssh: ReturnType<typeof generateSshKeyPair>;
  tlsKeyPem: string;
}

function freshKeys() {
  const ssh = generateSshKeyPair("ed25519");
  const tls = generateEcdsaP256();
  return {
    ssh,
    tlsKeyPem: privateKeyToPem(tls.privateKey),
    tlsPublicPem: tls.publicKey.export({ format: "pem", type: "spki" }).toString(),
  };
}

let env: MachineEnv;
let sshd: RunningSshd | undefined;

beforeAll(async () => {
  env = await startMachineEnv();
});
afterAll(async () => {
  await sshd?.stop();
  await env?.close();
});

async function bootstrap(token: string): Promise<Held> {
  const k = freshKeys();
  const creds = await callUnary(env.client, "BootstrapAgentIdentity", {
    token,
    ssh_public_key: k.ssh.publicLine,
    tls_public_key_pem: k.tlsPublicPem,
  });
  return { creds, ssh: k.ssh, tlsKeyPem: k.tlsKeyPem };
}

/** Renews as the holder of `held` (its certificate and credential), with fresh keys unless given. */
function renew(
  held: Held,
  override: { generation?: number; token?: string; keys?: ReturnType<typeof freshKeys> } = {},
): Promise<Held> {
  const k = override.keys ?? freshKeys();
  const client = env.clientWith({ certPem: held.creds.tls_certificate_pem, keyPem: held.tlsKeyPem });
  return callUnary(
    client,
    "RenewAgentIdentity",
    {
      name: held.creds.name,
      renewal_token: override.token ?? held.creds.renewal_token,
      generation: override.generation ?? held.creds.generation,
      ssh_public_key: k.ssh.publicLine,
      tls_public_key_pem: k.tlsPublicPem,
    },
    agentMetadata(held.creds.name),
  ).then((creds) => ({ creds, ssh: k.ssh, tlsKeyPem: k.tlsKeyPem }));
}

async function audit(type: string, user: string) {
  const admin = userMetadata(await env.adminSession());
  return callUnary(env.client, "SearchAuditEvents", { type, user, limit: 50, offset: 0 }, admin);
}

describe("CreateAgentIdentity", () => {
  it("creates the AgentIdentity and a one-time bot JoinToken holding only a hash of the secret", async () => {
    const token = await addBot(env, { name: "builder", roles: ["bot-ssh"], ttl: "30m" });
    const bot = env.source.get("AgentIdentity", "builder");
    expect(bot?.spec).toMatchObject({ roles: ["bot-ssh"], cert_ttl: "30m", allow_workload_svids: false });
    const [tokenName, secret] = [
      token.slice(0, token.lastIndexOf(".")),
      token.slice(token.lastIndexOf(".") + 1),
    ];
    const jt = env.source.get("JoinToken", tokenName);
    expect(jt?.spec).toMatchObject({ roles: ["bot"], join_method: "token", bot_name: "builder" });
    expect(JSON.stringify(jt)).not.toContain(secret);
    expect(secret.length).toBeGreaterThanOrEqual(43);
  });

  it("is admin only, refuses an existing name and unknown roles", async () => {
    const r = await callUnary(env.client, "AuthenticateLocal", { username: "bob", password: PASSWORD });
    const bob = userMetadata(r.session?.session_id ?? "");
    const req = {
      name: "sneaky",
      roles: ["bot-ssh"],
      cert_ttl: "",
      token_ttl_seconds: 0,
      allow_workload_svids: false,
    };
    expect((await statusOf(callUnary(env.client, "CreateAgentIdentity", req, bob))).code).toBe(
      status.PERMISSION_DENIED,
    );
    const admin = userMetadata(await env.adminSession());
    const dup = await statusOf(
      callUnary(env.client, "CreateAgentIdentity", { ...req, name: "builder" }, admin),
    );
    expect(dup.code).toBe(status.ALREADY_EXISTS);
    const ghost = await statusOf(
      callUnary(env.client, "CreateAgentIdentity", { ...req, roles: ["ghost"] }, admin),
    );
    expect(ghost).toMatchObject({ code: status.INVALID_ARGUMENT, details: expect.stringContaining("ghost") });
  });
});

describe("BootstrapAgentIdentity and RenewAgentIdentity", () => {
  let held: Held;
  let token: string;

  beforeAll(async () => {
    token = await addBot(env, { name: "deployer", roles: ["bot-ssh"], allowWorkloadSvids: true });
    held = await bootstrap(token);
  });

  it("bootstrap returns an SSH certificate for the role's logins, a host-CA client certificate and generation 1", async () => {
    const c = held.creds;
    expect(c).toMatchObject({ name: "deployer", generation: 1, principals: ["root"] });
    const ssh = parseSshCertificate(c.ssh_certificate);
    expect(ssh.keyId).toBe("bot:deployer:gen:1");
    expect(ssh.principals).toEqual(["root"]);
    const v = await verifyX509Leaf(c.tls_certificate_pem, [env.cas.hostCa.certPem], {
      clock: systemClock,
      usage: "client",
    });
    expect(v.uris).toEqual(["svc://bot/deployer"]);
    expect(c.host_ca_pems).toEqual([env.cas.hostCa.certPem]);
    expect(c.renewal_token).toMatch(/^1\./);
    expect(c.expires_unix_ms - Date.now()).toBeGreaterThan(50 * 60_000);
    expect(c.renew_after_unix_ms).toBeLessThan(c.expires_unix_ms);
    const events = await audit("bot.bootstrap", "bot:deployer");
    expect(events.items[0]).toMatchObject({ success: true });
    expect(events.items[0]?.fields_json).not.toContain(c.renewal_token.split(".")[1] as string);
  });

  it("a bootstrap token works exactly once", async () => {
    const again = await statusOf(bootstrap(token));
    expect(again).toMatchObject({
      code: status.PERMISSION_DENIED,
      details: expect.stringContaining("already been used"),
    });
    const forged = await statusOf(
      bootstrap(`${token.slice(0, token.lastIndexOf("."))}.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA`),
    );
    expect(forged).toMatchObject({ code: status.PERMISSION_DENIED, details: "bootstrap token is not valid" });
  });

  it("renewal needs the bot's current client certificate and its credential", async () => {
    // No client certificate: not the bot.
    const k = freshKeys();
    const anon = await statusOf(
      callUnary(env.client, "RenewAgentIdentity", {
        name: "deployer",
        renewal_token: held.creds.renewal_token,
        generation: 1,
        ssh_public_key: k.ssh.publicLine,
        tls_public_key_pem: k.tlsPublicPem,
      }),
    );
    expect(anon.code).toBe(status.UNAUTHENTICATED);
    // The bot's certificate with a credential auth never issued: refused, and no lock.
    const guessed = await statusOf(renew(held, { token: `1.${"B".repeat(43)}` }));
    expect(guessed).toMatchObject({
      code: status.UNAUTHENTICATED,
      details: "renewal credential is not valid",
    });
    const list = await callUnary(
      env.client,
      "ListAgentIdentities",
      {},
      userMetadata(await env.adminSession()),
    );
    expect(list.identities.find((i) => i.name === "deployer")).toMatchObject({
      locked: false,
      generation: 1,
    });
  });

  it("renewal rotates keys and certificates and advances the generation", async () => {
    const next = await renew(held);
    expect(next.creds.generation).toBe(2);
    expect(next.creds.renewal_token).toMatch(/^2\./);
    expect(parseSshCertificate(next.creds.ssh_certificate).keyId).toBe("bot:deployer:gen:2");
    expect(new X509Certificate(next.creds.tls_certificate_pem).serialNumber).not.toBe(
      new X509Certificate(held.creds.tls_certificate_pem).serialNumber,
    );
    // The gen-1 certificate with the gen-2 credential: not the current certificate.
    const mixed = await statusOf(
      renew({ ...held, creds: { ...held.creds, renewal_token: next.creds.renewal_token, generation: 2 } }),
    );
    expect(mixed.code).toBe(status.UNAUTHENTICATED);
    held = await renew(next);
    expect(held.creds.generation).toBe(3);
  });

  it("a stale generation (a stolen copy) locks the bot, revokes it and is audited", async () => {
    const thief = held; // a copy of generation 3
    held = await renew(held); // the real bot moves to 4
    const stale = await statusOf(renew(thief));
    expect(stale).toMatchObject({
      code: status.PERMISSION_DENIED,
      details: expect.stringContaining("locked"),
    });
    // What the real bot holds is revoked too: no renewal, whatever credential.
    const real = await statusOf(renew(held));
    expect(real).toMatchObject({
      code: status.PERMISSION_DENIED,
      details: expect.stringContaining("locked"),
    });
    // Its client certificate no longer gets anything from auth either.
    const svid = await statusOf(
      callUnary(
        env.clientWith({ certPem: held.creds.tls_certificate_pem, keyPem: held.tlsKeyPem }),
        "IssueWorkloadSVID",
        {
          spiffe_path: "/role/ci/x",
          tls_public_key_pem: freshKeys().tlsPublicPem,
          jwt_audiences: [],
          ttl_seconds: 0,
        },
        agentMetadata("deployer"),
      ),
    );
    // The theft also made a Lock (created by auth), which is what refuses the bot now.
    expect(svid).toMatchObject({
      code: status.PERMISSION_DENIED,
      details: expect.stringMatching(/^locked: credential theft suspected: generation \d+ presented/),
    });
    const locks = await callUnary(env.client, "ListLocks", {}, userMetadata(await env.adminSession()));
    expect(locks.locks).toEqual([
      expect.objectContaining({ target: expect.objectContaining({ bot: "deployer" }), created_by: "auth" }),
    ]);
    const events = await audit("bot.locked", "bot:deployer");
    expect(events.total_count).toBe(1);
    const fields = JSON.parse(events.items[0]?.fields_json ?? "{}");
    expect(fields).toMatchObject({ presented_generation: 3, current_generation: 4, bot: "deployer" });
    expect(fields.revoked_tls_serial).toMatch(/^[0-9a-f]+$/);
    const list = await callUnary(
      env.client,
      "ListAgentIdentities",
      {},
      userMetadata(await env.adminSession()),
    );
    expect(list.identities.find((i) => i.name === "deployer")).toMatchObject({ locked: true, generation: 4 });
  });

  it("of concurrent renewals with the same generation exactly one wins", async () => {
    const t = await addBot(env, { name: "racer", roles: ["bot-ssh"] });
    const start = await bootstrap(t);
    const results = await Promise.allSettled(Array.from({ length: 6 }, () => renew(start)));
    const won = results.filter((r) => r.status === "fulfilled");
    expect(won).toHaveLength(1);
    for (const r of results) {
      if (r.status === "rejected") {
        const code = (r.reason as { cause?: { code?: number } }).cause?.code;
        // Lost the compare-and-swap, or came after the winner with a now stale generation.
        expect([status.ABORTED, status.PERMISSION_DENIED]).toContain(code);
      }
    }
    const state = await env.backend.get("bots/racer");
    expect((state.value as { current: { generation: number } }).current.generation).toBe(2);
  });

  it("a renewal retried after a lost answer, with the same keys, gets the same generation again", async () => {
    const t = await addBot(env, { name: "retrier", roles: ["bot-ssh"] });
    const start = await bootstrap(t);
    const keys = freshKeys();
    const lost = await renew(start, { keys }); // committed; the bot never hears of it
    const again = await renew(start, { keys });
    expect(again.creds.generation).toBe(2);
    expect(again.creds.renewal_token).toMatch(/^2\./);
    expect(again.creds.renewal_token).not.toBe(lost.creds.renewal_token);
    expect(parseSshCertificate(again.creds.ssh_certificate).keyId).toBe("bot:retrier:gen:2");
    const spki = (pem: string) =>
      new X509Certificate(pem).publicKey.export({ type: "spki", format: "pem" }).toString();
    expect(spki(again.creds.tls_certificate_pem)).toBe(keys.tlsPublicPem);
    const admin = userMetadata(await env.adminSession());
    const list = await callUnary(env.client, "ListAgentIdentities", {}, admin);
    expect(list.identities.find((i) => i.name === "retrier")).toMatchObject({ locked: false, generation: 2 });
    const renews = await audit("bot.renew", "bot:retrier");
    expect(JSON.parse(renews.items[0]?.fields_json ?? "{}")).toMatchObject({ generation: 2, reissued: 1 });
    expect((await audit("bot.locked", "bot:retrier")).total_count).toBe(0);
    // What the retry got works: the next renewal advances.
    expect((await renew(again)).creds.generation).toBe(3);
  });

  it("the previous generation with other keys is still a stolen copy: locked and audited", async () => {
    const t = await addBot(env, { name: "retrier-copy", roles: ["bot-ssh"] });
    const start = await bootstrap(t);
    await renew(start); // the real bot moves to 2 with its new keys
    const copy = await statusOf(renew(start)); // a copy of generation 1 asks for its own keys
    expect(copy).toMatchObject({
      code: status.PERMISSION_DENIED,
      details: expect.stringContaining("locked"),
    });
    const events = await audit("bot.locked", "bot:retrier-copy");
    expect(JSON.parse(events.items[0]?.fields_json ?? "{}")).toMatchObject({
      presented_generation: 1,
      current_generation: 2,
    });
  });

  it("after a re-issue, the superseded credential of that generation locks the bot", async () => {
    // A copy that knows the new public keys gets certificates it cannot use (no private keys);
    // when the real bot then presents what it was first given, the bot is locked.
    const t = await addBot(env, { name: "retrier-first", roles: ["bot-ssh"] });
    const start = await bootstrap(t);
    const keys = freshKeys();
    const first = await renew(start, { keys });
    await renew(start, { keys });
    const later = await statusOf(renew(first));
    expect(later).toMatchObject({
      code: status.PERMISSION_DENIED,
      details: expect.stringContaining("superseded credential of generation 2"),
    });
    expect((await audit("bot.locked", "bot:retrier-first")).total_count).toBe(1);
  });

  it("a retry needs the previous generation's client certificate", async () => {
    const t = await addBot(env, { name: "retrier-cert", roles: ["bot-ssh"] });
    const start = await bootstrap(t);
    const keys = freshKeys();
    const first = await renew(start, { keys });
    // The gen-1 credential over the gen-2 certificate: not how the renewal was made.
    const mixed = await statusOf(
      renew(
        { ...first, creds: { ...first.creds, renewal_token: start.creds.renewal_token, generation: 1 } },
        { keys },
      ),
    );
    expect(mixed.code).toBe(status.UNAUTHENTICATED);
  });

  it("a deleted bot no longer renews", async () => {
    const t = await addBot(env, { name: "shortlived", roles: ["bot-ssh"] });
    const h = await bootstrap(t);
    await callUnary(
      env.client,
      "DeleteAgentIdentity",
      { name: "shortlived" },
      userMetadata(await env.adminSession()),
    );
    expect(env.source.get("AgentIdentity", "shortlived")).toBeUndefined();
    expect(env.source.list("JoinToken").some((j) => j.spec.bot_name === "shortlived")).toBe(false);
    expect((await statusOf(renew(h))).code).toBe(status.PERMISSION_DENIED);
  });

  it("IAM join is refused for a bot token", async () => {
    const t = await addBot(env, { name: "iam-bot", roles: ["bot-ssh"] });
    const tokenName = t.slice(0, t.lastIndexOf("."));
    const call = env.client.RegisterUsingIAMMethod();
    const done = new Promise<{ code: number; details: string }>((resolve) => {
      call.on("data", () => {});
      call.on("error", (e: { code: number; details: string }) =>
        resolve({ code: e.code, details: e.details }),
      );
      call.on("end", () => resolve({ code: 0, details: "" }));
    });
    call.write({
      init: {
        token: tokenName,
        hostname: "h1",
        host_ssh_public_key: generateSshKeyPair("ed25519").publicLine,
        tls_public_key_pem: freshKeys().tlsPublicPem,
        labels: {},
        addresses: ["127.0.0.1:3022"],
        agentless: false,
      },
    });
    const r = await done;
    call.end();
    expect(r.code).toBe(status.PERMISSION_DENIED);
    expect(r.details).toMatch(/IAM join method|not supported for bots/);
  });
});

describe("a bot's SSH certificate at a real sshd", () => {
  it("logs in as the role's login", async () => {
    const t = await addBot(env, { name: "sshbot", roles: ["bot-ssh"] });
    const h = await bootstrap(t);
    sshd = await startSshd({ trustedUserCaKeys: [env.cas.sshUserCaPublicKey] });
    const key = join(env.dir, "sshbot_key");
    await writeFile(key, h.ssh.privateOpenSsh, { mode: 0o600 });
    await chmod(key, 0o600);
    await writeFile(`${key}-cert.pub`, `${h.creds.ssh_certificate}\n`);
    const { stdout } = await exec(
      "ssh",
      [
        "-F",
        "/dev/null",
        "-i",
        key,
        "-o",
        `CertificateFile=${key}-cert.pub`,
        "-o",
        "IdentitiesOnly=yes",
        "-o",
        "IdentityAgent=none",
        "-o",
        "BatchMode=yes",
        "-o",
        "ConnectTimeout=20",
        "-o",
        "StrictHostKeyChecking=no",
        "-o",
        "UserKnownHostsFile=/dev/null",
        "-p",
        String(sshd.port),
        `root@${sshd.host}`,
        "echo",
        `hello-from-${CLUSTER}`,
      ],
      { timeout: 45_000 },
    );
    expect(stdout.trim()).toBe(`hello-from-${CLUSTER}`);
  });
});
