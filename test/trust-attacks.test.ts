// Issue 16 under attack: what an attacker holding some identity (a plain user, a node, a bot, the
// proxy) or an unlucky operator can do to locks, WatchTrust, node renewal, CA rotation and the KRL,
// through the real embedded platform (TLS, the interceptor, the resource writer, the file CAs).
// Each test names the attempt; each asserts the refusal (or the exact, narrow effect).
import { generateKeyPairSync, X509Certificate } from "node:crypto";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { parseSshCertificate } from "../core/certs/ssh-cert.ts";
import { generateSshKeyPair } from "../core/certs/ssh-keys.ts";
import { generateEcdsaP256, parseCertificatePem, privateKeyToPem } from "../core/certs/x509.ts";
import { lockFromProto } from "../core/locks/lock.ts";
import { API_VERSION } from "../core/resources/index.ts";
import { MANAGED_DIR } from "../core/sources/folder.ts";
import { lockMessage as agentLockMessage } from "../server/agent/locks.ts";
import { agentMetadata, callUnary, userMetadata } from "../server/auth/client.ts";
import { MAX_STREAMS_PER_CALLER } from "../server/auth/trust-feed.ts";
import { lockedMessage } from "../server/proxy/locks.ts";
import { statusOf } from "./auth-fixture.ts";
import { toYaml } from "./k8s-examples.ts";
import {
  type AttackWorld,
  krlVerdict,
  type Node,
  renewKeys,
  sshRsaLine,
  startAttackWorld,
} from "./trust-attack-kit.ts";

let w: AttackWorld;
let bob: string; // a plain user (role access)
let alice: string;
let al: string;
let n1: Node;
let n2: Node;
let work: string;

beforeAll(async () => {
  w = await startAttackWorld();
  work = await mkdtemp(join(tmpdir(), "svc-trust-attacks-work-"));
  bob = await w.addUser("bob");
  alice = await w.addUser("alice");
  al = await w.addUser("al");
  n1 = await w.joinNode("attack-node-1");
  n2 = await w.joinNode("attack-node-2");
}, 120_000);

afterAll(async () => {
  await w?.close();
  if (work) await rm(work, { recursive: true, force: true });
});

const lockReq = (target: Record<string, string>, extra: Record<string, unknown> = {}) => ({
  name: "",
  message: "",
  expires: "",
  ttl_seconds: 0,
  target,
  ...extra,
});

const createLock = (target: Record<string, string>, extra: Record<string, unknown> = {}) =>
  callUnary(w.client, "CreateLock", lockReq(target, extra), w.admin());
const deleteLock = (name: string) => callUnary(w.client, "DeleteLock", { name }, w.admin());

const sshLogin = (n: Node, cert: string, login: string) =>
  callUnary(n.client, "AuthorizeSshLogin", { ssh_certificate: cert, login, remote_address: "" }, n.md());

