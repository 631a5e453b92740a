import { execFile } from "node:child_process";
import { generateKeyPairSync } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { parseSshCertificate, SshCertSigner } from "../certs/ssh-cert.ts";
import { generateSshKeyPair } from "../certs/ssh-keys.ts";
import {
  CERT_IDENTITY_EXTENSION,
  decodeCertIdentity,
  encodeCertIdentity,
  nodePrincipal,
} from "./cert-identity.ts";

const run = promisify(execFile);
const signer = new SshCertSigner(generateKeyPairSync("ed25519").privateKey);
const identity = {
  kind: "user" as const,
  name: "carol",
  roles: ["lab-root", "access"],
  traits: { logins: ["carol"] },
};

function sign(valueExtensions?: Record<string, string>) {
  return signer.sign({
    type: "user",
    publicKey: generateSshKeyPair("ed25519").publicLine,
    keyId: "user=carol",
    principals: ["root", nodePrincipal("root", "0b6f5c1e-2f1a-4c55-9d0e-3f1f5d0b7a10")],
    validAfter: new Date(Date.now() - 60_000),
    validBefore: new Date(Date.now() + 600_000),
    extensions: ["permit-pty", "permit-user-rc"],
    ...(valueExtensions ? { valueExtensions } : {}),
  });
}

describe("certificate identity extension", () => {
  it("round-trips through a signed certificate beside the permit-* flags, in lexical order", () => {
    const cert = parseSshCertificate(sign(encodeCertIdentity(identity)).line);
    expect(cert.extensions).toEqual(["permit-pty", "permit-user-rc", CERT_IDENTITY_EXTENSION]);
    expect(decodeCertIdentity(cert.extensionValues)).toEqual(identity);
  });

  it("is read by ssh-keygen -L as an extension of a valid certificate", async () => {
    const dir = await mkdtemp(join(tmpdir(), "svc-cert-identity-"));
    try {
      await writeFile(join(dir, "c-cert.pub"), `${sign(encodeCertIdentity(identity)).line}\n`);
      const { stdout } = await run("ssh-keygen", ["-L", "-f", join(dir, "c-cert.pub")]);
      expect(stdout).toContain(CERT_IDENTITY_EXTENSION);
      expect(stdout).toContain("permit-pty");
      expect(stdout).toMatch(/root@0b6f5c1e-2f1a-4c55-9d0e-3f1f5d0b7a10/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("a certificate without it has no identity", () => {
    expect(() => decodeCertIdentity(parseSshCertificate(sign().line).extensionValues)).toThrow(
      /carries no svc identity/,
    );
  });

  it("refuses malformed identities", () => {
    const bad = (v: string) => () => decodeCertIdentity({ [CERT_IDENTITY_EXTENSION]: v });
    expect(bad("{")).toThrow(/not JSON/);
    expect(bad("[]")).toThrow(/must be an object/);
    expect(bad(JSON.stringify({ kind: "admin", name: "x", roles: [] }))).toThrow(/unknown kind/);
    expect(bad(JSON.stringify({ kind: "user", name: "", roles: [] }))).toThrow(/no name/);
    expect(bad(JSON.stringify({ kind: "user", name: "x", roles: [1] }))).toThrow(/list of strings/);
    expect(bad(JSON.stringify({ kind: "user", name: "x", roles: [], traits: { a: "b" } }))).toThrow(
      /list of strings/,
    );
  });

  it("the signer refuses extension names that are not name@domain", () => {
    expect(() => sign({ "permit-everything": "x" })).toThrow(/not name@domain/);
  });

  it("one signer, many identities: each certificate carries its own (the encoded section is reused only for the same input)", () => {
    const dave = { ...identity, name: "dave", roles: ["access"] };
    const a = parseSshCertificate(sign(encodeCertIdentity(identity)).line);
    const b = parseSshCertificate(sign(encodeCertIdentity(dave)).line);
    const c = parseSshCertificate(sign(encodeCertIdentity(identity)).line);
    expect(decodeCertIdentity(a.extensionValues)).toEqual(identity);
    expect(decodeCertIdentity(b.extensionValues)).toEqual(dave);
    expect(decodeCertIdentity(c.extensionValues)).toEqual(identity);
    // Values that would run together if the input were joined naively stay apart.
    const one = parseSshCertificate(sign({ "a@x.dev": 'v","b@x.dev":"w' }).line).extensionValues;
    const two = parseSshCertificate(sign({ "a@x.dev": "v", "b@x.dev": "w" }).line).extensionValues;
    expect(one).toEqual({ "a@x.dev": 'v","b@x.dev":"w' });
    expect(two).toEqual({ "a@x.dev": "v", "b@x.dev": "w" });
    // A refused name is refused every time, not only before a hit.
    expect(() => sign({ "permit-everything": "x" })).toThrow(/not name@domain/);
  });
});
