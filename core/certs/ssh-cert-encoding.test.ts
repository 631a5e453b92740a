// The signer writes certificates field by field into one buffer (ASCII by hand, the rest by
// Buffer), and caches valued extensions sealed with sealValueExtensions per object: what it
// writes must read back exactly, and a sealed object must give what an unsealed copy gives.
import { describe, expect, it } from "vitest";
import { ManualClock } from "../clock.ts";
import { BadParameterError } from "../errors.ts";
import {
  parseSshCertificate,
  SSH_CERT_EXTENSIONS,
  SshCertSigner,
  sealValueExtensions,
  verifySshCertificate,
} from "./ssh-cert.ts";
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

describe("certificate fields", () => {
  it("read back as written: non-ASCII and long text, 64/65-character edges, times past 2^32 s", () => {
    const principals = [
      "bob",
      "é",
      "日本語ログイン",
      "x".repeat(64),
      "y".repeat(65),
      "z".repeat(255),
      "a\u{1F600}b",
    ];
    const keyIds = ["k", "ключ é", "k".repeat(64), "k".repeat(65), "k".repeat(1024)];
    const times = [
      [new Date(1_700_000_000_000), new Date(1_700_000_600_999)],
      [new Date(0), new Date(4_294_967_296_000)],
      [new Date(4_294_967_295_000), new Date(Date.UTC(9999, 11, 31))],
    ] as const;
    for (const keyId of keyIds) {
      for (const [validAfter, validBefore] of times) {
        for (const serial of [undefined, 0n, 2n ** 64n - 1n]) {
          const c = signer.sign({
            ...base,
            keyId,
            principals,
            validAfter,
            validBefore,
            ...(serial === undefined ? {} : { serial }),
          });
          const p = parseSshCertificate(c.blob);
          expect(p.keyId).toBe(keyId);
          expect(p.principals).toEqual(principals);
          expect(p.validAfter.getTime()).toBe(Math.floor(validAfter.getTime() / 1000) * 1000);
          expect(p.validBefore.getTime()).toBe(Math.floor(validBefore.getTime() / 1000) * 1000);
          expect(p.serial).toBe(c.serial);
          if (serial !== undefined) expect(p.serial).toBe(serial);
          else expect(p.serial < 2n ** 63n).toBe(true);
          expect(p.publicKey.equals(parseSshCertificate(c.line).publicKey)).toBe(true);
          // The signature covers what was written.
          const clock = new ManualClock(validAfter.getTime() + 1000);
          expect(
            verifySshCertificate(c.line, { trustedCaKeys: [ca.publicLine], type: "user", clock }).keyId,
          ).toBe(keyId);
        }
      }
    }
  });
});