describe("locks: who may make, see and lift them", () => {
  it("a plain user, a node and a bot can neither create, list, delete, watch nor export", async () => {
    const victim = await createLock({ user: "alice" }, { message: "investigation" });
    try {
      const bot = await w.bot("attack-bot", ["access"]);
      const bobMd = userMetadata(bob);
      for (const [client, md] of [
        [w.client, bobMd],
        [n1.client, n1.md()],
        [bot.client, agentMetadata("attack-bot")],
      ] as const) {
        const codes = await Promise.all([
          statusOf(callUnary(client, "CreateLock", lockReq({ user: "carol" }), md)),
          statusOf(callUnary(client, "ListLocks", {}, md)),
          statusOf(callUnary(client, "DeleteLock", { name: victim.name }, md)),
        ]);
        for (const c of codes) expect([status.PERMISSION_DENIED, status.UNAUTHENTICATED]).toContain(c.code);
      }
      // The bot's own TLS identity (no x-agent-id): a bot caller, not a node.
      const botCalls = await Promise.all([
        statusOf(callUnary(bot.client, "CreateLock", lockReq({ user: "carol" }), userMetadata("x"))),
        statusOf(callUnary(bot.client, "ExportKrl", {})),
      ]);
      for (const c of botCalls) expect([status.PERMISSION_DENIED, status.UNAUTHENTICATED]).toContain(c.code);
      expect(await statusOf(callUnary(w.client, "ExportKrl", {}, bobMd))).toMatchObject({
        code: status.PERMISSION_DENIED,
      });
      const watchBob = w.watch(w.client, bobMd);
      const watchBot = w.watch(bot.client, agentMetadata("x"));
      const watchBotOwn = w.watch(bot.client, userMetadata("not-a-session"));
      await vi.waitFor(() => {
        expect(watchBob.error()?.code).toBe(status.PERMISSION_DENIED);
        expect(watchBot.error()?.code).toBe(status.UNAUTHENTICATED);
        expect(watchBotOwn.error()?.code).toBe(status.UNAUTHENTICATED);
      });
      expect([...watchBob.seen, ...watchBot.seen, ...watchBotOwn.seen]).toEqual([]);
      // The lock is untouched: alice is still refused.
      expect((await callUnary(w.client, "ListLocks", {}, w.admin())).locks.map((l) => l.name)).toContain(
        victim.name,
      );
      expect(await statusOf(callUnary(w.client, "GetSession", {}, userMetadata(alice)))).toMatchObject({
        code: status.PERMISSION_DENIED,
        details: "locked: investigation",
      });
    } finally {
      await deleteLock(victim.name);
    }
  });

  it("a bot's certificate does not pass for a node on WatchTrust, and a node cannot pose as another", async () => {
    const bot = await w.bot("watch-bot", ["access"]);
    const asNode = w.watch(bot.client, agentMetadata("watch-bot"));
    const asOther = w.watch(n1.client, agentMetadata(n2.id));
    await vi.waitFor(() => {
      expect(asNode.error()?.code).toBeDefined();
      expect(asOther.error()?.code).toBe(status.UNAUTHENTICATED);
    });
    expect([status.PERMISSION_DENIED, status.UNAUTHENTICATED]).toContain(asNode.error()?.code);
    expect([...asNode.seen, ...asOther.seen]).toEqual([]);
  });
});

describe("locks: targets match exactly and odd ones are refused clearly", () => {
  it("'ali', '*', '.*', role 'acc' and a key id prefix lock nobody; 'al' locks al only", async () => {
    const near: Record<string, string>[] = [
      { user: "ali" },
      { user: "*" },
      { user: ".*" },
      { user: "ALICE" },
      { user: "alice " },
      { role: "acc" },
      { role: "*" },
      { bot: "alice" },
      { node: "*" },
      { key_id: "user:alice" },
      { key_id: "*" },
    ];
    const made: string[] = [];
    try {
      for (const t of near) made.push((await createLock(t, { message: "near miss" })).name);
      const aliceCert = await w.userCert(alice);
      expect((await sshLogin(n1, aliceCert.cert, "alice")).kind).toBeTruthy();
      expect((await callUnary(w.client, "GetSession", {}, userMetadata(alice))).username).toBe("alice");
      await callUnary(
        n1.client,
        "Heartbeat",
        { hostname: n1.hostname, addresses: [], labels: {}, version: "0.1.0" },
        n1.md(),
      );

      const alLock = await createLock({ user: "al" }, { message: "al only" });
      made.push(alLock.name);
      expect(await statusOf(callUnary(w.client, "GetSession", {}, userMetadata(al)))).toMatchObject({
        code: status.PERMISSION_DENIED,
        details: "locked: al only",
      });
      expect((await callUnary(w.client, "GetSession", {}, userMetadata(alice))).username).toBe("alice");
    } finally {
      for (const name of made) await deleteLock(name);
    }
  });

  it("too long, control characters, bad names: INVALID_ARGUMENT; unicode and ':' are kept exactly", async () => {
    const bad = async (req: Record<string, unknown>, re: RegExp) =>
      expect(
        await statusOf(callUnary(w.client, "CreateLock", { ...lockReq({}), ...req }, w.admin())),
      ).toMatchObject({ code: status.INVALID_ARGUMENT, details: expect.stringMatching(re) });
    await bad({ target: { user: "a".repeat(100_000) } }, /longer than/);
    await bad({ target: { key_id: "k".repeat(1025) } }, /longer than/);
    await bad({ target: { user: "alice\nroot" } }, /control characters/);
    await bad({ target: { role: "access\u0000" } }, /control characters/);
    await bad({ target: { user: "alice" }, name: "../../etc/passwd" }, /DNS subdomain/);
    await bad({ target: { user: "alice" }, name: "a".repeat(300) }, /DNS subdomain/);
    await bad({ target: { user: "alice" }, message: "m".repeat(5000) }, /message is longer/);
    await bad({ target: { user: "alice" }, ttl_seconds: -1 }, /ttl_seconds/);
    // The message is printed on locked users' terminals: no escape sequences.
    await bad(
      { target: { user: "alice" }, message: "bye\u001b]0;owned\u0007\u001b[2J" },
      /control characters/,
    );
    await bad({ target: { user: "alice" }, message: "csi \u009b2J" }, /control characters/);
    const multiLine = await createLock({ user: "nobody-here" }, { message: "line one\n\tline two" });
    expect(multiLine.message).toBe("line one\n\tline two");
    await deleteLock(multiLine.name);
    await bad({ target: { user: "alice" }, ttl_seconds: 2 ** 53 }, /too long/);
    // A node's hostname in place of its ID would lock nothing while looking done.
    await bad(
      { target: { node: n1.hostname } },
      new RegExp(`hostname: a node lock names its ID \\(${n1.id}\\)`),
    );
    await bad({ target: { node: n1.hostname.toUpperCase() } }, /hostname/);

    const odd = ["ünïcødé-🔒", "user:alice:session:abc", "(a|b)+$", "x".repeat(1024)];
    const made: string[] = [];
    try {
      for (const keyId of odd) made.push((await createLock({ key_id: keyId })).name);
      const listed = (await callUnary(w.client, "ListLocks", {}, w.admin())).locks;
      for (const keyId of odd) expect(listed.map((l) => l.target?.key_id)).toContain(keyId);
      // None of them is alice's real key id: she is unaffected.
      const c = await w.userCert(alice);
      expect((await sshLogin(n1, c.cert, "alice")).kind).toBeTruthy();
      // A second lock under a taken name is refused, never replaces (replacing could lift it).
      expect(await statusOf(createLock({ user: "carol" }, { name: made[0] ?? "" }))).toMatchObject({
        code: status.ALREADY_EXISTS,
      });
      expect(listed.find((l) => l.name === made[0])?.target?.key_id).toBe(odd[0]);
    } finally {
      for (const name of made) await deleteLock(name);
    }
  });
});

