// Our KRL bytes against the real ssh-keygen: `ssh-keygen -Q -f <krl> <key>` exits 1 and prints
// REVOKED for a revoked key or certificate, 0 and "ok" otherwise; a file it cannot parse is an
// error of its own (exit 255), which these tests tell apart from "ok".
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encodeKrl } from "./krl.ts";
import { SshCertSigner } from "./ssh-cert.ts";
import { generateSshKeyPair, parseSshPublicKey } from "./ssh-keys.ts";

let dir: string;
let n = 0;
const caA = generateSshKeyPair("ed25519", { comment: "ca-a" });
const caB = generateSshKeyPair("ed25519", { comment: "ca-b" });
const blobOf = (line: string) => parseSshPublicKey(line).blob;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "svc-krl-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Writes a certificate by `ca` and returns its .pub path. */
async function cert(ca: typeof caA, keyId: string, serial: bigint): Promise<string> {
  const subject = generateSshKeyPair("ed25519");
  const c = new SshCertSigner(ca.privateKey).sign({
    type: "user",
    publicKey: subject.publicLine,
    keyId,
    principals: ["alice"],
    validAfter: new Date(Date.now() - 60_000),
    validBefore: new Date(Date.now() + 3600_000),
    serial,
  });
  const path = join(dir, `cert-${++n}-cert.pub`);
  await writeFile(path, `${c.line}\n`);
  return path;
}

async function keyFile(line: string): Promise<string> {
  const path = join(dir, `key-${++n}.pub`);
  await writeFile(path, `${line}\n`);
  return path;
}

/** ssh-keygen -Q: "revoked", "ok", or throws on anything else (a KRL it refused to read). */
async function query(krl: Buffer, file: string): Promise<"revoked" | "ok"> {
  const krlPath = join(dir, `krl-${++n}`);
  await writeFile(krlPath, krl);
  const r = await new Promise<{ code: number; out: string }>((resolve) => {
    execFile("ssh-keygen", ["-Q", "-f", krlPath, file], (err, stdout, stderr) =>
      resolve({ code: err ? Number((err as { code?: number }).code ?? -1) : 0, out: `${stdout}${stderr}` }),
    );
  });
  if (r.code === 1 && /REVOKED/.test(r.out)) return "revoked";
  if (r.code === 0 && /: ok/.test(r.out)) return "ok";
  throw new Error(`ssh-keygen -Q failed (${r.code}): ${r.out}`);
}

describe("encodeKrl, checked by ssh-keygen -Q", () => {
  it("an empty KRL is valid and revokes nothing", async () => {
    const krl = encodeKrl({ generatedAt: new Date() });
    expect(krl.subarray(0, 8).toString("latin1")).toBe("SSHKRL\n\0");
    expect(await query(krl, await cert(caA, "user:alice", 5n))).toBe("ok");
    expect(await query(krl, await keyFile(caA.publicLine))).toBe("ok");
  });

  it("revokes by key id, only under the CA the section names", async () => {
    const krl = encodeKrl({
      generatedAt: new Date(),
      version: 7n,
      comment: "svc test",
      certificates: [{ caKeyBlob: blobOf(caA.publicLine), keyIds: ["user:bob", "user:alice", "user:alice"] }],
    });
    expect(await query(krl, await cert(caA, "user:alice", 11n))).toBe("revoked");
    expect(await query(krl, await cert(caA, "user:bob", 12n))).toBe("revoked");
    expect(await query(krl, await cert(caA, "user:carol", 13n))).toBe("ok");
    // Same key id, another CA: not covered.
    expect(await query(krl, await cert(caB, "user:alice", 14n))).toBe("ok");
    // A key id is matched whole, not as a prefix.
    expect(await query(krl, await cert(caA, "user:alice2", 15n))).toBe("ok");
  });

  it("revokes by serial, and several CA sections at once (a rotation's two keys)", async () => {
    const krl = encodeKrl({
      generatedAt: new Date(),
      certificates: [
        { caKeyBlob: blobOf(caA.publicLine), serials: [300n, 2n ** 63n + 5n, 300n] },
        { caKeyBlob: blobOf(caB.publicLine), keyIds: ["bot:ci:gen:3"] },
      ],
    });
    expect(await query(krl, await cert(caA, "x", 300n))).toBe("revoked");
    expect(await query(krl, await cert(caA, "y", 2n ** 63n + 5n))).toBe("revoked");
    expect(await query(krl, await cert(caA, "z", 301n))).toBe("ok");
    expect(await query(krl, await cert(caB, "x", 300n))).toBe("ok");
    expect(await query(krl, await cert(caB, "bot:ci:gen:3", 1n))).toBe("revoked");
  });

  it("a section without a CA key covers every CA", async () => {
    const krl = encodeKrl({ generatedAt: new Date(), certificates: [{ keyIds: ["user:mallory"] }] });
    expect(await query(krl, await cert(caA, "user:mallory", 1n))).toBe("revoked");
    expect(await query(krl, await cert(caB, "user:mallory", 2n))).toBe("revoked");
    expect(await query(krl, await cert(caB, "user:other", 3n))).toBe("ok");
  });

  it("revokes plain keys explicitly and by SHA-256, and a revoked CA revokes its certificates", async () => {
    const k1 = generateSshKeyPair("ed25519");
    const k2 = generateSshKeyPair("ecdsa-p256");
    const k3 = generateSshKeyPair("ed25519");
    const krl = encodeKrl({
      generatedAt: new Date(),
      explicitKeys: [blobOf(k1.publicLine), blobOf(caB.publicLine)],
      sha256Fingerprints: [createHash("sha256").update(blobOf(k2.publicLine)).digest()],
    });
    expect(await query(krl, await keyFile(k1.publicLine))).toBe("revoked");
    expect(await query(krl, await keyFile(k2.publicLine))).toBe("revoked");
    expect(await query(krl, await keyFile(k3.publicLine))).toBe("ok");
    expect(await query(krl, await cert(caB, "anyone", 9n))).toBe("revoked");
    expect(await query(krl, await cert(caA, "anyone", 9n))).toBe("ok");
  });

  it("refuses what sshd would read differently", () => {
    expect(() => encodeKrl({ generatedAt: new Date(), certificates: [{ keyIds: ["a\0b"] }] })).toThrow(
      /key id/,
    );
    expect(() => encodeKrl({ generatedAt: new Date(), certificates: [{ serials: [0n] }] })).toThrow(/serial/);
    expect(() => encodeKrl({ generatedAt: new Date(), sha256Fingerprints: [Buffer.alloc(20)] })).toThrow(
      /32 bytes/,
    );
  });
});
