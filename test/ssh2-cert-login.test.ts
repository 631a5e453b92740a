// The patched ssh2 (patches/ssh2+1.17.0.patch) logs in to a real OpenSSH sshd with OpenSSH user
// certificates made by the real ssh-keygen, for Ed25519, ECDSA P-256 and RSA 3072 keys, and
// verifies sshd's host certificate. Certificates the server must refuse are refused.
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { systemClock } from "../core/clock.ts";
import { NotAuthenticatedError } from "../core/errors.ts";
import {
  connectWithCertificate,
  exec,
  hostCertificateVerifier,
  type SshClient,
} from "../core/sshclient/index.ts";
import { type RunningSshd, startSshd } from "./harness/sshd.ts";

const run = promisify(execFile);

interface UserKey {
  privatePem: string;
  cert: string;
}

let dir = "";
let sshd: RunningSshd | undefined;
let userCaPub = "";
let hostCaPub = "";
const clients: SshClient[] = [];

async function keygen(name: string, type: string[]): Promise<string> {
  const path = join(dir, name);
  await run("ssh-keygen", ["-q", ...type, "-N", "", "-C", name, "-f", path]);
  return path;
}

async function userKey(
  name: string,
  type: string[],
  principal: string,
  extra: string[] = [],
): Promise<UserKey> {
  const path = await keygen(name, type);
  await run("ssh-keygen", [
    "-q",
    "-s",
    join(dir, "user_ca"),
    "-I",
    `id-${name}`,
    "-n",
    principal,
    "-V",
    "+5m",
    ...extra,
    `${path}.pub`,
  ]);
  return {
    privatePem: await readFile(path, "utf8"),
    cert: (await readFile(`${path}-cert.pub`, "utf8")).trim(),
  };
}

function track(c: SshClient): SshClient {
  clients.push(c);
  return c;
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "svc-ssh2-cert-"));
  await keygen("user_ca", ["-t", "ed25519"]);
  await keygen("host_ca", ["-t", "ed25519"]);
  userCaPub = (await readFile(join(dir, "user_ca.pub"), "utf8")).trim();
  hostCaPub = (await readFile(join(dir, "host_ca.pub"), "utf8")).trim();
  const hostKey = await keygen("host", ["-t", "ed25519"]);
  await run("ssh-keygen", [
    "-q",
    "-s",
    join(dir, "host_ca"),
    "-I",
    "host",
    "-h",
    "-n",
    "127.0.0.1",
    "-V",
    "+1h",
    `${hostKey}.pub`,
  ]);
  sshd = await startSshd({
    trustedUserCaKeys: [userCaPub],
    hostKey: { privatePath: hostKey, publicLine: await readFile(`${hostKey}.pub`, "utf8") },
    hostCertificatePath: `${hostKey}-cert.pub`,
  });
});

afterAll(async () => {
  for (const c of clients) c.end();
  await sshd?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

// built per test: the CA key exists only after beforeAll
const trustHost = (blob: Buffer): boolean =>
  hostCertificateVerifier({ trustedCaKeys: [hostCaPub], principal: "127.0.0.1", clock: systemClock })(blob);

describe("ssh2 certificate login to OpenSSH sshd", () => {
  const kinds: Array<[string, string[]]> = [
    ["ed25519", ["-t", "ed25519"]],
    ["ecdsa-p256", ["-t", "ecdsa", "-b", "256"]],
    ["rsa-3072", ["-t", "rsa", "-b", "3072"]],
  ];
  for (const [kind, args] of kinds) {
    it(`logs in with an ${kind} user certificate and runs a command`, async () => {
      const key = await userKey(`user_${kind}`, args, "root");
      const s = sshd!;
      const client = track(
        await connectWithCertificate({
          host: s.host,
          port: s.port,
          username: "root",
          privateKey: key.privatePem,
          certificate: key.cert,
          hostVerifier: (blob) => trustHost(blob),
          requireHostCertificate: true,
          timeoutMs: 30_000,
        }),
      );
      const res = await exec(client, "echo ok", { timeoutMs: 30_000 });
      expect(res.stdout.toString()).toBe("ok\n");
      expect(res.code).toBe(0);
      // sshd saw a certificate login, not a plain key
      expect(s.log()).toMatch(new RegExp(`Accepted certificate ID "id-user_${kind}"`));
      client.end();
    });
  }

  it("refuses a certificate for another principal", async () => {
    const key = await userKey("user_wrong", ["-t", "ed25519"], "alice");
    const s = sshd!;
    await expect(
      connectWithCertificate({
        host: s.host,
        port: s.port,
        username: "root",
        privateKey: key.privatePem,
        certificate: key.cert,
        timeoutMs: 30_000,
      }),
    ).rejects.toBeInstanceOf(NotAuthenticatedError);
  });

  it("refuses a certificate signed by an untrusted CA", async () => {
    await keygen("other_ca", ["-t", "ed25519"]);
    const path = await keygen("user_other", ["-t", "ed25519"]);
    await run("ssh-keygen", [
      "-q",
      "-s",
      join(dir, "other_ca"),
      "-I",
      "x",
      "-n",
      "root",
      "-V",
      "+5m",
      `${path}.pub`,
    ]);
    const s = sshd!;
    await expect(
      connectWithCertificate({
        host: s.host,
        port: s.port,
        username: "root",
        privateKey: await readFile(path, "utf8"),
        certificate: await readFile(`${path}-cert.pub`, "utf8"),
        timeoutMs: 30_000,
      }),
    ).rejects.toBeInstanceOf(NotAuthenticatedError);
  });

  it("refuses a host whose certificate is not from the trusted host CA", async () => {
    const key = await userKey("user_hostcheck", ["-t", "ed25519"], "root");
    const s = sshd!;
    const wrongTrust = hostCertificateVerifier({
      trustedCaKeys: [userCaPub],
      principal: "127.0.0.1",
      clock: systemClock,
    });
    await expect(
      connectWithCertificate({
        host: s.host,
        port: s.port,
        username: "root",
        privateKey: key.privatePem,
        certificate: key.cert,
        hostVerifier: wrongTrust,
        requireHostCertificate: true,
        timeoutMs: 30_000,
      }),
    ).rejects.toThrow(/host key or host certificate is not trusted/);
  });

  it("refuses a private key the certificate does not certify, before connecting", async () => {
    const a = await userKey("user_a", ["-t", "ed25519"], "root");
    const b = await userKey("user_b", ["-t", "ed25519"], "root");
    await expect(
      connectWithCertificate({
        host: "127.0.0.1",
        port: 1,
        username: "root",
        privateKey: a.privatePem,
        certificate: b.cert,
      }),
    ).rejects.toThrow(/does not certify/);
    // A matching pair is remembered (the check passes, the dial to port 1 then fails); the same
    // certificate with another key is still refused.
    const dial = (privateKey: string) =>
      connectWithCertificate({
        host: "127.0.0.1",
        port: 1,
        username: "root",
        privateKey,
        certificate: a.cert,
      });
    await expect(dial(a.privatePem)).rejects.toThrow(/ECONNREFUSED/);
    await expect(dial(b.privatePem)).rejects.toThrow(/does not certify/);
  });
});