describe("locks: in force before CreateLock returns, no way around them", () => {
  it("a certificate issued a moment before the lock is refused by auth the moment CreateLock answers", async () => {
    for (let i = 0; i < 5; i++) {
      const c = await w.userCert(alice);
      expect((await sshLogin(n1, c.cert, "alice")).kind).toBeTruthy();
      const lock = await createLock({ user: "alice" }, { message: `round ${i}` });
      const [login, session, cert] = await Promise.all([
        statusOf(sshLogin(n1, c.cert, "alice")),
        statusOf(callUnary(w.client, "GetSession", {}, userMetadata(alice))),
        statusOf(
          callUnary(
            w.client,
            "IssueUserCerts",
            { ssh_public_key: generateSshKeyPair("ed25519").publicLine, ttl_seconds: 600 },
            userMetadata(alice),
          ),
        ),
      ]);
      for (const s of [login, session, cert])
        expect(s).toMatchObject({ code: status.PERMISSION_DENIED, details: `locked: round ${i}` });
      await deleteLock(lock.name);
    }
  });

  it("a locked user gets no new session by password, by a password reset, or through a node login", async () => {
    const lock = await createLock({ user: "alice" }, { message: "escape attempt" });
    try {
      expect(await statusOf(w.login("alice"))).toMatchObject({
        code: status.PERMISSION_DENIED,
        details: expect.stringContaining("locked: escape attempt"),
      });
      // Logging out is the one call a locked session may still make.
      expect((await statusOf(callUnary(w.client, "DeleteSession", {}, userMetadata(alice)))).code).toBe(0);
      // An admin's reset (or one alice phished) sets a password but opens no door.
      const reset = await callUnary(w.client, "CreatePasswordReset", { name: "alice" }, w.admin());
      await statusOf(
        callUnary(w.client, "ResetPassword", {
          token: reset.token,
          new_password: "trust-attacks-user-password",
        }),
      );
      expect(await statusOf(w.login("alice"))).toMatchObject({ code: status.PERMISSION_DENIED });
    } finally {
      await deleteLock(lock.name);
    }
    alice = await w.login("alice");
  });
});

