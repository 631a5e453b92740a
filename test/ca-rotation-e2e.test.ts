// CA rotation end to end, all real: an embedded platform (`svcd start`), a node agent (`svcd
// agent`), a plain OpenSSH sshd registered with `svcd agentless`, a user whose certificates and
// known_hosts come from `svc login` + `svc certs`, the real `ssh` client with
// StrictHostKeyChecking=yes, and an SSH session on each node held open from the first rotation
// to the last. The admin moves the phases with RotateCertAuthority (what `svcctl ca rotate` calls).
// What must hold (docs/ca-rotation.md, "Tested end to end"): nothing that should be accepted is
// refused at any phase, and after standby the old key's certificates are refused.
import { type ChildProcessWithoutNullStreams, execFile, spawn } from "node:child_process";
import { X509Certificate } from "node:crypto";
import { copyFile, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Daemon, json, type RunResult, run, waitFor } from "./cli-fixture.ts";
import { freePort } from "./harness/ports.ts";
import { type CertLogin, certLogin, certSshArgs, type LoginOutcome } from "./harness/ssh-login.ts";
import { type RunningSshd, startSshd } from "./harness/sshd.ts";
import { type RotationPlatform, startRotationPlatform } from "./rotation-fixture.ts";

const execFileP = promisify(execFile);
const STEP = 300_000;
/** Trust reaches an agent through its snapshot stream (or, at worst, its 30 s heartbeat poll). */
const PROPAGATION_MS = 120_000;

interface CertFiles {
  private_key: string;
  certificate: string;
  known_hosts: string;
}

interface Node {
  name: string;
  port: number;
}

