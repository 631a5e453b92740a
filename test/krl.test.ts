// Agentless revocation end to end, all real: an embedded platform (`svcd start`), a plain OpenSSH
// sshd registered with `svcd agentless` and configured with RevokedKeys, two users whose
// certificates come from `svc login` + `svc certs`, and the real `ssh` client. A lock made with
// `svcctl lock add` (or CreateLock) reaches sshd through the KRL: once as `svcctl export --type
// krl` writes it (what a cron job runs), once as `svcd agent --krl-file` keeps it fresh by itself
// (a second sshd reads that file). The locked user is refused ("revoked" in sshd's log), the other
// still logs in, and removing the lock lets the first back in.
import { execFile, spawn } from "node:child_process";
import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SqliteBackend } from "../core/backend/sqlite.ts";
import { encodeKrl } from "../core/certs/krl.ts";
import { SshCertSigner } from "../core/certs/ssh-cert.ts";
import { generateSshKeyPair } from "../core/certs/ssh-keys.ts";
import { ManualClock } from "../core/clock.ts";
import type { LockRecord } from "../core/locks/lock.ts";
import { KrlFile } from "../server/agent/krl-file.ts";
import { CERT_JOURNAL_PREFIX, CertJournal } from "../server/auth/cert-journal.ts";
import { callUnary, userMetadata } from "../server/auth/client.ts";
import { exportKrl as exportKrlRpc, KrlCache, revokedKeyIds } from "../server/auth/krl.ts";
import { bin, type Daemon, json, type RunResult, run, waitFor } from "./cli-fixture.ts";
import { freePort } from "./harness/ports.ts";
import { certLogin, type LoginOutcome, svcCertFiles } from "./harness/ssh-login.ts";
import { type RunningSshd, startSshd } from "./harness/sshd.ts";
import { type RotationPlatform, startRotationPlatform } from "./rotation-fixture.ts";

const execFileP = promisify(execFile);
/** The agent's KRL follows a lock through its trust stream; generous for a loaded machine. */
const PROPAGATION_MS = 60_000;

interface CertFiles {
  private_key: string;
  certificate: string;
  known_hosts: string;
}