describe("an admin who locks themselves out", () => {
  it("is refused everywhere, DeleteLock included; removing the Lock's file lets them back in", async () => {
    const own = await createLock({ user: "admin" }, { message: "oops" });
    expect(await statusOf(deleteLock(own.name))).toMatchObject({
      code: status.PERMISSION_DENIED,
      details: "locked: oops",
    });
    // The recovery docs/locks.md gives for embedded mode: the Lock is a file in the resource folder.
    const file = join(w.platform.data.paths.manifests, MANAGED_DIR, `lock-${own.name}.yaml`);
    expect(await readFile(file, "utf8")).toContain("user: admin");
    await rm(file);
    await vi.waitFor(
      async () => expect((await callUnary(w.client, "ListLocks", {}, w.admin())).locks).toBeDefined(),
      10_000,
    );
  });
});

describe("WatchTrust: what it carries and how much one node may hold open", () => {
  it("snapshots carry no private key; one node opening 300 streams holds at most 32, others unaffected", async () => {
    const other = w.watch(n1.client, n1.md());
    await vi.waitFor(() => expect(other.seen.length).toBeGreaterThan(0));
    const streams = Array.from({ length: 300 }, () => w.watch(n2.client, n2.md()));
    // Every stream is answered: a snapshot, and for all but the newest 32 then RESOURCE_EXHAUSTED.
    await vi.waitFor(() => {
      const ended = streams.filter((s) => s.error());
      expect(ended).toHaveLength(300 - MAX_STREAMS_PER_CALLER);
      for (const s of ended) expect(s.error()?.code).toBe(status.RESOURCE_EXHAUSTED);
      for (const s of streams.filter((x) => !x.error())) expect(s.seen.length).toBeGreaterThan(0);
    }, 30_000);
    const live = streams.find((s) => !s.error());
    const text = JSON.stringify(live?.seen[0]);
    expect(text).not.toMatch(/PRIVATE KEY/);
    expect(live?.seen[0]?.public_keys?.user_ca_ssh_public_keys?.length).toBeGreaterThan(0);
    // A lock still reaches the live streams of that node and the other node's one stream.
    const lock = await createLock({ user: "nobody-at-all" }, { message: "fan-out" });
    try {
      await vi.waitFor(() => {
        for (const s of [other, ...streams.filter((x) => !x.error())])
          expect(s.seen.at(-1)?.locks?.map((l) => l.name)).toContain(lock.name);
      });
      expect(other.error()).toBeUndefined();
      // A reconnecting watcher is never locked out by its own old streams: the newest is served.
      const fresh = w.watch(n2.client, n2.md());
      await vi.waitFor(() => expect(fresh.seen.at(-1)?.locks?.map((l) => l.name)).toContain(lock.name));
    } finally {
      await deleteLock(lock.name);
    }
    for (const s of [other, ...streams]) s.stream.cancel();
  });
});

describe("WatchTrust: a stream lives no longer than the credential that opened it", () => {
  it("an admin's stream ends after logout; a removed node's ends; a locked node's goes on", async () => {
    const session = await w.adminLogin();
    const admin = w.watch(w.client, userMetadata(session));
    const gone = await w.joinNode("watch-removed");
    const locked = await w.joinNode("watch-locked");
    const goneWatch = w.watch(gone.client, gone.md());
    const lockedWatch = w.watch(locked.client, locked.md());
    await vi.waitFor(() => {
      for (const x of [admin, goneWatch, lockedWatch]) expect(x.seen.length).toBeGreaterThan(0);
    });
    await callUnary(w.client, "DeleteSession", {}, userMetadata(session));
    await callUnary(w.client, "DeleteNode", { node: gone.id }, w.admin());
    const lock = await createLock({ node: locked.id }, { message: "watch on" });
    try {
      await vi.waitFor(() => {
        expect(admin.error()?.code).toBe(status.UNAUTHENTICATED);
        expect(goneWatch.error()?.code).toBe(status.UNAUTHENTICATED);
      }, 10_000);
      // A locked node keeps being told about its own lock (docs/locks.md).
      await vi.waitFor(() => expect(lockedWatch.seen.at(-1)?.locks?.map((l) => l.name)).toContain(lock.name));
      expect(lockedWatch.error()).toBeUndefined();
      // Nothing after the end: a lock made now reaches neither ended stream.
      const seen = [admin.seen.length, goneWatch.seen.length];
      const later = await createLock({ user: "nobody-later" });
      await vi.waitFor(() =>
        expect(lockedWatch.seen.at(-1)?.locks?.map((l) => l.name)).toContain(later.name),
      );
      expect([admin.seen.length, goneWatch.seen.length]).toEqual(seen);
      await deleteLock(later.name);
    } finally {
      await deleteLock(lock.name);
    }
  });
});

