// The host-certificate half of the ssh2 patch, for Ed25519, ECDSA P-256 and RSA host keys:
// a patched ssh2 Server presents its host certificate to the real OpenSSH client (trusted only via
// @cert-authority), and the patched ssh2 client verifies a real sshd's host certificate.
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import ssh2 from "ssh2";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { systemClock } from "../core/clock.ts";
import { connectWithCertificate, exec, hostCertificateVerifier } from "../core/sshclient/index.ts";
import "../core/sshclient/ssh2-patch-types.ts";
import { startSshd } from "./harness/sshd.ts";

const run = promisify(execFile);
let dir = "";
let hostCaPub = "";
let userCaPub = "";

const KINDS: Array<[string, string[]]> = [
  ["ed25519", ["-t", "ed25519"]],
  ["ecdsa", ["-t", "ecdsa", "-b", "256"]],
  ["rsa", ["-t", "rsa", "-b", "3072"]],
];

async function keygen(name: string, args: string[]): Promise<string> {
  const path = join(dir, name);
  await run("ssh-keygen", ["-q", ...args, "-N", "", "-C", name, "-f", path]);
  return path;
}

async function hostKeyWithCert(kind: string, args: string[]): Promise<string> {
  const path = await keygen(`host_${kind}`, args);
  await run("ssh-keygen", [
    "-q",
    "-s",
    join(dir, "host_ca"),
    "-I",
    `host-${kind}`,
    "-h",
    "-n",
    "127.0.0.1",
    "-V",
    "+1h",
    `${path}.pub`,
  ]);
  return path;
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "svc-ssh2-hostcert-"));
  hostCaPub = (await readFile(`${await keygen("host_ca", ["-t", "ed25519"])}.pub`, "utf8")).trim();
  userCaPub = (await readFile(`${await keygen("user_ca", ["-t", "ed25519"])}.pub`, "utf8")).trim();
});

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("patched ssh2 server presents a host certificate to OpenSSH", () => {
  for (const [kind, args] of KINDS) {
    it(`${kind} host key`, async () => {
      const hostKey = await hostKeyWithCert(kind, args);
      // A bare server that lets anyone in: only the host side is under test here.
      const server = new ssh2.Server(
        {
          hostKeys: [
            {
              key: await readFile(hostKey, "utf8"),
              certificate: await readFile(`${hostKey}-cert.pub`, "utf8"),
            },
          ],
        },
        (conn) => {
          conn.on("authentication", (ctx) => ctx.accept());
          conn.on("ready", () =>
            conn.on("session", (accept) =>
              accept().on("exec", (acc) => {
                const ch = acc();
                ch.write("served\n");
                ch.exit(0);
                ch.end();
              }),
            ),
          );
          conn.on("error", () => {});
        },
      );
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      try {
        const addr = server.address();
        const port = typeof addr === "object" && addr ? addr.port : 0;
        const kh = join(dir, `known_hosts_${kind}`);
        await writeFile(kh, `@cert-authority [127.0.0.1]:${port} ${hostCaPub}\n`);
        const userKey = await keygen(`user_${kind}`, ["-t", "ed25519"]);
        const { stdout, stderr } = await run(
          "ssh",
          [
            ...["-F", "/dev/null", "-i", userKey, "-o", "IdentitiesOnly=yes", "-o", "IdentityAgent=none"],
            ...["-o", `UserKnownHostsFile=${kh}`, "-o", "GlobalKnownHostsFile=/dev/null"],
            ...["-o", "StrictHostKeyChecking=yes", "-o", "BatchMode=yes", "-v", "-p", String(port)],
            "root@127.0.0.1",
            "anything",
          ],
          { timeout: 60_000 },
        );
        expect(stdout).toBe("served\n");
        // the client checked a certificate, not a bare key
        expect(stderr).toMatch(/Server host certificate: \S+-cert-v01@openssh\.com/);
        expect(stderr).toMatch(/is known and matches the \S+-CERT host certificate/);
      } finally {
        await new Promise<void>((resolve) => server.close(() => resolve()));
      }
    });
  }
});

describe("patched ssh2 client verifies OpenSSH sshd's host certificate", () => {
  for (const [kind, args] of KINDS) {
    it(`${kind} host key`, async () => {
      const hostKey = await hostKeyWithCert(`sshd_${kind}`, args);
      const sshd = await startSshd({
        trustedUserCaKeys: [userCaPub],
        hostKey: { privatePath: hostKey, publicLine: await readFile(`${hostKey}.pub`, "utf8") },
        hostCertificatePath: `${hostKey}-cert.pub`,
      });
      try {
        const user = await keygen(`login_${kind}`, ["-t", "ed25519"]);
        await run("ssh-keygen", [
          "-q",
          "-s",
          join(dir, "user_ca"),
          "-I",
          "u",
          "-n",
          "root",
          "-V",
          "+5m",
          `${user}.pub`,
        ]);
        let seen = "";
        const trust = hostCertificateVerifier({
          trustedCaKeys: [hostCaPub],
          principal: "127.0.0.1",
          clock: systemClock,
        });
        const client = await connectWithCertificate({
          host: sshd.host,
          port: sshd.port,
          username: "root",
          privateKey: await readFile(user, "utf8"),
          certificate: await readFile(`${user}-cert.pub`, "utf8"),
          requireHostCertificate: true,
          hostVerifier: (blob) => {
            seen = blob.subarray(4, 4 + blob.readUInt32BE(0)).toString();
            return trust(blob);
          },
          timeoutMs: 30_000,
        });
        try {
          expect((await exec(client, "echo ok", { timeoutMs: 30_000 })).stdout.toString()).toBe("ok\n");
          expect(seen).toMatch(/-cert-v01@openssh\.com$/);
        } finally {
          client.end();
        }
      } finally {
        await sshd.stop();
      }
    });
  }
});