/** An SSH session held open: every `ping` must come back through the same connection. */
class LiveSession {
  readonly #child: ChildProcessWithoutNullStreams;
  #out = "";
  #n = 0;
  constructor(args: string[]) {
    this.#child = spawn("ssh", [...args, 'while read l; do echo "got:$l"; done'], { stdio: "pipe" });
    this.#child.stdout.on("data", (d: Buffer) => {
      this.#out = (this.#out + d.toString()).slice(-65536);
    });
    this.#child.stderr.on("data", (d: Buffer) => {
      this.#out = (this.#out + d.toString()).slice(-65536);
    });
  }
  async ping(): Promise<void> {
    const tag = `p${++this.#n}-${Date.now()}`;
    this.#child.stdin.write(`${tag}\n`);
    await waitFor(
      () => {
        if (this.#child.exitCode !== null) throw new Error(`session ended: ${this.#out}`);
        return this.#out.includes(`got:${tag}`);
      },
      `the open session answers ${tag}`,
      30_000,
    );
  }
  async close(): Promise<void> {
    if (this.#child.exitCode !== null) return;
    const exited = new Promise((r) => this.#child.once("exit", r));
    this.#child.stdin.end();
    const t = setTimeout(() => this.#child.kill("SIGKILL"), 10_000);
    await exited;
    clearTimeout(t);
  }
}

describe("CA rotation with real OpenSSH on both sides and open sessions", () => {
  let dir = "";
  let p: RotationPlatform | undefined;
  let agent: Daemon | undefined;
  let sshd: RunningSshd | undefined;
  let stale: RunningSshd | undefined;
  let aliceEnv: NodeJS.ProcessEnv;
  let hostKeyPath = "";
  let agentlessOut = "";
  let tokenCount = 0;
  const live: LiveSession[] = [];
  const agentNode: Node = { name: "node1", port: 0 };
  const sshdNode: Node = { name: "legacy", port: 0 };

  const platform = (): RotationPlatform => {
    if (!p) throw new Error("no platform");
    return p;
  };
  const svc = (args: string[], env: NodeJS.ProcessEnv): Promise<RunResult> => platform().svc(args, env);
  const rotate = (type: string, phase: string) => platform().rotate(type, phase);
  const publicKeys = () => platform().publicKeys();

  async function ok(r: Promise<RunResult>): Promise<RunResult> {
    const res = await r;
    expect(res.code, `${res.stdout}\n${res.stderr}`).toBe(0);
    return res;
  }

  /** `svcd agentless` for the sshd: the first run registers it, later runs re-issue its files. */
  async function agentless(): Promise<void> {
    const token = await platform().nodeToken(`sshd-${++tokenCount}`);
    await ok(
      run("svcd", [
        "agentless",
        "--auth",
        `127.0.0.1:${platform().ports.auth}`,
        "--ca-file",
        platform().caFile,
        "--token",
        token,
        "--hostname",
        sshdNode.name,
        "--address",
        `127.0.0.1:${sshdNode.port}`,
        "--host-key",
        `${hostKeyPath}.pub`,
        "--out",
        agentlessOut,
      ]),
    );
  }

  /** sshd re-reads its configuration (and HostCertificate) on SIGHUP; open sessions stay. */
  async function reloadSshd(): Promise<void> {
    if (!sshd) throw new Error("no sshd");
    const pid = Number((await readFile(join(sshd.dir, "sshd.pid"), "utf8")).trim());
    process.kill(pid, "SIGHUP");
  }

  async function certs(out: string): Promise<CertFiles> {
    const r = await ok(svc(["certs", "--out", join(dir, out), "--ttl", "2h", "--json"], aliceEnv));
    return json<CertFiles>(r);
  }

  /** `f` logging in to `node`, trusting hosts through `knownHosts`. */
  const loginTo = (
    f: Pick<CertFiles, "private_key" | "certificate">,
    knownHosts: string,
    node: Node,
  ): CertLogin => ({
    key: f.private_key,
    certificate: f.certificate,
    knownHosts,
    port: node.port,
    hostAlias: node.name,
  });
  const sshArgs = (...a: Parameters<typeof loginTo>): string[] => certSshArgs(loginTo(...a));
  /** One fresh ssh login running a command; the error text when refused. */
  const login = (...a: Parameters<typeof loginTo>): Promise<LoginOutcome> => certLogin(loginTo(...a));

  async function expectLogin(f: CertFiles, node: Node, kh?: string): Promise<void> {
    const r = await login(f, kh ?? f.known_hosts, node);
    expect(r, `${node.name}: ${"why" in r ? r.why : ""}`).toEqual({ ok: true });
  }

  /** Polls until `node` admits the certificate (trust reached it), then returns. */
  async function eventuallyLogin(f: CertFiles, node: Node, kh?: string): Promise<void> {
    let last = "";
    await waitFor(
      async () => {
        const r = await login(f, kh ?? f.known_hosts, node);
        if (!r.ok) last = r.why;
        return r.ok;
      },
      `${node.name} admits the certificate (last: ${last})`,
      PROPAGATION_MS,
    ).catch((err: Error) => {
      throw new Error(`${err.message}; last refusal: ${last}`);
    });
  }

  /** Polls until `node` refuses the certificate (the old key left its trust). */
  async function eventuallyRefused(f: CertFiles, node: Node, kh?: string): Promise<string> {
    let why = "";
    await waitFor(
      async () => {
        const r = await login(f, kh ?? f.known_hosts, node);
        if (!r.ok) why = r.why;
        return !r.ok;
      },
      `${node.name} refuses the certificate`,
      PROPAGATION_MS,
    );
    return why;
  }

  /** "SHA256:..." of the CA that signed an OpenSSH certificate file. */
  async function signingCa(certificatePath: string): Promise<string> {
    const text = (await execFileP("ssh-keygen", ["-L", "-f", certificatePath])).stdout;
    const fp = /Signing CA: \S+ (SHA256:\S+)/.exec(text)?.[1];
    if (!fp) throw new Error(`no signing CA in ${text}`);
    return fp;
  }

  async function fingerprintOf(line: string): Promise<string> {
    const file = join(dir, `fp-${Date.now()}-${Math.random().toString(36).slice(2)}.pub`);
    await writeFile(file, `${line.trim()}\n`);
    return (await execFileP("ssh-keygen", ["-lf", file])).stdout.split(" ")[1] ?? "";
  }

  /** A known_hosts file trusting exactly `keys`. */
  async function knownHostsOf(name: string, keys: string[]): Promise<string> {
    const file = join(dir, name);
    await writeFile(file, keys.map((k) => `@cert-authority * ${k.trim()}\n`).join(""));
    return file;
  }

  const caLines = (text: string) => text.split("\n").filter((l) => l.startsWith("@cert-authority"));

  async function pingAll(): Promise<void> {
    for (const s of live) await s.ping();
  }

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "svc-rotation-e2e-"));
    p = await startRotationPlatform(dir);
    agentNode.port = await freePort();
    sshdNode.port = await freePort();
    aliceEnv = await p.addUser("alice", ["alice", "root"]);
    const agentAddress = `127.0.0.1:${agentNode.port}`;
    agent = await p.spawnAgent(agentNode.name, join(dir, "agent"), [
      "--listen",
      agentAddress,
      "--advertise-address",
      agentAddress,
    ]);
    await waitFor(() => {
      if (agent?.child.exitCode !== null) throw new Error(`agent exited: ${agent?.output()}`);
      return /serving SSH/.test(agent.output());
    }, "agent serving SSH");

    hostKeyPath = join(dir, "ssh_host_ed25519_key");
    await execFileP("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", sshdNode.name, "-f", hostKeyPath]);
    agentlessOut = join(dir, "agentless");
    await agentless();
    const sshdConfig = (await readFile(join(agentlessOut, "sshd_config.svc"), "utf8"))
      .split("\n")
      .filter(Boolean);
    sshd = await startSshd({
      hostKey: { privatePath: hostKeyPath, publicLine: await readFile(`${hostKeyPath}.pub`, "utf8") },
      extraConfig: [`Port ${sshdNode.port}`, ...sshdConfig],
    });
  }, 300_000);

  afterAll(async () => {
    for (const s of live) await s.close();
    await stale?.stop();
    await sshd?.stop();
    await agent?.stop();
    await p?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it(
    "svcd agentless run again for the same sshd keeps its node ID and re-issues its files; another host key under the name is refused",
    async () => {
      const config = () => readFile(join(agentlessOut, "sshd_config.svc"), "utf8");
      const cert = () => readFile(join(agentlessOut, "ssh_host_cert.pub"), "utf8");
      const [config0, cert0] = [await config(), await cert()];
      await agentless();
      expect(await config()).toBe(config0);
      const cert1 = await cert();
      expect(cert1).not.toBe(cert0);
      const serial = async (c: string) => {
        const file = join(dir, `cert-${Date.now()}.pub`);
        await writeFile(file, c);
        return /Serial: (\d+)/.exec((await execFileP("ssh-keygen", ["-L", "-f", file])).stdout)?.[1];
      };
      expect(await serial(cert1)).not.toBe(await serial(cert0));
      const other = join(dir, "impostor_key");
      await execFileP("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", other]);
      const impostor = await run("svcd", [
        "agentless",
        "--auth",
        `127.0.0.1:${platform().ports.auth}`,
        "--ca-file",
        platform().caFile,
        "--token",
        await platform().nodeToken("impostor"),
        "--hostname",
        sshdNode.name,
        "--address",
        `127.0.0.1:${sshdNode.port}`,
        "--host-key",
        `${other}.pub`,
        "--out",
        join(dir, "impostor-out"),
      ]);
      expect(impostor.code).not.toBe(0);
      expect(impostor.stderr).toMatch(/already registered to another node/);
      // sshd serves the re-issued certificate after a reload, and logins go on.
      await reloadSshd();
      await eventuallyLogin(await certs("keys-agentless"), sshdNode);
    },
    STEP,
  );

  it(
    "user_ssh: init -> update_clients -> update_servers -> standby; old certificates work until standby, new ones from update_clients, open sessions stay",
    async () => {
      const before = await certs("keys-user-0");
      const original = await signingCa(before.certificate);
      await expectLogin(before, agentNode);
      await eventuallyLogin(before, sshdNode);
      for (const node of [agentNode, sshdNode])
        live.push(new LiveSession(sshArgs(before, before.known_hosts, node)));
      await pingAll();

      await rotate("user_ssh", "init");
      // Both user CA keys are published; issuing still uses the old one.
      expect((await publicKeys()).user_ca_ssh_public_keys).toHaveLength(2);
      const atInit = await certs("keys-user-init");
      expect(await signingCa(atInit.certificate)).toBe(original);
      await agentless();
      expect((await readFile(join(agentlessOut, "user_ca.pub"), "utf8")).trim().split("\n")).toHaveLength(2);
      for (const node of [agentNode, sshdNode]) await expectLogin(before, node);
      await pingAll();

      await rotate("user_ssh", "update_clients");
      const fresh = await certs("keys-user-new");
      const next = await signingCa(fresh.certificate);
      expect(next).not.toBe(original);
      for (const node of [agentNode, sshdNode]) {
        await eventuallyLogin(fresh, node);
        await expectLogin(before, node);
      }
      await pingAll();

      await rotate("user_ssh", "update_servers");
      for (const node of [agentNode, sshdNode]) {
        await expectLogin(fresh, node);
        await expectLogin(before, node);
      }
      await pingAll();

      await rotate("user_ssh", "standby");
      const keys = (await publicKeys()).user_ca_ssh_public_keys;
      expect(keys).toHaveLength(1);
      expect(await fingerprintOf(keys[0] ?? "")).toBe(next);
      await agentless();
      expect((await readFile(join(agentlessOut, "user_ca.pub"), "utf8")).trim().split("\n")).toHaveLength(1);
      for (const node of [agentNode, sshdNode]) {
        const why = await eventuallyRefused(before, node);
        expect(why).toMatch(/Permission denied/);
        await expectLogin(fresh, node);
      }
      // Sessions opened with the old certificate were admitted then and are not cut by a rotation.
      await pingAll();
    },
    STEP,
  );

  it(
    "host_ssh: svc certs trusts both keys during the rotation; re-issued nodes are accepted; after standby an old-key host certificate is refused",
    async () => {
      const user = await certs("keys-host-0");
      const oldKnownHosts = await readFile(user.known_hosts, "utf8");
      expect(caLines(oldKnownHosts)).toHaveLength(1);
      const oldHostCa = (await publicKeys()).host_ca_ssh_public_keys[0] ?? "";
      // The sshd's certificate from the old key, kept to show it is refused at the end.
      const oldHostCert = join(dir, "old_host_cert.pub");
      await copyFile(join(agentlessOut, "ssh_host_cert.pub"), oldHostCert);

      await rotate("host_ssh", "init");
      const atInit = await certs("keys-host-init");
      expect(caLines(await readFile(atInit.known_hosts, "utf8"))).toHaveLength(2);
      for (const node of [agentNode, sshdNode]) await expectLogin(atInit, node);
      await pingAll();

      await rotate("host_ssh", "update_clients");
      const atClients = await certs("keys-host-clients");
      expect(caLines(await readFile(atClients.known_hosts, "utf8"))).toHaveLength(2);
      for (const node of [agentNode, sshdNode]) await expectLogin(atClients, node);
      await pingAll();

      await rotate("host_ssh", "update_servers");
      const newHostCa = (await publicKeys()).host_ca_ssh_public_keys.find(
        (k) => k.trim() !== oldHostCa.trim(),
      );
      expect(newHostCa).toBeDefined();
      const onlyNew = await knownHostsOf("known_hosts_new_only", [newHostCa ?? ""]);
      // The agent renews at once (its trust snapshot shows update_servers); the sshd is re-issued
      // by running `svcd agentless` again and reloading sshd.
      await agentless();
      await reloadSshd();
      for (const node of [agentNode, sshdNode]) {
        await eventuallyLogin(atClients, node, onlyNew);
        await expectLogin(atClients, node);
      }
      await pingAll();

      await rotate("host_ssh", "standby");
      const after = await certs("keys-host-after");
      const afterLines = caLines(await readFile(after.known_hosts, "utf8"));
      expect(afterLines).toEqual([`@cert-authority * ${(newHostCa ?? "").trim()}`]);
      for (const node of [agentNode, sshdNode]) await expectLogin(after, node);
      // A server still presenting a host certificate of the old key (trusting today's user CA, so
      // only the host check can fail): the strict client refuses it with today's known_hosts, and
      // accepts it with the pre-rotation one, so the refusal is the old host CA key's.
      stale = await startSshd({
        hostKey: { privatePath: hostKeyPath, publicLine: await readFile(`${hostKeyPath}.pub`, "utf8") },
        hostCertificatePath: oldHostCert,
        trustedUserCaKeys: (await publicKeys()).user_ca_ssh_public_keys,
      });
      const staleNode = { name: sshdNode.name, port: stale.port };
      const refused = await login(after, after.known_hosts, staleNode);
      expect(refused.ok).toBe(false);
      expect("why" in refused ? refused.why : "").toMatch(/Host key verification failed/);
      const oldOnly = await knownHostsOf("known_hosts_old_only", [oldHostCa]);
      await expectLogin(after, staleNode, oldOnly);
      await pingAll();
    },
    STEP,
  );

  it(
    "svc login learns every trusted host CA (profile PEMs, the default known_hosts) and drops the removed ones",
    async () => {
      const pems = async () =>
        (
          String(
            JSON.parse(await readFile(join(String(aliceEnv.SVC_HOME), "profile.json"), "utf8")).ca_pem,
          ).match(/-----BEGIN CERTIFICATE-----/g) ?? []
        ).length;
      const relogin = () =>
        ok(svc(["login", "--user", "alice", "--password-file", join(dir, "alice-pw")], aliceEnv));
      // The default folder: svc login keeps its known_hosts up to date.
      await ok(svc(["certs", "--ttl", "1h", "--json"], aliceEnv));
      const knownHosts = join(String(aliceEnv.SVC_HOME), "keys", "known_hosts");
      expect(caLines(await readFile(knownHosts, "utf8"))).toHaveLength(1);
      await relogin();
      expect(await pems()).toBe(1);

      await rotate("host_x509", "init");
      await rotate("host_ssh", "init");
      const login = await relogin();
      expect(login.stderr).not.toMatch(/not refreshed/);
      expect(await pems()).toBe(2);
      expect(caLines(await readFile(knownHosts, "utf8"))).toHaveLength(2);
      // The profile still verifies the proxy (svc status goes through it).
      await ok(svc(["status"], aliceEnv));

      await rotate("host_x509", "rollback");
      await rotate("host_x509", "standby");
      await rotate("host_ssh", "rollback");
      await rotate("host_ssh", "standby");
      await relogin();
      expect(await pems()).toBe(1);
      expect(caLines(await readFile(knownHosts, "utf8"))).toHaveLength(1);
      await ok(svc(["status"], aliceEnv));
    },
    STEP,
  );

  it(
    "rollback: init -> rollback -> standby leaves the original user CA signing and the original certificates working",
    async () => {
      const before = await certs("keys-rb-0");
      const original = await signingCa(before.certificate);
      await rotate("user_ssh", "init");
      expect((await publicKeys()).user_ca_ssh_public_keys).toHaveLength(2);
      await rotate("user_ssh", "rollback");
      const during = await certs("keys-rb-during");
      expect(await signingCa(during.certificate)).toBe(original);
      await rotate("user_ssh", "standby");
      const keys = (await publicKeys()).user_ca_ssh_public_keys;
      expect(keys).toHaveLength(1);
      expect(await fingerprintOf(keys[0] ?? "")).toBe(original);
      await agentless();
      for (const node of [agentNode, sshdNode]) {
        await expectLogin(before, node);
        await expectLogin(during, node);
      }
      const after = await certs("keys-rb-after");
      expect(await signingCa(after.certificate)).toBe(original);
      await pingAll();
    },
    STEP,
  );

  it(
    "host_x509 through every phase: the agent learns the new CA from its snapshot, renews at update_servers and keeps reaching auth after the old CA is gone",
    async () => {
      const identityFile = join(dir, "agent", "agent-identity.json");
      const identity = async () =>
        JSON.parse(await readFile(identityFile, "utf8")) as {
          hostCaPems: string[];
          tlsCertificatePem: string;
        };
      const signedBy = (certPem: string, caPem: string) =>
        new X509Certificate(certPem).verify(new X509Certificate(caPem).publicKey);
      const relogin = () =>
        ok(svc(["login", "--user", "alice", "--password-file", join(dir, "alice-pw")], aliceEnv));
      const before = await identity();
      expect(before.hostCaPems).toHaveLength(1);
      const oldCa = before.hostCaPems[0] ?? "";
      expect(signedBy(before.tlsCertificatePem, oldCa)).toBe(true);

      await rotate("host_x509", "init");
      const newCa = (await publicKeys()).host_ca_pems.find((p) => p.trim() !== oldCa.trim()) ?? "";
      expect(newCa).not.toBe("");
      // Nodes trust the new CA before anything is issued by it (saved, so a restart keeps it).
      await waitFor(
        async () => (await identity()).hostCaPems.length === 2,
        "the agent saves both host CAs",
        PROPAGATION_MS,
      );
      // The user's profile learns it the same way at its next login.
      await relogin();
      await pingAll();

      await rotate("host_x509", "update_clients");
      await ok(svc(["status"], aliceEnv));
      await pingAll();
      await rotate("host_x509", "update_servers");
      // The agent asks for a client certificate from the new CA at once (rotation follow).
      await waitFor(
        async () => signedBy((await identity()).tlsCertificatePem, newCa),
        "the agent's client certificate is issued by the new host CA",
        PROPAGATION_MS,
      );
      await pingAll();

      await rotate("host_x509", "standby");
      await waitFor(
        async () => {
          const pems = (await identity()).hostCaPems;
          return pems.length === 1 && pems[0]?.trim() === newCa.trim();
        },
        "the agent drops the old host CA",
        PROPAGATION_MS,
      );
      // The agent still reaches auth: a new login there is authorized by auth (AuthorizeSshLogin).
      await relogin();
      await eventuallyLogin(await certs("keys-x509-after"), agentNode);
      await pingAll();
      expect(agent?.child.exitCode).toBeNull();
    },
    STEP,
  );
});