describe("lock messages reach terminals", () => {
  it("a Lock file with escape sequences in its message (no CreateLock check) is printed without them", async () => {
    const file = join(w.platform.data.paths.manifests, "lock-escape.yaml");
    const watch = w.watch(n1.client, n1.md());
    const raw = "maintenance\u001b]0;owned\u0007\u001b[2J\u009b31m\nsee the wiki";
    await writeFile(
      file,
      toYaml({
        apiVersion: API_VERSION,
        kind: "Lock",
        metadata: { name: "escape-by-file" },
        spec: { target: { user: "nobody-escape" }, message: raw },
      }),
    );
    try {
      await vi.waitFor(
        () => expect(watch.seen.at(-1)?.locks?.map((l) => l.name)).toContain("escape-by-file"),
        10_000,
      );
      const proto = watch.seen.at(-1)?.locks?.find((l) => l.name === "escape-by-file");
      if (!proto) throw new Error("no lock in the snapshot");
      // The snapshot carries the resource as written; what a node and the proxy print does not.
      expect(proto.message).toBe(raw);
      const lock = lockFromProto(proto);
      for (const shown of [agentLockMessage(lock), lockedMessage(lock, "nobody-escape")]) {
        const controls = [...shown].filter((ch) => {
          const c = ch.charCodeAt(0);
          return (c < 0x20 && c !== 0x0a) || (c >= 0x7f && c <= 0x9f);
        });
        expect(controls).toEqual([]);
        expect(shown).toContain("maintenance\uFFFD]0;owned\uFFFD\uFFFD[2J\uFFFD31m\nsee the wiki");
      }
    } finally {
      await rm(file, { force: true });
    }
  });
});