describe("KRL: locks reach an agentless sshd through RevokedKeys", () => {
  let dir = "";
  let p: RotationPlatform | undefined;
  let agent: Daemon | undefined;
  /** reads the KRL svcctl export writes */
  let cronSshd: RunningSshd | undefined;
  /** reads the KRL the agent keeps */
  let agentSshd: RunningSshd | undefined;
  const ports = { cron: 0, agent: 0, agentSsh: 0 };
  let bob: CertFiles;
  let carol: CertFiles;
  let carolEnv: NodeJS.ProcessEnv = {};
  let cronKrl = "";
  let agentKrl = "";

  const platform = (): RotationPlatform => {
    if (!p) throw new Error("no platform");
    return p;
  };
  const md = () => userMetadata(platform().adminSession);

  async function ok(r: Promise<RunResult>): Promise<RunResult> {
    const res = await r;
    expect(res.code, `${res.stdout}\n${res.stderr}`).toBe(0);
    return res;
  }

  /** `svcctl export --type krl --out FILE` as an admin types it (profile from svc login). */
  const exportKrl = async (): Promise<void> => {
    await ok(run("svcctl", ["export", "--type", "krl", "--out", cronKrl], { env: platform().adminEnv }));
  };

  /** One fresh ssh login; the error text when refused. */
  const login = (f: CertFiles, port: number): Promise<LoginOutcome> =>
    certLogin({ ...svcCertFiles(f), port, hostAlias: "legacy" });

  async function expectLogin(f: CertFiles, port: number): Promise<void> {
    const r = await login(f, port);
    expect(r, "why" in r ? r.why : "").toEqual({ ok: true });
  }

  /** Refused, and refused by the KRL (sshd logs the revocation), not for another reason. */
  async function expectRevoked(f: CertFiles, sshd: RunningSshd, port: number): Promise<void> {
    const before = sshd.log().length;
    const r = await login(f, port);
    expect(r.ok).toBe(false);
    await waitFor(() => /revoked/i.test(sshd.log().slice(before)), "sshd logs the revoked key", 10_000);
  }

  async function eventually(f: CertFiles, port: number, want: boolean, what: string): Promise<void> {
    await waitFor(async () => (await login(f, port)).ok === want, what, PROPAGATION_MS);
  }

  /** ssh-keygen -Q: is this certificate in that KRL? */
  async function inKrl(krl: string, f: CertFiles): Promise<boolean> {
    try {
      await execFileP("ssh-keygen", ["-Q", "-f", krl, f.certificate]);
      return false;
    } catch (err) {
      const e = err as { code?: number; stdout?: string };
      if (e.code === 1 && /REVOKED/.test(e.stdout ?? "")) return true;
      throw err;
    }
  }

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "svc-krl-e2e-"));
    p = await startRotationPlatform(dir);
    ports.cron = await freePort();
    ports.agent = await freePort();
    ports.agentSsh = await freePort();
    cronKrl = join(dir, "revoked.krl");
    agentKrl = join(dir, "agent-revoked.krl");
    // The sshd node: registered once; both sshd processes serve its host key and certificate.
    const hostKeyPath = join(dir, "ssh_host_ed25519_key");
    await execFileP("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", "legacy", "-f", hostKeyPath]);
    const out = join(dir, "agentless");
    await ok(
      run("svcd", [
        "agentless",
        "--auth",
        `127.0.0.1:${p.ports.auth}`,
        "--ca-file",
        p.caFile,
        "--token",
        await p.nodeToken("sshd-token"),
        "--hostname",
        "legacy",
        "--address",
        `127.0.0.1:${ports.cron}`,
        "--host-key",
        `${hostKeyPath}.pub`,
        "--out",
        out,
      ]),
    );
    const sshdConfig = (await readFile(join(out, "sshd_config.svc"), "utf8")).split("\n").filter(Boolean);
    const hostKey = { privatePath: hostKeyPath, publicLine: await readFile(`${hostKeyPath}.pub`, "utf8") };
    // After the registration: certificates name <login>@<node id> for the agentless nodes they see.
    const bobEnv = await p.addUser("bob", ["root"]);
    carolEnv = await p.addUser("carol", ["root"]);
    const certs = async (env: NodeJS.ProcessEnv, folder: string) =>
      json<CertFiles>(
        await ok(platform().svc(["certs", "--out", join(dir, folder), "--ttl", "2h", "--json"], env)),
      );
    bob = await certs(bobEnv, "bob-keys");
    carol = await certs(carolEnv, "carol-keys");

    // The cron way: the file exists before sshd needs it (a missing RevokedKeys file refuses all).
    await exportKrl();
    cronSshd = await startSshd({
      hostKey,
      extraConfig: [`Port ${ports.cron}`, `RevokedKeys ${cronKrl}`, ...sshdConfig],
    });

    // The agent way: an agent beside the second sshd keeps its KRL file.
    agent = await p.spawnAgent("krl-agent", join(dir, "agent"), [
      "--listen",
      `127.0.0.1:${ports.agent}`,
      "--krl-file",
      agentKrl,
    ]);
    await waitFor(async () => {
      if (agent?.child.exitCode !== null) throw new Error(`agent exited: ${agent?.output()}`);
      return stat(agentKrl).then(
        () => true,
        () => false,
      );
    }, "the agent writes its KRL file");
    agentSshd = await startSshd({
      hostKey,
      extraConfig: [`Port ${ports.agentSsh}`, `RevokedKeys ${agentKrl}`, ...sshdConfig],
    });
  }, 300_000);

  afterAll(async () => {
    await cronSshd?.stop();
    await agentSshd?.stop();
    await agent?.stop();
    await p?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("without a lock the KRLs are valid and empty: both users log in through both sshds", async () => {
    expect((await readFile(cronKrl)).subarray(0, 8).toString("latin1")).toBe("SSHKRL\n\0");
    expect((await stat(agentKrl)).mode & 0o777).toBe(0o644);
    for (const port of [ports.cron, ports.agentSsh]) {
      await expectLogin(bob, port);
      await expectLogin(carol, port);
    }
  });

  it("a user lock: the exported KRL refuses bob's certificate while carol still logs in", async () => {
    // As an admin types it; CreateLock underneath.
    await ok(
      run("svcctl", ["lock", "add", "--user", "bob", "--name", "bob-krl", "--message", "offboarding"], {
        env: platform().adminEnv,
      }),
    );
    // sshd re-reads RevokedKeys on every authentication: no reload.
    await exportKrl();
    expect(await inKrl(cronKrl, bob)).toBe(true);
    expect(await inKrl(cronKrl, carol)).toBe(false);
    await expectRevoked(bob, cronSshd as RunningSshd, ports.cron);
    await expectLogin(carol, ports.cron);

    // The same bytes to stdout, as `svcctl export --type krl > FILE` in a shell.
    const piped = join(dir, "piped.krl");
    await execFileP("sh", ["-c", `"${bin("svcctl")}" export --type krl > "${piped}"`], {
      env: { ...process.env, ...platform().adminEnv },
    });
    expect(await inKrl(piped, bob)).toBe(true);
    expect(await inKrl(piped, carol)).toBe(false);
  });

  it("the agent's --krl-file follows the lock by itself", async () => {
    await eventually(bob, ports.agentSsh, false, "the agent's sshd refuses bob");
    await expectRevoked(bob, agentSshd as RunningSshd, ports.agentSsh);
    await expectLogin(carol, ports.agentSsh);
  });

  it("a key-id lock revokes exactly that certificate", async () => {
    const keyId = /Key ID: "([^"]+)"/.exec(
      (await execFileP("ssh-keygen", ["-L", "-f", carol.certificate])).stdout,
    )?.[1];
    expect(keyId).toBeTruthy();
    await callUnary(platform().admin, "CreateLock", { name: "carol-cert", target: { key_id: keyId } }, md());
    await exportKrl();
    expect(await inKrl(cronKrl, carol)).toBe(true);
    await expectRevoked(carol, cronSshd as RunningSshd, ports.cron);
    await callUnary(platform().admin, "DeleteLock", { name: "carol-cert" }, md());
    await exportKrl();
    await expectLogin(carol, ports.cron);
  });

  it("removing the lock and exporting again lets bob back in; the agent's file follows", async () => {
    await ok(run("svcctl", ["lock", "rm", "bob-krl"], { env: platform().adminEnv }));
    await exportKrl();
    expect(await inKrl(cronKrl, bob)).toBe(false);
    await expectLogin(bob, ports.cron);
    await eventually(bob, ports.agentSsh, true, "the agent's sshd admits bob again");
    await expectLogin(carol, ports.agentSsh);
  });

  it("svc ssh through the proxy to the sshd (which knows no locks) ends when the user is locked: the proxy closes the stream, svc says why and exits 1", async () => {
    const child = spawn(bin("svc"), ["ssh", "root@legacy", 'while read l; do echo "got:$l"; done'], {
      env: { ...process.env, ...carolEnv },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
    });
    child.stderr.on("data", (d: Buffer) => {
      err += d.toString();
    });
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    const watchdog = setTimeout(() => child.kill("SIGKILL"), 120_000);
    try {
      child.stdin.write("hello\n");
      await waitFor(() => {
        if (child.exitCode !== null) throw new Error(`svc ssh ended early: ${err}`);
        return out.includes("got:hello");
      }, "the session through the proxy answers");
      await ok(
        run(
          "svcctl",
          ["lock", "add", "--user", "carol", "--name", "carol-stream", "--message", "stream cut"],
          {
            env: platform().adminEnv,
          },
        ),
      );
      expect(await exited).toBe(1);
      expect(err).toContain("stream cut");
    } finally {
      clearTimeout(watchdog);
      child.kill("SIGKILL");
      await ok(run("svcctl", ["lock", "rm", "carol-stream"], { env: platform().adminEnv }));
    }
  });

  it("ExportKrl serves admins, nodes and proxies only: a user without locks/list is refused", async () => {
    const r = await run("svcctl", ["export", "--type", "krl", "--out", join(dir, "x.krl")], {
      env: { SVC_HOME: join(dir, "carol-home") },
    });
    // Exit 4: access denied (docs/cli.md, "Exit codes"); no file written.
    expect(r.code, r.stderr).toBe(4);
    expect(r.stderr).toMatch(/not allowed to list locks/);
    await expect(stat(join(dir, "x.krl"))).rejects.toThrow();
  });
});

