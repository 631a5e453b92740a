// Strict parsing of OpenSSH keys and certificates, and the checks an agent relies on.
import { execFile } from "node:child_process";
import { generateKeyPairSync } from "node:crypto";
import { mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { userKeyId } from "../core/certs/key-ids.ts";
import { parseSshCertificate, SshCertSigner, verifySshCertificate } from "../core/certs/ssh-cert.ts";
import { writeSshIdentity } from "../core/certs/ssh-key-files.ts";
import {
  formatSshPublicKey,
  generateSshKeyPair,
  parseOpenSshPrivateKey,
  parseSshPublicKey,
  parseSshPublicKeyBlob,
  sshFingerprint,
} from "../core/certs/ssh-keys.ts";
import { SshWriter } from "../core/certs/ssh-wire.ts";
import { ManualClock } from "../core/clock.ts";
import { AccessDeniedError, BadParameterError, NotAuthenticatedError } from "../core/errors.ts";

const exec = promisify(execFile);
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "svc-certs-ssh-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("public keys", () => {
  it("round-trips every supported type and matches ssh-keygen's fingerprint and key file", async () => {
    for (const kind of ["ed25519", "ecdsa-p256", "ecdsa-p384", "rsa"] as const) {
      const path = join(dir, `id_${kind}`);
      const t =
        kind === "rsa"
          ? ["-t", "rsa", "-b", "2048"]
          : kind === "ed25519"
            ? ["-t", "ed25519"]
            : ["-t", "ecdsa", "-b", kind.slice(-3)];
      await exec("ssh-keygen", ["-q", ...t, "-N", "", "-C", "me@test", "-f", path]);
      const line = (await readFile(`${path}.pub`, "utf8")).trim();
      const parsed = parseSshPublicKey(line);
      expect(parsed.comment).toBe("me@test");
      expect(formatSshPublicKey(parsed.key, "me@test")).toBe(line);
      const { stdout } = await exec("ssh-keygen", ["-l", "-E", "sha256", "-f", `${path}.pub`]);
      expect(stdout.split(" ")[1]).toBe(sshFingerprint(parsed.key));
      // ssh-keygen's own private key file reads back to the same public key
      const priv = parseOpenSshPrivateKey(await readFile(path, "utf8"));
      expect(formatSshPublicKey(priv.privateKey, "me@test")).toBe(line);
    }
  });

  const bad: [string, () => string][] = [
    ["RSA 1024", () => rsa1024()],
    ["garbage base64", () => "ssh-ed25519 AAAA$$$notbase64 x"],
    [
      "truncated blob",
      () => {
        const l = generateSshKeyPair("ed25519").publicLine.split(" ");
        return `ssh-ed25519 ${Buffer.from(l[1] as string, "base64")
          .subarray(0, 30)
          .toString("base64")}`;
      },
    ],
    [
      "trailing bytes",
      () => {
        const b = Buffer.from(generateSshKeyPair("ed25519").publicLine.split(" ")[1] as string, "base64");
        return `ssh-ed25519 ${Buffer.concat([b, Buffer.of(0)]).toString("base64")}`;
      },
    ],
    ["wrong type prefix", () => `ssh-rsa ${generateSshKeyPair("ed25519").publicLine.split(" ")[1]}`],
    [
      "DSA",
      () =>
        `ssh-dss ${new SshWriter().string("ssh-dss").bytes(Buffer.alloc(129, 1)).toBuffer().toString("base64")}`,
    ],
    [
      "unknown type",
      () =>
        `ssh-foo ${new SshWriter().string("ssh-foo").bytes(Buffer.alloc(32)).toBuffer().toString("base64")}`,
    ],
    ["empty", () => ""],
    [
      "two lines",
      () => `${generateSshKeyPair("ed25519").publicLine}\n${generateSshKeyPair("ed25519").publicLine}`,
    ],
  ];
  for (const [name, make] of bad) {
    it(`refuses ${name} with BadParameterError`, () => {
      expect(() => parseSshPublicKey(make())).toThrow(BadParameterError);
    });
  }

  it("refuses nistp521 with a clear message", () => {
    const k = generateKeyPairSync("ec", { namedCurve: "P-521" }).publicKey.export({ format: "jwk" });
    const x = Buffer.from(String(k.x), "base64url");
    const y = Buffer.from(String(k.y), "base64url");
    const blob = new SshWriter()
      .string("ecdsa-sha2-nistp521")
      .string("nistp521")
      .bytes(Buffer.concat([Buffer.of(4), x, y]))
      .toBuffer();
    expect(() => parseSshPublicKey(`ecdsa-sha2-nistp521 ${blob.toString("base64")}`)).toThrow(
      /nistp521 keys are not supported/,
    );
  });
});