describe("node renewal under attack", () => {
  it("only a node renews: a user (even an admin), a bot, the proxy, nobody, or a node posing as another are refused", async () => {
    const bot = await w.bot("renew-bot", ["access"]);
    const proxyTls = w.platform.proxyIdentity.clientTls();
    const proxy = w.clientWith(proxyTls.certPem, proxyTls.keyPem);
    const proxyId = /svc:\/\/proxy\/([^,\s]+)/.exec(parseCertificatePem(proxyTls.certPem).toString())?.[1];
    const attempts = await Promise.all([
      statusOf(callUnary(w.client, "RenewNodeCredentials", renewKeys(), w.admin())),
      statusOf(callUnary(w.client, "RenewNodeCredentials", renewKeys(), userMetadata(bob))),
      statusOf(callUnary(bot.client, "RenewNodeCredentials", renewKeys())),
      statusOf(callUnary(w.client, "RenewNodeCredentials", renewKeys())),
      statusOf(callUnary(n1.client, "RenewNodeCredentials", renewKeys(), agentMetadata(n2.id))),
      statusOf(
        callUnary(proxy, "RenewNodeCredentials", renewKeys(), agentMetadata(`proxy:${proxyId ?? "x"}`)),
      ),
    ]);
    for (const a of attempts) expect([status.PERMISSION_DENIED, status.UNAUTHENTICATED]).toContain(a.code);
    expect(attempts[4]?.code).toBe(status.UNAUTHENTICATED);
  });

  it("keys that are not acceptable public keys are refused with INVALID_ARGUMENT", async () => {
    const node = await w.joinNode("renew-bad-keys");
    const ok = renewKeys();
    const rsa1024 = generateKeyPairSync("rsa", { modulusLength: 1024 });
    const p521 = generateKeyPairSync("ec", { namedCurve: "secp521r1" });
    const ec = generateEcdsaP256();
    const certLine = (await w.userCert(bob)).cert;
    const certPem = parseCertificatePem(w.platform.proxyIdentity.clientTls().certPem).toString();
    const cases: Array<[string, Record<string, string>]> = [
      ["garbage ssh key", { ...ok, ssh_public_key: "not a key" }],
      ["empty ssh key", { ...ok, ssh_public_key: "" }],
      ["ssh-rsa 1024", { ...ok, ssh_public_key: sshRsaLine(1024) }],
      ["ssh-rsa 512", { ...ok, ssh_public_key: sshRsaLine(512) }],
      ["ssh-rsa 4096", { ...ok, ssh_public_key: sshRsaLine(4096) }],
      ["an SSH certificate as key", { ...ok, ssh_public_key: certLine }],
      [
        "garbage TLS key",
        { ...ok, tls_public_key_pem: "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n" },
      ],
      [
        "RSA-1024 TLS key",
        { ...ok, tls_public_key_pem: String(rsa1024.publicKey.export({ type: "spki", format: "pem" })) },
      ],
      [
        "P-521 TLS key",
        { ...ok, tls_public_key_pem: String(p521.publicKey.export({ type: "spki", format: "pem" })) },
      ],
      ["an X.509 certificate as TLS key", { ...ok, tls_public_key_pem: certPem }],
      ["a private key as TLS key", { ...ok, tls_public_key_pem: privateKeyToPem(ec.privateKey) }],
      ["a huge TLS key", { ...ok, tls_public_key_pem: "x".repeat(100_000) }],
    ];
    for (const [what, req] of cases) {
      const s = await statusOf(callUnary(node.client, "RenewNodeCredentials", req, node.md()));
      expect({ what, code: s.code }).toEqual({ what, code: status.INVALID_ARGUMENT });
      expect(s.details).not.toMatch(/PRIVATE KEY|at \w+ \(/);
    }
    // None of the refusals spent the node's renewal allowance.
    expect(
      (await callUnary(node.client, "RenewNodeCredentials", renewKeys(), node.md())).host_certificate,
    ).toMatch(/^ssh-ed25519-cert-v01@openssh.com /);
  });

  it("a renewed identity is exactly the old one: same principals, key id and TLS identity, no more", async () => {
    const node = await w.joinNode("renew-same-identity");
    const keys = renewKeys();
    const r = await callUnary(node.client, "RenewNodeCredentials", keys, node.md());
    const host = parseSshCertificate(r.host_certificate);
    expect(host.type).toBe("host");
    expect(host.principals.sort()).toEqual([node.id, node.hostname].sort());
    expect(host.keyId).toContain(node.id);
    expect(host.extensions).toEqual([]);
    expect(host.criticalOptions).toEqual({});
    const tls = new X509Certificate(r.tls_certificate_pem);
    expect(tls.subjectAltName).toBe(`URI:svc://agent/${encodeURIComponent(node.id)}`);
    expect(tls.ca).toBe(false);
    // The new certificate is the same caller: a heartbeat as itself works, as another node does not.
    const renewed = w.clientWith(r.tls_certificate_pem, keys.tlsKeyPem);
    const beat = { hostname: node.hostname, addresses: [], labels: {}, version: "0.1.0" };
    await callUnary(renewed, "Heartbeat", beat, node.md());
    expect((await statusOf(callUnary(renewed, "Heartbeat", beat, n1.md()))).code).toBe(
      status.UNAUTHENTICATED,
    );
  });

  it("a storm of concurrent renewals from one node: one wins, the rest are refused; another node still renews", async () => {
    const a = await w.joinNode("renew-storm-a");
    const b = await w.joinNode("renew-storm-b");
    const results = await Promise.all(
      Array.from({ length: 30 }, () =>
        statusOf(callUnary(a.client, "RenewNodeCredentials", renewKeys(), a.md())),
      ),
    );
    const codes = results.map((r) => r.code);
    expect(codes.filter((c) => c === 0)).toHaveLength(1);
    // Refused before any signing: a burst costs auth one renewal's work, not one per request.
    expect(codes.filter((c) => c !== 0 && c !== status.RESOURCE_EXHAUSTED)).toEqual([]);
    expect(await statusOf(callUnary(a.client, "RenewNodeCredentials", renewKeys(), a.md()))).toMatchObject({
      code: status.RESOURCE_EXHAUSTED,
    });
    expect((await statusOf(callUnary(b.client, "RenewNodeCredentials", renewKeys(), b.md()))).code).toBe(0);
  });

  it("a removed node and a locked node cannot renew", async () => {
    const gone = await w.joinNode("renew-removed");
    const locked = await w.joinNode("renew-locked");
    await callUnary(w.client, "DeleteNode", { node: gone.id }, w.admin());
    expect(
      (await statusOf(callUnary(gone.client, "RenewNodeCredentials", renewKeys(), gone.md()))).code,
    ).toBe(status.UNAUTHENTICATED);
    const lock = await createLock({ node: locked.id }, { message: "compromised host" });
    try {
      expect(
        await statusOf(callUnary(locked.client, "RenewNodeCredentials", renewKeys(), locked.md())),
      ).toMatchObject({ code: status.PERMISSION_DENIED, details: "node is locked: compromised host" });
    } finally {
      await deleteLock(lock.name);
    }
  });
});

describe("KRL", () => {
  it("without locks it is a valid KRL revoking nothing; a lock on 'al' revokes al's certificate, not alice's", async () => {
    const alCert = (await w.userCert(al)).cert;
    const aliceCert = (await w.userCert(alice)).cert;
    const empty = Buffer.from((await callUnary(n1.client, "ExportKrl", {}, n1.md())).krl);
    expect(await krlVerdict(work, empty, alCert)).toBe("ok");
    expect(await krlVerdict(work, empty, aliceCert)).toBe("ok");
    const lock = await createLock({ user: "al" }, { message: "krl" });
    try {
      const krl = Buffer.from((await callUnary(n1.client, "ExportKrl", {}, n1.md())).krl);
      expect(await krlVerdict(work, krl, alCert)).toBe("revoked");
      expect(await krlVerdict(work, krl, aliceCert)).toBe("ok");
      // Key-id locks with odd ids (unicode, ':', 1024 characters) keep the KRL readable and narrow.
      const odd = ["ünïcødé-🔒", "user:alice:session:", "k".repeat(1024)];
      const oddLocks: string[] = [];
      try {
        for (const keyId of odd) oddLocks.push((await createLock({ key_id: keyId })).name);
        const withOdd = Buffer.from((await callUnary(n1.client, "ExportKrl", {}, n1.md())).krl);
        expect(await krlVerdict(work, withOdd, alCert)).toBe("revoked");
        expect(await krlVerdict(work, withOdd, aliceCert)).toBe("ok");
      } finally {
        for (const name of oddLocks) await deleteLock(name);
      }
    } finally {
      await deleteLock(lock.name);
    }
  });
});

describe("CA rotation under attack", () => {
  it("only admins rotate or read CA status: a user, a node, a bot are refused", async () => {
    const bot = await w.bot("rotate-bot", ["access"]);
    const req = { type: "user_ssh", phase: "init", mode: "manual", grace_period_seconds: 0, force: false };
    const attempts = await Promise.all([
      statusOf(callUnary(w.client, "RotateCertAuthority", req, userMetadata(bob))),
      statusOf(callUnary(n1.client, "RotateCertAuthority", req, n1.md())),
      statusOf(callUnary(bot.client, "RotateCertAuthority", req)),
      statusOf(callUnary(w.client, "ListCertAuthorities", {}, userMetadata(bob))),
      statusOf(callUnary(w.client, "RotateCertAuthority", req)),
    ]);
    for (const a of attempts) expect([status.PERMISSION_DENIED, status.UNAUTHENTICATED]).toContain(a.code);
    const list = await callUnary(w.client, "ListCertAuthorities", {}, w.admin());
    expect(list.authorities.find((a) => a.type === "user_ssh")?.phase).toBe("standby");
  });

  it("skipping or repeating a phase and bad input are refused clearly and change nothing", async () => {
    const rotate = (type: string, phase: string, extra: Record<string, unknown> = {}) =>
      statusOf(
        callUnary(
          w.client,
          "RotateCertAuthority",
          { type, phase, mode: "manual", grace_period_seconds: 0, force: false, ...extra },
          w.admin(),
        ),
      );
    for (const phase of ["update_clients", "update_servers", "rollback", "standby"]) {
      const s = await rotate("host_ssh", phase);
      expect({ phase, code: s.code }).toEqual({ phase, code: status.FAILED_PRECONDITION });
      expect(s.details.length).toBeGreaterThan(10);
    }
    expect((await rotate("../user_ssh", "init")).code).toBe(status.INVALID_ARGUMENT);
    expect((await rotate("user_ssh", "INIT")).code).toBe(status.INVALID_ARGUMENT);
    expect((await rotate("user_ssh", "init", { mode: "sometimes" })).code).toBe(status.INVALID_ARGUMENT);
    expect((await rotate("user_ssh", "init", { grace_period_seconds: -5 })).code).toBe(
      status.INVALID_ARGUMENT,
    );
    const list = await callUnary(w.client, "ListCertAuthorities", {}, w.admin());
    for (const a of list.authorities) {
      expect(a.phase).toBe("standby");
      expect(a.keys).toHaveLength(1);
    }
  });

  it("concurrent inits: one wins, one new key; early standby needs force; the removed key's certificates are refused", async () => {
    const before = await w.userCert(alice);
    expect((await sshLogin(n1, before.cert, "alice")).kind).toBeTruthy();
    const req = (phase: string, force = false) => ({
      type: "user_ssh",
      phase,
      mode: "manual",
      grace_period_seconds: 0,
      force,
    });
    const inits = await Promise.all(
      Array.from({ length: 8 }, () =>
        statusOf(callUnary(w.client, "RotateCertAuthority", req("init"), w.admin())),
      ),
    );
    expect(inits.filter((s) => s.code === 0)).toHaveLength(1);
    for (const s of inits.filter((s) => s.code !== 0)) expect(s.code).toBe(status.FAILED_PRECONDITION);
    const status1 = (await callUnary(w.client, "ListCertAuthorities", {}, w.admin())).authorities.find(
      (a) => a.type === "user_ssh",
    );
    expect(status1?.phase).toBe("init");
    expect(status1?.keys).toHaveLength(2);

    // Two operators pressing the next phase at once: one moves it, the other is told it moved.
    const next = await Promise.all(
      Array.from({ length: 4 }, () =>
        statusOf(callUnary(w.client, "RotateCertAuthority", req("update_clients"), w.admin())),
      ),
    );
    expect(next.filter((s) => s.code === 0)).toHaveLength(1);
    for (const s of next.filter((s) => s.code !== 0)) expect(s.code).toBe(status.FAILED_PRECONDITION);
    await callUnary(w.client, "RotateCertAuthority", req("update_servers"), w.admin());
    const early = await statusOf(callUnary(w.client, "RotateCertAuthority", req("standby"), w.admin()));
    expect(early.code).toBe(status.FAILED_PRECONDITION);
    expect(early.details).toMatch(/force|expire/i);
    // Still trusted until the rotation ends.
    expect((await sshLogin(n1, before.cert, "alice")).kind).toBeTruthy();
    await callUnary(w.client, "RotateCertAuthority", req("standby", true), w.admin());
    const after = await w.userCert(alice);
    expect((await sshLogin(n1, after.cert, "alice")).kind).toBeTruthy();
    expect((await statusOf(sshLogin(n1, before.cert, "alice"))).code).not.toBe(0);
  });

  it("no private key in CA status, public keys, snapshots, audit events, logs or error messages", async () => {
    const watch = w.watch(n1.client, n1.md());
    await vi.waitFor(() => expect(watch.seen.length).toBeGreaterThan(0));
    const answers = JSON.stringify([
      await callUnary(w.client, "ListCertAuthorities", {}, w.admin()),
      await callUnary(w.client, "GetPublicKeys", {}),
      watch.seen,
      await callUnary(
        w.client,
        "SearchAuditEvents",
        { type: "", user: "", limit: 500, offset: 0 },
        w.admin(),
      ),
    ]);
    const logs = w.logs();
    expect(logs.length).toBeGreaterThan(1000);
    for (const text of [answers, logs]) expect(text).not.toMatch(/PRIVATE KEY/);
    // The CA private keys' bodies, as stored, appear nowhere either.
    const caDir = w.platform.data.paths.ca;
    const secrets: string[] = [];
    for (const f of await readdir(caDir, { recursive: true }).catch(() => [] as string[])) {
      // The store keeps JSON: PEM line breaks are escaped there.
      const body = (await readFile(join(caDir, String(f)), "utf8").catch(() => "")).replace(/\\n/g, "\n");
      for (const m of body.matchAll(/-----BEGIN [A-Z ]*PRIVATE KEY-----\n([A-Za-z0-9+/=\n]+?)-----END/g))
        secrets.push((m[1] ?? "").replace(/\n/g, "").slice(0, 48));
    }
    expect(secrets.length).toBeGreaterThan(0);
    for (const s of secrets) {
      expect(answers).not.toContain(s);
      expect(logs).not.toContain(s);
    }
  });
});
