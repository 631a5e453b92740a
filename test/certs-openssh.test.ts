// Our OpenSSH certificates against the real tools: ssh-keygen -L shows the fields, a real sshd
// accepts a user certificate and refuses expired / wrong-principal ones, and a real ssh client
// trusts a host certificate through @cert-authority.
import { execFile } from "node:child_process";
import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { certValidity, knownHostsCertAuthority, userKeyId } from "../core/certs/key-ids.ts";
import { SshCertSigner } from "../core/certs/ssh-cert.ts";
import { generateSshKeyPair, type SshKeyKind } from "../core/certs/ssh-keys.ts";
import { systemClock } from "../core/clock.ts";
import { type RunningSshd, startSshd } from "./harness/sshd.ts";

const exec = promisify(execFile);
const HOUR = 3600_000;

let dir: string;
const userCa = generateSshKeyPair("ed25519", { comment: "test-user-ca" });
const hostCa = generateSshKeyPair("ed25519", { comment: "test-host-ca" });
const userSigner = new SshCertSigner(userCa.privateKey);
const hostSigner = new SshCertSigner(hostCa.privateKey);
const running: RunningSshd[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "svc-certs-openssh-"));
});
afterAll(async () => {
  for (const s of running) await s.stop();
  await rm(dir, { recursive: true, force: true });
});

async function writeClientKey(
  name: string,
  kind: SshKeyKind,
  cert: (publicLine: string) => string,
): Promise<{ key: string; cert: string }> {
  const pair = generateSshKeyPair(kind, { comment: name });
  const key = join(dir, name);
  await writeFile(key, pair.privateOpenSsh, { mode: 0o600 });
  await chmod(key, 0o600);
  const certPath = `${key}-cert.pub`;
  await writeFile(certPath, `${cert(pair.publicLine)}\n`);
  return { key, cert: certPath };
}

async function sshTrue(
  sshd: RunningSshd,
  id: { key: string; cert: string },
  hostOpts: string[] = ["-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null"],
  login = "root",
): Promise<{ ok: boolean; stderr: string }> {
  const args = [
    "-F",
    "/dev/null",
    "-i",
    id.key,
    "-o",
    `CertificateFile=${id.cert}`,
    "-o",
    "IdentitiesOnly=yes",
    "-o",
    "IdentityAgent=none",
    "-o",
    "BatchMode=yes",
    "-o",
    "ConnectTimeout=20",
    ...hostOpts,
    "-p",
    String(sshd.port),
    `${login}@${sshd.host}`,
    "true",
  ];
  try {
    await exec("ssh", args, { timeout: 45_000 });
    return { ok: true, stderr: "" };
  } catch (err) {
    return { ok: false, stderr: String((err as { stderr?: unknown }).stderr ?? err) };
  }
}

function userCert(
  publicLine: string,
  o: { principals?: string[]; from?: number; to?: number; keyId?: string } = {},
): string {
  const window = certValidity(systemClock, 3600);
  return userSigner.sign({
    type: "user",
    publicKey: publicLine,
    keyId: o.keyId ?? userKeyId("alice", "secret-session-id"),
    principals: o.principals ?? ["root"],
    validAfter: o.from === undefined ? window.validAfter : new Date(o.from),
    validBefore: o.to === undefined ? window.validBefore : new Date(o.to),
    extensions: ["permit-pty"],
  }).line;
}