function rsa1024(): string {
  const jwk = generateKeyPairSync("rsa", { modulusLength: 1024 }).publicKey.export({ format: "jwk" });
  const blob = new SshWriter()
    .string("ssh-rsa")
    .mpint(Buffer.from(String(jwk.e), "base64url"))
    .mpint(Buffer.from(String(jwk.n), "base64url"))
    .toBuffer();
  return `ssh-rsa ${blob.toString("base64")}`;
}

describe("certificate verification", () => {
  const ca = generateSshKeyPair("ed25519");
  const signer = new SshCertSigner(ca.privateKey);
  const subject = generateSshKeyPair("ecdsa-p256");
  const clock = new ManualClock(Date.UTC(2026, 5, 1));
  const base = {
    type: "user" as const,
    publicKey: subject.publicLine,
    keyId: "user:alice session:s1",
    principals: ["alice", "root"],
    validAfter: new Date(Date.UTC(2026, 5, 1) - 60_000),
    validBefore: new Date(Date.UTC(2026, 5, 1) + 3600_000),
  };
  const opts = { trustedCaKeys: [ca.publicLine], type: "user" as const, clock };

  it("returns the parsed fields for a good certificate", () => {
    const c = signer.sign({
      ...base,
      serial: 7n,
      sourceAddress: ["10.0.0.0/8"],
      forceCommand: "ls",
      extensions: ["permit-pty"],
    });
    const p = verifySshCertificate(c.line, { ...opts, principal: "root", clientAddress: "10.1.2.3" });
    expect(p.keyId).toBe("user:alice session:s1");
    expect(p.serial).toBe(7n);
    expect(p.principals).toEqual(["alice", "root"]);
    expect(p.criticalOptions["force-command"]).toBe("ls");
    expect(p.extensions).toEqual(["permit-pty"]);
    expect(sshFingerprint(p.publicKey)).toBe(sshFingerprint(subject.publicKey));
  });

  it("refuses an untrusted CA, a tampered signature, the wrong type, and times outside the window", () => {
    const c = signer.sign(base);
    expect(() =>
      verifySshCertificate(c.blob, { ...opts, trustedCaKeys: [generateSshKeyPair().publicLine] }),
    ).toThrow(NotAuthenticatedError);
    const tampered = Buffer.from(c.blob);
    tampered.writeUInt8((tampered.at(-1) ?? 0) ^ 1, tampered.length - 1);
    expect(() => verifySshCertificate(tampered, opts)).toThrow(/signature is invalid/);
    expect(() => verifySshCertificate(c.blob, { ...opts, type: "host" })).toThrow(NotAuthenticatedError);
    const later = new ManualClock(base.validBefore);
    expect(() => verifySshCertificate(c.blob, { ...opts, clock: later })).toThrow(/expired/);
    const early = new ManualClock(base.validAfter.getTime() - 1000);
    expect(() => verifySshCertificate(c.blob, { ...opts, clock: early })).toThrow(/not yet valid/);
  });

  it("refuses a principal not listed and a client outside source-address", () => {
    const c = signer.sign({ ...base, sourceAddress: ["192.168.0.0/16", "::1"] });
    expect(() => verifySshCertificate(c.blob, { ...opts, principal: "bob" })).toThrow(AccessDeniedError);
    expect(() => verifySshCertificate(c.blob, { ...opts, clientAddress: "10.0.0.1" })).toThrow(
      AccessDeniedError,
    );
    expect(() => verifySshCertificate(c.blob, opts)).toThrow(AccessDeniedError);
    expect(verifySshCertificate(c.blob, { ...opts, clientAddress: "::ffff:192.168.4.5" }).keyId).toBe(
      base.keyId,
    );
    expect(verifySshCertificate(c.blob, { ...opts, clientAddress: "::1" }).keyId).toBe(base.keyId);
  });

  it("refuses trailing bytes and truncation", () => {
    const c = signer.sign(base);
    expect(() => parseSshCertificate(Buffer.concat([c.blob, Buffer.of(0)]))).toThrow(BadParameterError);
    expect(() => parseSshCertificate(c.blob.subarray(0, c.blob.length - 3))).toThrow(BadParameterError);
  });

  it("refuses bad requests when signing", () => {
    expect(() => signer.sign({ ...base, principals: [] })).toThrow(BadParameterError);
    expect(() => signer.sign({ ...base, validBefore: base.validAfter })).toThrow(BadParameterError);
    expect(() => signer.sign({ ...base, sourceAddress: ["not-an-ip"] })).toThrow(BadParameterError);
    expect(() => signer.sign({ ...base, type: "host", extensions: ["permit-pty"] })).toThrow(
      BadParameterError,
    );
    expect(() => signer.sign({ ...base, publicKey: rsa1024() })).toThrow(/at least 2048/);
  });
});

