// The public key line parser scans the line by hand (it is on every IssueUserCerts). These tests
// hold it to the regular expression it replaced: for every line below, both accept the same parts
// or refuse with the same BadParameterError message; and the lazily imported Ed25519 KeyObject is
// the key of the line.
import { createHash, generateKeyPairSync, randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { BadParameterError } from "../errors.ts";
import {
  formatSshPublicKey,
  generateSshKeyPair,
  parseSshPublicKey,
  sshFingerprint,
  sshPublicKeyBlob,
} from "./ssh-keys.ts";
import { SshReader, SshWriter } from "./ssh-wire.ts";

/** The line checks as they were written with a regular expression (the reference). */
function referenceSplit(line: string): { word: string; b64: string; comment: string } {
  const trimmed = line.trim();
  if (trimmed.length === 0 || trimmed.length > 16384 || /[\r\n]/.test(trimmed)) {
    throw new BadParameterError("ssh public key must be one non-empty line");
  }
  const m = /^(\S+)\s+([A-Za-z0-9+/]+={0,2})(?:\s+(.*))?$/.exec(trimmed);
  if (!m) throw new BadParameterError("ssh public key must look like '<type> <base64> [comment]'");
  const [, word, b64, comment] = m as unknown as [string, string, string, string | undefined];
  if (b64.length % 4 !== 0) throw new BadParameterError("ssh public key base64 is malformed");
  const blob = Buffer.from(b64, "base64");
  if (blob.toString("base64") !== b64) throw new BadParameterError("ssh public key base64 is malformed");
  return { word, b64, comment: comment ?? "" };
}

/** Outcome of the reference's line stage, then the real parser on the same line. */
function outcome(f: () => unknown): string {
  try {
    return JSON.stringify(f());
  } catch (err) {
    if (!(err instanceof BadParameterError)) throw err;
    return `refused: ${err.message}`;
  }
}

const ed = generateSshKeyPair("ed25519").publicLine;
const [edType, edB64] = ed.split(" ") as [string, string];

/** Lines around the edges of the format: separators, padding, stray characters, comments. */
function variants(): string[] {
  const spaces = [" ", "  ", "\t", "\u00a0", "\u2003", "\u3000", "\ufeff", "\u2028", "\v", "\f"];
  const out: string[] = ["", " ", edType, `${edType} `, ` ${edType}  ${edB64} `, `${edType}${edB64}`];
  for (const s of spaces) {
    out.push(`${edType}${s}${edB64}`, `${edType} ${edB64}${s}c`, `${edType} ${edB64} c${s}d`);
    out.push(`${s}${edType} ${edB64}${s}`);
  }
  for (const c of ["\u2028", "\u2029", "\0", "é", "😀", "\ud800", "x y z", "=", "a=b"]) {
    out.push(`${edType} ${edB64} ${c}`, `${edType} ${edB64} me${c}@host`);
  }
  // base64 shapes: stray characters, length, padding counts and non-canonical trailing bits
  for (const b of ["AAAA", "AAA=", "AA==", "A===", "AAA", "AAAAA", "AA=A", "AAB=", "AAF=", "AB==", "AQ=="]) {
    out.push(`${edType} ${b}`, `${edType} ${b} c`);
  }
  for (const bad of ["$", "-", "_", ".", "é", "=", "==", "==="]) {
    out.push(`${edType} ${edB64}${bad}`, `${edType} ${bad}${edB64}`, `${edType} ${edB64.slice(0, 8)}${bad}`);
  }
  out.push(`${edType} ${edB64}\n${ed}`, `${edType} ${edB64}\r`, `ssh-rsa ${edB64}`, `x ${edB64}`);
  out.push(`${edType} ${"A".repeat(16400)}`);
  return out;
}

describe("ssh public key lines", () => {
  it("split exactly as the regular expression did (parts or refusal message)", () => {
    for (const line of variants()) {
      const ref = outcome(() => referenceSplit(line));
      const got = outcome(() => {
        const k = parseSshPublicKey(line);
        return { word: k.type, b64: k.blob.toString("base64"), comment: k.comment };
      });
      if (ref.startsWith("refused")) expect([line, got]).toEqual([line, ref]);
      // Accepted lines may still be refused for their content (e.g. a blob that is not a key):
      // then never for the line's shape.
      else if (got.startsWith("refused"))
        expect(got).not.toMatch(/look like|base64 is malformed|one non-empty/);
      else expect([line, got]).toEqual([line, ref]);
    }
  });

  it("agree with the regular expression on generated lines (parts or refusal message)", () => {
    // Deterministic: a small linear congruential generator, so a failure repeats.
    let seed = 17;
    const next = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const pick = (xs: readonly string[]) => xs[next(xs.length)] as string;
    const seps = [" ", "  ", "\t", "\u00a0", "\u2028", "\u3000", "\ufeff", "", "\n", "x"];
    const words = [edType, "ssh-rsa", "x", "é", "ssh-ed25519\0", ""];
    const b64s = [
      edB64,
      `${edB64}=`,
      edB64.slice(0, 12),
      "AAAA",
      "AA==",
      "AAB=",
      "AAA=",
      "A===",
      "",
      `${edB64}$`,
    ];
    const comments = ["", "me@host", "a b", "é", "\u2028", "x\u2029y", "=", "\0", "\r"];
    const strays = ["=", "$", "\t", "\n", "\u2028", "A", " "];
    const seen = new Set<string>();
    for (let i = 0; i < 5000; i++) {
      let line = `${pick(["", " ", "\t"])}${pick(words)}${pick(seps)}${pick(b64s)}`;
      if (next(2) === 0) line += `${pick(seps)}${pick(comments)}`;
      if (next(4) === 0) {
        const at = next(line.length + 1);
        line = `${line.slice(0, at)}${pick(strays)}${line.slice(at)}`;
      }
      const ref = outcome(() => referenceSplit(line));
      const got = outcome(() => {
        const k = parseSshPublicKey(line);
        return { word: k.type, b64: k.blob.toString("base64"), comment: k.comment };
      });
      seen.add(got.startsWith("refused") ? got : "accepted");
      if (ref.startsWith("refused") || !got.startsWith("refused")) expect([line, got]).toEqual([line, ref]);
      else expect(got).not.toMatch(/look like|base64 is malformed|one non-empty/);
    }
    // The lines reach every outcome: accepted, and each refusal of the line's shape.
    expect(seen).toContain("accepted");
    for (const m of ["look like", "base64 is malformed", "one non-empty"])
      expect([...seen].some((x) => x.includes(m))).toBe(true);
  });

  it("refuses non-canonical base64 the way re-encoding did, for every trailing character", () => {
    const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let refused = 0;
    for (const c of alphabet) {
      for (const b64 of [`AA${c}=`, `A${c}==`, `AAAAAA${c}=`, `AAAAA${c}==`]) {
        const line = `${edType} ${b64}`;
        const ref = outcome(() => referenceSplit(line));
        const got = outcome(() => parseSshPublicKey(line));
        if (ref.startsWith("refused")) {
          refused++;
          expect([line, got]).toEqual([line, ref]);
        } else expect(got).not.toMatch(/look like|base64 is malformed/);
      }
    }
    // 3 of 4 one-padding and 15 of 16 two-padding last characters are non-canonical.
    expect(refused).toBe(2 * (48 + 60));
  });

  it("parses random well-formed lines of every type to the key they hold", () => {
    for (const kind of ["ed25519", "ecdsa-p256", "ecdsa-p384", "rsa"] as const) {
      const k = generateSshKeyPair(
        kind,
        kind === "rsa" ? { bits: 2048, comment: "r@h" } : { comment: "u@h" },
      );
      const parsed = parseSshPublicKey(`  ${k.publicLine}\t`);
      expect(parsed.comment).toBe(kind === "rsa" ? "r@h" : "u@h");
      expect(parsed.blob.equals(sshPublicKeyBlob(k.publicKey))).toBe(true);
      // The (lazily imported, for Ed25519) KeyObject is the same key.
      expect(parsed.key.equals(k.publicKey)).toBe(true);
      expect(formatSshPublicKey(parsed.key, parsed.comment)).toBe(k.publicLine);
    }
  });

  it("refuses an Ed25519 blob of the wrong size, trailing bytes and a type word mismatch", () => {
    const blob = Buffer.from(edB64, "base64");
    const short = Buffer.concat([blob.subarray(0, 15), Buffer.of(0, 0, 0, 31), blob.subarray(19, 50)]);
    expect(() => parseSshPublicKey(`${edType} ${short.toString("base64")}`)).toThrow(/must be 32 bytes/);
    const longer = Buffer.concat([blob, Buffer.of(1, 2, 3)]).toString("base64");
    expect(() => parseSshPublicKey(`${edType} ${longer}`)).toThrow(/trailing bytes/);
    expect(() => parseSshPublicKey(`ssh-rsa ${edB64}`)).toThrow(/says "ssh-rsa" but holds ssh-ed25519/);
    expect(() => parseSshPublicKey(42 as unknown as string)).toThrow(BadParameterError);
  });

  it("fingerprints as ssh-keygen does (unpadded base64 SHA-256 of the blob)", () => {
    for (let i = 0; i < 20; i++) {
      const blob = i === 0 ? Buffer.from(edB64, "base64") : randomBytes(1 + i * 13);
      const want = createHash("sha256").update(blob).digest("base64").replace(/=+$/, "");
      expect(sshFingerprint(blob)).toBe(`SHA256:${want}`);
    }
    const pub = generateKeyPairSync("ed25519").publicKey;
    expect(sshFingerprint(pub)).toBe(sshFingerprint(sshPublicKeyBlob(pub)));
  });
});

describe("ssh wire strings", () => {
  it("read ASCII, UTF-8 and refuse bytes that are not UTF-8, short or long", () => {
    for (const len of [3, 64, 65, 300]) {
      const ascii = "a".repeat(len - 1);
      const utf8 = `é${"b".repeat(len - 2)}`;
      const r = new SshReader(new SshWriter().string(ascii).string(utf8).toBuffer());
      expect([r.string(), r.string()]).toEqual([ascii, utf8]);
      const bad = Buffer.concat([Buffer.from("x".repeat(len - 1)), Buffer.of(0xff)]);
      expect(() => new SshReader(new SshWriter().bytes(bad).toBuffer(), "t").string()).toThrow(/not UTF-8/);
    }
  });
});