describe("issued-certificate journal and ExportKrl (in process)", () => {
  const clock = new ManualClock(Date.now());
  const backend = new SqliteBackend({ path: ":memory:", clock, sweepIntervalMs: 0 });
  const journal = new CertJournal({ backend, clock });
  const caOld = generateSshKeyPair("ed25519", { comment: "old" });
  const caNew = generateSshKeyPair("ed25519", { comment: "new" });
  const HOUR = 3600_000;
  let dir = "";
  const lock = (name: string, target: LockRecord["target"], expires?: Date): LockRecord => ({
    name,
    target,
    message: "",
    createdBy: "test",
    createdAt: clock.now(),
    ...(expires ? { expires } : {}),
  });
  const sign = (ca: typeof caOld, keyId: string, validBefore: Date) =>
    new SshCertSigner(ca.privateKey).sign({
      type: "user",
      publicKey: generateSshKeyPair("ed25519").publicLine,
      keyId,
      principals: ["root"],
      validAfter: new Date(clock.now().getTime() - 60_000),
      validBefore,
    });
  const record = async (
    ca: typeof caOld,
    kind: "user" | "bot" | "workload",
    name: string,
    keyId: string,
    roles: string[],
    ttlMs: number,
  ) => {
    const validBefore = new Date(clock.now().getTime() + ttlMs);
    const cert = sign(ca, keyId, validBefore);
    await journal.record({ keyId, kind, name, roles, validBefore, certBlob: cert.blob });
    return cert;
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "svc-krl-unit-"));
  });
  afterAll(async () => {
    await backend.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("ExportKrl with a cache: one journal scan for many callers while the locks stay; a lock change or age rebuilds it", async () => {
    const cache = new KrlCache(30_000);
    let scans = 0;
    let locks = [lock("k1", { user: "kim" })];
    const deps = {
      journal: {
        list: async () => {
          scans++;
          return journal.list();
        },
      },
      cache,
      locks: () => locks,
      publicKeys: () => ({ user_ca_ssh_public_keys: [caOld.publicLine] }),
      clock,
      isNode: async () => true,
    };
    const node = { kind: "agent" as const, agentId: "node-1" };
    await record(caOld, "user", "kim", "user=kim session=k", ["dev"], HOUR);
    const first = await Promise.all(Array.from({ length: 20 }, () => exportKrlRpc(node, deps)));
    expect(scans).toBe(1);
    expect(new Set(first.map((r) => r.digest)).size).toBe(1);
    // Another lock: a new KRL at once, with the new key id in it.
    await record(caOld, "user", "lee", "user=lee session=l", ["dev"], HOUR);
    locks = [...locks, lock("k2", { user: "lee" })];
    const second = await exportKrlRpc(node, deps);
    expect(scans).toBe(2);
    expect(second.digest).not.toBe(first[0]?.digest);
    // Same locks, but old: built again (a certificate journaled late is not missed for long).
    clock.advance(31_000);
    await exportKrlRpc(node, deps);
    expect(scans).toBe(3);
  });

  it("KrlFile writes only on a new digest, keeps the last file when auth fails, and fetches again after a snapshot", async () => {
    const path = join(dir, "agent.krl");
    let answer: { krl: Buffer; digest: string } | Error = { krl: Buffer.from("one"), digest: "d1" };
    let calls = 0;
    const logger = pino({ level: "silent" });
    const f = new KrlFile({
      path,
      fetch: async () => {
        calls++;
        if (answer instanceof Error) throw answer;
        return answer;
      },
      logger,
      intervalMs: 3_600_000,
      retryMs: 3_600_000,
      settleMs: 200,
    });
    try {
      await f.refresh();
      expect(await readFile(path, "utf8")).toBe("one");
      expect((await stat(path)).mode & 0o777).toBe(0o644);
      const first = (await stat(path)).mtimeMs;
      // Same digest: the file is left alone (sshd sees no change).
      answer = { krl: Buffer.from("other bytes, same digest"), digest: "d1" };
      await new Promise((r) => setTimeout(r, 20));
      await f.refresh();
      expect(await readFile(path, "utf8")).toBe("one");
      expect((await stat(path)).mtimeMs).toBe(first);
      // Auth unreachable: the last file stays.
      answer = new Error("unavailable");
      await f.refresh();
      expect(await readFile(path, "utf8")).toBe("one");
      // A snapshot: fetched now, and once more after settleMs (a lagging replica answered first).
      answer = { krl: Buffer.from("stale"), digest: "d2" };
      const before = calls;
      await f.onSnapshot();
      expect(await readFile(path, "utf8")).toBe("stale");
      answer = { krl: Buffer.from("fresh"), digest: "d3" };
      await waitFor(async () => (await readFile(path, "utf8")) === "fresh", "the settle re-fetch", 5_000);
      expect(calls).toBe(before + 2);
    } finally {
      await f.close();
    }
  });

  it("merges certificates of one key id (roles, CA keys, the latest expiry) and forgets them after it", async () => {
    await record(caOld, "user", "dora", "user=dora session=1", ["access"], 2 * HOUR);
    await record(caNew, "user", "dora", "user=dora session=1", ["auditor"], 1 * HOUR);
    const [e] = (await journal.list()).filter((x) => x.name === "dora");
    expect(e?.roles).toEqual(["access", "auditor"]);
    expect(e?.caFingerprints).toHaveLength(2);
    expect(e?.validBefore.getTime()).toBe(clock.now().getTime() + 2 * HOUR);
    clock.advance(2 * HOUR + 1000);
    expect((await journal.list()).filter((x) => x.name === "dora")).toEqual([]);
  });

  it("keepUntil (a session's expiry): the session's later certificates find the entry covering them and write nothing; a new role or CA key still merges, also from a second replica", async () => {
    const keyId = "user=gina session=s1";
    // The real backend, counting the journal's reads.
    let reads = 0;
    const counted = new Proxy(backend, {
      get(target, prop) {
        if (prop === "get") reads++;
        const v = Reflect.get(target, prop, target) as unknown;
        return typeof v === "function" ? v.bind(target) : v;
      },
    });
    const replica = new CertJournal({ backend: counted, clock });
    const sessionEnd = new Date(clock.now().getTime() + 8 * HOUR);
    const issue = async (j: CertJournal, ca: typeof caOld, roles: string[], ttlMs: number) => {
      const validBefore = new Date(clock.now().getTime() + ttlMs);
      const cert = sign(ca, keyId, validBefore);
      await j.record({
        keyId,
        kind: "user",
        name: "gina",
        roles,
        validBefore,
        certBlob: cert.blob,
        keepUntil: sessionEnd,
      });
    };
    const revision = async () => {
      const items = (await backend.range(CERT_JOURNAL_PREFIX)).filter(
        (i) => (i.value as { key_id?: string }).key_id === keyId,
      );
      expect(items).toHaveLength(1);
      return items[0]?.revision;
    };
    await issue(replica, caOld, ["access"], HOUR);
    const first = await revision();
    const entry = (await journal.list()).find((e) => e.keyId === keyId);
    expect(entry?.validBefore.getTime()).toBe(sessionEnd.getTime());
    clock.advance(10 * 60_000);
    const readsBefore = reads;
    await issue(replica, caOld, ["access"], HOUR);
    expect(await revision()).toBe(first);
    // Known to cover it: not even read.
    expect(reads).toBe(readsBefore);
    await issue(replica, caOld, ["access", "auditor"], HOUR);
    const second = await revision();
    expect(second).not.toBe(first);
    // Another replica knows nothing yet: it reads, finds the entry covering, and writes nothing.
    const other = new CertJournal({ backend, clock });
    await issue(other, caOld, ["auditor"], HOUR);
    expect(await revision()).toBe(second);
    await issue(other, caNew, ["auditor"], HOUR);
    expect(await revision()).not.toBe(second);
    const merged = (await journal.list()).find((e) => e.keyId === keyId);
    expect(merged?.roles).toEqual(["access", "auditor"]);
    expect(merged?.caFingerprints).toHaveLength(2);
    // Past the session's end the entry is gone, and a new certificate of the key id writes again.
    clock.advance(8 * HOUR);
    expect((await journal.list()).find((e) => e.keyId === keyId)).toBeUndefined();
    await issue(replica, caOld, ["access"], HOUR);
    expect((await journal.list()).find((e) => e.keyId === keyId)?.roles).toEqual(["access"]);
  });

  it("lists what a lock in force covers: user, role, bot, key id (with or without an entry); not a node lock", async () => {
    await record(caOld, "user", "erin", "user=erin session=a", ["dev"], HOUR);
    await record(caOld, "user", "fred", "user=fred session=b", ["ops"], HOUR);
    await record(caOld, "bot", "ci", "bot:ci:gen:2", ["deploy"], HOUR);
    await record(caOld, "workload", "spiffe://t/w", "workload:spiffe://t/w", ["ops"], HOUR);
    const entries = await journal.list();
    const now = clock.now();
    const ids = (locks: LockRecord[]) => revokedKeyIds(entries, locks, now);
    expect(ids([])).toEqual([]);
    expect(ids([lock("a", { user: "erin" })])).toEqual(["user=erin session=a"]);
    expect(ids([lock("b", { role: "ops" })])).toEqual(["user=fred session=b", "workload:spiffe://t/w"]);
    expect(ids([lock("c", { bot: "ci" })])).toEqual(["bot:ci:gen:2"]);
    expect(ids([lock("d", { keyId: "user=gone session=z" })])).toEqual(["user=gone session=z"]);
    expect(ids([lock("e", { node: "n1" })])).toEqual([]);
    // An expired lock covers nothing.
    expect(ids([lock("f", { user: "erin" }, new Date(now.getTime() - 1))])).toEqual([]);
  });

  it("ExportKrl: every trusted user CA key gets the key ids; agents must be nodes or proxies", async () => {
    const hankCert = await record(caOld, "user", "hank", "user=hank session=c", ["dev"], HOUR);
    const newCert = await record(caNew, "user", "hank", "user=hank session=c", ["dev"], HOUR);
    const other = await record(caOld, "user", "ivy", "user=ivy session=d", ["dev"], HOUR);
    const deps = {
      journal,
      locks: () => [lock("h", { user: "hank" })],
      publicKeys: () => ({ user_ca_ssh_public_keys: [caOld.publicLine, caNew.publicLine] }),
      clock,
      isNode: async (id: string) => id === "node-1",
    };
    const admin = {
      kind: "user" as const,
      username: "root",
      sessionHash: "",
      sessionExpires: new Date(),
      sessionCreated: new Date(),
      sessionMfa: false,
      sessionScope: "full" as const,
    };
    const res = await exportKrlRpc(admin, deps);
    const krlPath = join(dir, "export.krl");
    await writeFile(krlPath, res.krl as Buffer);
    const q = async (line: string) => {
      const f = join(dir, `c-${Math.random().toString(36).slice(2)}-cert.pub`);
      await writeFile(f, `${line}\n`);
      return execFileP("ssh-keygen", ["-Q", "-f", krlPath, f]).then(
        () => "ok",
        (e: { code?: number }) => (e.code === 1 ? "revoked" : `error ${e.code}`),
      );
    };
    expect(await q(hankCert.line)).toBe("revoked");
    expect(await q(newCert.line)).toBe("revoked");
    expect(await q(other.line)).toBe("ok");
    // The digest names the content, not the time: same revocations, same digest.
    clock.advance(1000);
    expect((await exportKrlRpc(admin, deps)).digest).toBe(res.digest);
    expect((await exportKrlRpc(admin, { ...deps, locks: () => [] })).digest).not.toBe(res.digest);
    // Nodes and proxies are admitted; another service identity or an unknown node is not.
    await expect(exportKrlRpc({ kind: "agent", agentId: "node-1" }, deps)).resolves.toBeDefined();
    await expect(exportKrlRpc({ kind: "agent", agentId: "proxy:p1" }, deps)).resolves.toBeDefined();
    await expect(exportKrlRpc({ kind: "agent", agentId: "node-2" }, deps)).rejects.toThrow(/nodes, proxies/);
    await expect(exportKrlRpc({ kind: "agent", agentId: "auth:a" }, deps)).rejects.toThrow(/nodes, proxies/);
    await expect(exportKrlRpc({ kind: "bot", botName: "ci" }, deps)).rejects.toThrow(/nodes, proxies/);
    // An empty KRL is still a KRL: same header as the encoder's.
    const empty = await exportKrlRpc(admin, { ...deps, locks: () => [] });
    expect(Buffer.from(empty.krl as Buffer).subarray(0, 44)).toEqual(
      encodeKrl({
        generatedAt: clock.now(),
        version: BigInt(Math.floor(clock.now().getTime() / 1000)),
        comment: "svc: certificates covered by locks",
      }).subarray(0, 44),
    );
  });
});
