// IssueUserCerts end to end: certificates from the real gRPC API are accepted by a real OpenSSH
// sshd for the logins the user's roles grant, and refused for any other login.
import { execFile } from "node:child_process";
import { generateKeyPairSync } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseSshCertificate } from "../core/certs/ssh-cert.ts";
import { generateSshKeyPair } from "../core/certs/ssh-keys.ts";
import { callUnary, userMetadata } from "../server/auth/client.ts";
import { type AuthTestEnv, PASSWORD, startAuthEnv, statusOf } from "./auth-fixture.ts";
import { type RunningSshd, startSshd } from "./harness/sshd.ts";

const run = promisify(execFile);
let env: AuthTestEnv;
let sshd: RunningSshd | undefined;
let dir: string;

beforeAll(async () => {
  env = await startAuthEnv();
  dir = await mkdtemp(join(tmpdir(), "svc-auth-certs-"));
  sshd = await startSshd({ trustedUserCaKeys: [env.pki.userCaPublicLine] });
});
afterAll(async () => {
  await sshd?.stop();
  await env?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function session(username: string): Promise<string> {
  const r = await callUnary(env.client, "AuthenticateLocal", {
    username,
    password: PASSWORD,
    client_address: "",
  });
  return r.session?.session_id ?? "";
}

/** Writes a key pair + certificate for `username` and returns the paths. */
async function certFor(
  username: string,
  ttlSeconds = 300,
): Promise<{ key: string; cert: string; line: string }> {
  const pair = generateSshKeyPair("ed25519");
  const sid = await session(username);
  const r = await callUnary(
    env.client,
    "IssueUserCerts",
    { ssh_public_key: pair.publicLine, ttl_seconds: ttlSeconds },
    userMetadata(sid),
  );
  const key = join(dir, `${username}-${Math.random().toString(36).slice(2)}`);
  await writeFile(key, pair.privateOpenSsh, { mode: 0o600 });
  await writeFile(`${key}-cert.pub`, `${r.ssh_certificate}\n`, { mode: 0o600 });
  return { key, cert: `${key}-cert.pub`, line: r.ssh_certificate };
}

async function sshAs(
  login: string,
  c: { key: string; cert: string },
): Promise<{ code: number; out: string }> {
  const args = [
    "-F",
    "/dev/null",
    "-i",
    c.key,
    "-o",
    `CertificateFile=${c.cert}`,
    "-o",
    "IdentitiesOnly=yes",
    "-o",
    "BatchMode=yes",
    "-o",
    "StrictHostKeyChecking=no",
    "-o",
    "UserKnownHostsFile=/dev/null",
    "-o",
    "ConnectTimeout=20",
    "-p",
    String(sshd?.port),
    `${login}@127.0.0.1`,
    "echo",
    "cert-login-ok",
  ];
  try {
    const r = await run("ssh", args, { timeout: 30_000 });
    return { code: 0, out: r.stdout };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === "number" ? e.code : -1, out: `${e.stdout ?? ""}${e.stderr ?? ""}` };
  }
}

describe("IssueUserCerts", () => {
  it("signs the logins the roles grant; sshd accepts them and refuses others", async () => {
    const alice = await certFor("alice");
    const parsed = parseSshCertificate(alice.line);
    expect(parsed.type).toBe("user");
    expect(parsed.principals).toEqual(["alice", "root"]);
    const ok = await sshAs("root", alice);
    expect(ok, sshd?.log().slice(-1500)).toEqual({ code: 0, out: "cert-login-ok\n" });
    // "daemon" exists on the machine but no role of alice grants it.
    const refused = await sshAs("daemon", alice);
    expect(refused.code).toBe(255);
    expect(refused.out).toMatch(/Permission denied/);
    // bob's roles grant bob and deploy only: root is refused with his certificate.
    const bob = await certFor("bob");
    expect(parseSshCertificate(bob.line).principals).toEqual(["bob", "deploy"]);
    const bobAsRoot = await sshAs("root", bob);
    expect(bobAsRoot.code).toBe(255);
  });

  it("caps the TTL by the smallest max_session_ttl and follows the role options", async () => {
    const c = await certFor("carl", 48 * 3600);
    const p = parseSshCertificate(c.line);
    const ttl = p.validBefore.getTime() - p.validAfter.getTime();
    expect(ttl).toBeGreaterThan(3600_000);
    expect(ttl).toBeLessThanOrEqual(3600_000 + 61_000);
    expect(p.extensions).not.toContain("permit-port-forwarding");
    expect(p.extensions).toContain("permit-pty");
    expect(p.keyId).toMatch(/^user=carl session=[0-9a-f]{16}$/);
  });

  it("audits every issue with the caller's identity", async () => {
    const c = await certFor("bob");
    const admin = await session("alice");
    const parsed = parseSshCertificate(c.line);
    const serial = parsed.serial.toString();
    const page = await callUnary(
      env.client,
      "SearchAuditEvents",
      { type: "cert.create", user: "bob", limit: 500, offset: 0 },
      userMetadata(admin),
    );
    const ev = page.items.find((i) => JSON.parse(i.fields_json).serial === serial);
    expect(ev?.user_name).toBe("bob");
    // The certified key's fingerprint as OpenSSH prints it, not as our code computes it.
    const { stdout } = await promisify(execFile)("ssh-keygen", ["-l", "-f", c.cert]);
    const fingerprint = stdout.split(" ")[1];
    expect(fingerprint).toMatch(/^SHA256:/);
    expect(JSON.parse(ev?.fields_json ?? "{}")).toEqual({
      emitted_by: "user:bob",
      cert_type: "user",
      key_id: parsed.keyId,
      serial,
      principals: ["bob", "deploy"],
      valid_before: parsed.validBefore.toISOString(),
      public_key_fingerprint: fingerprint,
    });
  });

  it("refuses weak and malformed keys with INVALID_ARGUMENT, and users without logins", async () => {
    const sid = await session("bob");
    const weak = generateKeyPairSync("rsa", { modulusLength: 1024 });
    const { formatSshPublicKey } = await import("../core/certs/ssh-keys.ts");
    let weakLine: string;
    try {
      weakLine = formatSshPublicKey(weak.publicKey);
    } catch {
      // The formatter may refuse to encode a weak key; build the line by hand then.
      const jwk = weak.publicKey.export({ format: "jwk" });
      const mpint = (b64: string | undefined) => {
        const b = Buffer.from(b64 ?? "", "base64url");
        const v = (b[0] ?? 0) & 0x80 ? Buffer.concat([Buffer.from([0]), b]) : b;
        const len = Buffer.alloc(4);
        len.writeUInt32BE(v.length);
        return Buffer.concat([len, v]);
      };
      const t = Buffer.from("ssh-rsa");
      const tl = Buffer.alloc(4);
      tl.writeUInt32BE(t.length);
      weakLine = `ssh-rsa ${Buffer.concat([tl, t, mpint(jwk.e), mpint(jwk.n)]).toString("base64")}`;
    }
    for (const key of [
      weakLine,
      "ssh-ed25519 AAAAnotbase64!!",
      "",
      "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIA==",
    ]) {
      const r = await statusOf(
        callUnary(env.client, "IssueUserCerts", { ssh_public_key: key, ttl_seconds: 60 }, userMetadata(sid)),
      );
      expect(r.code, key).toBe(status.INVALID_ARGUMENT);
    }
    const eve = await session("eve");
    const pair = generateSshKeyPair("ed25519");
    const none = await statusOf(
      callUnary(
        env.client,
        "IssueUserCerts",
        { ssh_public_key: pair.publicLine, ttl_seconds: 60 },
        userMetadata(eve),
      ),
    );
    expect(none.code).toBe(status.PERMISSION_DENIED);
  });
});