describe("key ids", () => {
  it("name the user and session without carrying the session secret", () => {
    const id = userKeyId("alice", "s3cr3t-session-value");
    expect(id).toMatch(/^user:alice:session:[0-9a-f]{16}$/);
    expect(id).not.toContain("s3cr3t");
    expect(userKeyId("alice", "other")).not.toBe(id);
  });
});

describe("identity files", () => {
  it("writes key (0600), .pub and -cert.pub that ssh-keygen reads", async () => {
    const pair = generateSshKeyPair("ed25519", { comment: "bot" });
    const ca = new SshCertSigner(generateSshKeyPair("ed25519").privateKey);
    const cert = ca.sign({
      type: "user",
      publicKey: pair.publicLine,
      keyId: "bot:ci:gen:1",
      principals: ["ci"],
      validAfter: new Date(Date.now() - 60_000),
      validBefore: new Date(Date.now() + 3600_000),
    });
    const base = join(dir, "id_bot");
    const files = await writeSshIdentity(base, { ...pair, certificateLine: cert.line });
    expect((await stat(files.privateKeyPath)).mode & 0o777).toBe(0o600);
    const { stdout } = await exec("ssh-keygen", ["-y", "-f", files.privateKeyPath]);
    expect(stdout.trim()).toBe(pair.publicLine);
    const shown = await exec("ssh-keygen", ["-L", "-f", files.certificatePath ?? ""]);
    expect(shown.stdout).toContain('Key ID: "bot:ci:gen:1"');
    // rewriting replaces the files in place
    const next = generateSshKeyPair("ed25519");
    await writeSshIdentity(base, next);
    expect((await exec("ssh-keygen", ["-y", "-f", base])).stdout.trim()).toBe(next.publicLine);
    await expect(stat(`${base}-cert.pub`)).rejects.toThrow(/ENOENT/);
  });
});

describe("public key blobs", () => {
  it("decodes a blob seen before to the same key, and a blob with trailing bytes stays refused", () => {
    const k = generateSshKeyPair("ed25519");
    const blob = parseSshPublicKey(k.publicLine).blob;
    const first = parseSshPublicKeyBlob(blob);
    const again = parseSshPublicKeyBlob(Buffer.from(blob));
    expect(again.type).toBe("ssh-ed25519");
    expect(again.key.equals(first.key)).toBe(true);
    expect(() => parseSshPublicKeyBlob(Buffer.concat([blob, Buffer.from([0])]))).toThrow();
    const other = parseSshPublicKeyBlob(parseSshPublicKey(generateSshKeyPair("ed25519").publicLine).blob);
    expect(other.key.equals(first.key)).toBe(false);
  });
});
