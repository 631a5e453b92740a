// Valued extensions sealed with sealValueExtensions are cached by the signer per object: the
// certificate must carry exactly what an unsealed copy of the same values gives, for every flag set.
import { describe, expect, it } from "vitest";
import { BadParameterError } from "../errors.ts";
import { parseSshCertificate, SSH_CERT_EXTENSIONS, SshCertSigner, sealValueExtensions } from "./ssh-cert.ts";
import { generateSshKeyPair } from "./ssh-keys.ts";

const ca = generateSshKeyPair("ed25519");
const subject = generateSshKeyPair("ed25519");
const signer = new SshCertSigner(ca.privateKey);
const base = {
  type: "user" as const,
  publicKey: subject.publicLine,
  keyId: "k",
  principals: ["bob"],
  validAfter: new Date(1_700_000_000_000),
  validBefore: new Date(1_700_000_600_000),
};
const extensionsOf = (c: { blob: Buffer }) => {
  const p = parseSshCertificate(c.blob);
  return { extensions: p.extensions, values: p.extensionValues };
};

describe("sealed valued extensions", () => {
  it("sign to the same extensions as unsealed values, whatever the flags, hit or miss", () => {
    const values = { "svc-identity@svc.dev": '{"kind":"user","name":"bob"}', "a-b@x.y": "v" };
    const sealed = sealValueExtensions(values);
    expect(Object.isFrozen(sealed)).toBe(true);
    for (const flags of [[], ["permit-pty"], [...SSH_CERT_EXTENSIONS], ["permit-pty"]] as const) {
      for (let round = 0; round < 2; round++) {
        const a = extensionsOf(signer.sign({ ...base, extensions: flags, valueExtensions: sealed }));
        const b = extensionsOf(signer.sign({ ...base, extensions: flags, valueExtensions: { ...values } }));
        expect(a).toEqual(b);
        expect(a.values).toEqual(values);
        expect(a.extensions).toEqual([...flags, ...Object.keys(values)].sort());
      }
    }
  });

  it("refuse what unsealed values refuse, and non-string values when sealed", () => {
    const badName = sealValueExtensions({ "no-domain": "v" });
    expect(() => signer.sign({ ...base, valueExtensions: badName })).toThrow(/not name@domain/);
    expect(() => signer.sign({ ...base, valueExtensions: badName })).toThrow(BadParameterError);
    const unknownFlag = ["permit-everything"] as unknown as ["permit-pty"];
    const ok = sealValueExtensions({ "a@b.c": "v" });
    expect(() => signer.sign({ ...base, extensions: unknownFlag, valueExtensions: ok })).toThrow(
      /unknown extension/,
    );
    expect(() => sealValueExtensions({ "a@b.c": 1 as unknown as string })).toThrow(BadParameterError);
  });
});