describe("ssh-keygen -L", () => {
  it("shows type, key id, serial, principals, validity, critical options and extensions", async () => {
    const pair = generateSshKeyPair("ecdsa-p256");
    const cert = userSigner.sign({
      type: "user",
      publicKey: pair.publicKey,
      keyId: "user:alice session:s-123",
      principals: ["root", "alice"],
      serial: 987654321n,
      validAfter: new Date(Date.UTC(2030, 0, 2, 3, 4, 5)),
      validBefore: new Date(Date.UTC(2030, 0, 2, 15, 4, 5)),
      forceCommand: "/usr/bin/id -u",
      sourceAddress: ["127.0.0.0/8", "::1"],
      extensions: [
        "permit-user-rc",
        "permit-pty",
        "permit-X11-forwarding",
        "permit-agent-forwarding",
        "permit-port-forwarding",
      ],
    });
    const path = join(dir, "shown-cert.pub");
    await writeFile(path, `${cert.line}\n`);
    const { stdout } = await exec("ssh-keygen", ["-L", "-f", path], { env: { ...process.env, TZ: "UTC" } });
    expect(stdout).toMatch(/Type: ecdsa-sha2-nistp256-cert-v01@openssh.com user certificate/);
    expect(stdout).toMatch(/Signing CA: ED25519 /);
    expect(stdout).toContain('Key ID: "user:alice session:s-123"');
    expect(stdout).toMatch(/Serial: 987654321\n/);
    expect(stdout).toContain("Valid: from 2030-01-02T03:04:05 to 2030-01-02T15:04:05");
    const section = (name: string): string[] => {
      const m = new RegExp(`${name}: *\\n((?:\\s{16}.*\\n?)*)`).exec(stdout);
      return (m?.[1] ?? "")
        .split("\n")
        .map((l) => l.trim())
        .filter(Boolean);
    };
    expect(section("Principals")).toEqual(["root", "alice"]);
    expect(section("Critical Options")).toEqual([
      "force-command /usr/bin/id -u",
      "source-address 127.0.0.0/8,::1",
    ]);
    expect(section("Extensions")).toEqual([
      "permit-X11-forwarding",
      "permit-agent-forwarding",
      "permit-port-forwarding",
      "permit-pty",
      "permit-user-rc",
    ]);
  });

  it("shows a host certificate", async () => {
    const pair = generateSshKeyPair("ed25519");
    const cert = hostSigner.sign({
      type: "host",
      publicKey: pair.publicLine,
      keyId: "host:node-1",
      principals: ["node-1.example", "127.0.0.1"],
      validAfter: new Date(Date.now() - 60_000),
      validBefore: new Date(Date.now() + HOUR),
    });
    const path = join(dir, "host-shown-cert.pub");
    await writeFile(path, `${cert.line}\n`);
    const { stdout } = await exec("ssh-keygen", ["-L", "-f", path]);
    expect(stdout).toMatch(/Type: ssh-ed25519-cert-v01@openssh.com host certificate/);
    expect(stdout).toContain('Key ID: "host:node-1"');
  });
});

describe("real sshd with TrustedUserCAKeys", () => {
  let sshd: RunningSshd;
  beforeAll(async () => {
    sshd = await startSshd({ trustedUserCaKeys: [userCa.publicLine] });
    running.push(sshd);
  });

  for (const kind of ["ed25519", "ecdsa-p256", "ecdsa-p384", "rsa"] as const) {
    it(`accepts a ${kind} user certificate for principal root`, async () => {
      const id = await writeClientKey(`ok-${kind}`, kind, (l) => userCert(l));
      const res = await sshTrue(sshd, id);
      expect(res.stderr).toBe("");
      expect(res.ok).toBe(true);
    });
  }

  it("refuses an expired certificate", async () => {
    const now = Date.now();
    const id = await writeClientKey("expired", "ed25519", (l) =>
      userCert(l, { from: now - 2 * HOUR, to: now - HOUR }),
    );
    const res = await sshTrue(sshd, id);
    expect(res.ok).toBe(false);
    expect(res.stderr).toMatch(/Permission denied/);
    expect(sshd.log()).toMatch(/expired|not yet valid|Certificate invalid/i);
  });

  it("refuses a certificate whose principals do not include the login", async () => {
    const id = await writeClientKey("wrong-principal", "ed25519", (l) =>
      userCert(l, { principals: ["alice"] }),
    );
    const res = await sshTrue(sshd, id);
    expect(res.ok).toBe(false);
    expect(res.stderr).toMatch(/Permission denied/);
  });

  it("honours force-command and source-address", async () => {
    const forced = await writeClientKey(
      "forced",
      "ed25519",
      (l) =>
        userSigner.sign({
          type: "user",
          publicKey: l,
          keyId: "user:alice:forced",
          principals: ["root"],
          ...certValidity(systemClock, 600),
          forceCommand: "echo forced-$((6*7))",
          sourceAddress: ["127.0.0.0/8"],
        }).line,
    );
    const { stdout } = await exec(
      "ssh",
      [
        "-F",
        "/dev/null",
        "-i",
        forced.key,
        "-o",
        `CertificateFile=${forced.cert}`,
        "-o",
        "IdentitiesOnly=yes",
        "-o",
        "IdentityAgent=none",
        "-o",
        "BatchMode=yes",
        "-o",
        "StrictHostKeyChecking=no",
        "-o",
        "UserKnownHostsFile=/dev/null",
        "-p",
        String(sshd.port),
        `root@${sshd.host}`,
        "echo",
        "not-forced",
      ],
      { timeout: 45_000 },
    );
    expect(stdout.trim()).toBe("forced-42");
    const elsewhere = await writeClientKey(
      "elsewhere",
      "ed25519",
      (l) =>
        userSigner.sign({
          type: "user",
          publicKey: l,
          keyId: "user:alice:elsewhere",
          principals: ["root"],
          ...certValidity(systemClock, 600),
          sourceAddress: ["10.0.0.0/8"],
        }).line,
    );
    const res = await sshTrue(sshd, elsewhere);
    expect(res.ok).toBe(false);
    expect(res.stderr).toMatch(/Permission denied/);
  });

  it("refuses a certificate from another CA", async () => {
    const other = new SshCertSigner(generateSshKeyPair("ed25519").privateKey);
    const pair = generateSshKeyPair("ed25519");
    const key = join(dir, "other-ca");
    await writeFile(key, pair.privateOpenSsh, { mode: 0o600 });
    const cert = other.sign({
      type: "user",
      publicKey: pair.publicKey,
      keyId: "x",
      principals: ["root"],
      validAfter: new Date(Date.now() - 60_000),
      validBefore: new Date(Date.now() + HOUR),
    });
    await writeFile(`${key}-cert.pub`, `${cert.line}\n`);
    const res = await sshTrue(sshd, { key, cert: `${key}-cert.pub` });
    expect(res.ok).toBe(false);
  });
});

describe("real sshd with our host certificate", () => {
  let sshd: RunningSshd;
  beforeAll(async () => {
    const host = generateSshKeyPair("ed25519", { comment: "node-1" });
    const keyPath = join(dir, "host_key");
    await writeFile(keyPath, host.privateOpenSsh, { mode: 0o600 });
    const cert = hostSigner.sign({
      type: "host",
      publicKey: host.publicKey,
      keyId: "host:node-1",
      principals: ["127.0.0.1", "node-1"],
      validAfter: new Date(Date.now() - 60_000),
      validBefore: new Date(Date.now() + HOUR),
    });
    const certPath = join(dir, "host_key-cert.pub");
    await writeFile(certPath, `${cert.line}\n`);
    sshd = await startSshd({
      trustedUserCaKeys: [userCa.publicLine],
      hostKey: { privatePath: keyPath, publicLine: host.publicLine },
      hostCertificatePath: certPath,
    });
    running.push(sshd);
  });

  async function withKnownHosts(caLine: string): Promise<string[]> {
    const kh = join(dir, `known_hosts-${Math.random().toString(36).slice(2)}`);
    await writeFile(kh, `${knownHostsCertAuthority("*", caLine)}\n`);
    return [
      "-o",
      "StrictHostKeyChecking=yes",
      "-o",
      `UserKnownHostsFile=${kh}`,
      "-o",
      "GlobalKnownHostsFile=/dev/null",
    ];
  }

  it("ssh trusts it through @cert-authority with StrictHostKeyChecking=yes", async () => {
    const id = await writeClientKey("host-trust", "ed25519", (l) => userCert(l));
    const res = await sshTrue(sshd, id, await withKnownHosts(hostCa.publicLine));
    expect(res.stderr).toBe("");
    expect(res.ok).toBe(true);
  });

  it("ssh refuses it when known_hosts trusts another CA", async () => {
    const id = await writeClientKey("host-distrust", "ed25519", (l) => userCert(l));
    const res = await sshTrue(sshd, id, await withKnownHosts(generateSshKeyPair("ed25519").publicLine));
    expect(res.ok).toBe(false);
    expect(res.stderr).toMatch(/Host key verification failed|No ED25519 host key is known/);
  });
});
