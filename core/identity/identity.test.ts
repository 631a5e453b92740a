import { describe, expect, it } from "vitest";
import { BadParameterError } from "../errors.ts";
import {
  advanceGenerations,
  GENERATION_HISTORY,
  judgeRenewal,
  MAX_REISSUES,
  type StoredGenerations,
} from "./generation.ts";
import { newRenewalCredential, parseRenewalCredential, renewalSecretHash } from "./renewal-credential.ts";
import { backoffDelayMs, renewalDelayMs } from "./schedule.ts";
import { parseWorkloadPath, workloadPath } from "./spiffe-path.ts";

function issued(generation: number) {
  const c = newRenewalCredential(generation);
  return { token: c.token, record: { generation, secret_hash: c.secretHash } };
}

describe("renewal credential", () => {
  it("carries its generation and only a hash is kept", () => {
    const c = newRenewalCredential(7);
    const p = parseRenewalCredential(c.token);
    expect(p.generation).toBe(7);
    expect(renewalSecretHash(p.secret)).toBe(c.secretHash);
    expect(c.secretHash).not.toContain(p.secret);
  });
  it.each(["", "0.abc", "1.short", `x.${"A".repeat(43)}`, `1.${"A".repeat(44)}`, `01.${"A".repeat(43)}`])(
    "refuses %j",
    (t) => {
      expect(() => parseRenewalCredential(t)).toThrow(BadParameterError);
    },
  );
});

describe("judgeRenewal", () => {
  const g1 = issued(1);
  const g2 = issued(2);
  const g3 = issued(3);
  let stored: StoredGenerations = { current: g1.record, history: [] };
  stored = advanceGenerations(stored, g2.record);
  stored = advanceGenerations(stored, g3.record);
  const present = (token: string) => {
    const p = parseRenewalCredential(token);
    return { generation: p.generation, secretHash: renewalSecretHash(p.secret) };
  };

  it("accepts the current credential", () => {
    expect(judgeRenewal(stored, present(g3.token))).toEqual({ kind: "current" });
  });
  it("calls an earlier credential auth issued stale (lock)", () => {
    expect(judgeRenewal(stored, present(g1.token))).toEqual({ kind: "stale", presented: 1, current: 3 });
  });
  it("never locks on a guess: unknown secrets, future generations", () => {
    const guess = `2.${"C".repeat(43)}`;
    expect(judgeRenewal(stored, present(guess))).toEqual({ kind: "unknown" });
    expect(judgeRenewal(stored, present(`3.${"C".repeat(43)}`))).toEqual({ kind: "unknown" });
    expect(judgeRenewal(stored, present(issued(9).token))).toEqual({ kind: "unknown" });
  });
  it("remembers a bounded history", () => {
    let s: StoredGenerations = { current: issued(1).record, history: [] };
    for (let g = 2; g <= 20; g++) s = advanceGenerations(s, issued(g).record);
    expect(s.history).toHaveLength(GENERATION_HISTORY);
    expect(s.history[0]?.generation).toBe(19);
  });
  it("issues a generation again to a retry of its renewal with the same keys, at most MAX_REISSUES times", () => {
    // g3 was renewed from g2 for the keys "K".
    let s: StoredGenerations = advanceGenerations({ current: g1.record, history: [] }, g2.record);
    const fromG2 = present(g2.token);
    s = advanceGenerations(s, { ...g3.record, renewed_from: fromG2.secretHash, keys_fingerprint: "K" });
    expect(judgeRenewal(s, { ...fromG2, keysFingerprint: "K" })).toEqual({ kind: "retry" });
    // Other keys: a copy of generation 2.
    expect(judgeRenewal(s, { ...fromG2, keysFingerprint: "L" })).toEqual({
      kind: "stale",
      presented: 2,
      current: 3,
    });
    expect(judgeRenewal(s, fromG2)).toEqual({ kind: "stale", presented: 2, current: 3 });
    // Older generations never retry, whatever the keys.
    expect(judgeRenewal(s, { ...present(g1.token), keysFingerprint: "K" })).toMatchObject({ kind: "stale" });
    // A re-issue supersedes the record: presenting the superseded one is a copy.
    for (let n = 1; n <= MAX_REISSUES; n++) {
      const again = issued(3);
      s = advanceGenerations(s, { ...s.current, secret_hash: again.record.secret_hash, reissues: n });
      expect(judgeRenewal(s, present(again.token))).toEqual({ kind: "current" });
    }
    expect(judgeRenewal(s, present(g3.token))).toEqual({ kind: "stale", presented: 3, current: 3 });
    expect(judgeRenewal(s, { ...fromG2, keysFingerprint: "K" })).toEqual({
      kind: "stale",
      presented: 2,
      current: 3,
    });
  });
});

describe("schedule", () => {
  it("renews at the fraction, earlier by at most the jitter", () => {
    const base = { issuedAtMs: 0, expiresAtMs: 100_000, nowMs: 0, fraction: 0.5 };
    expect(renewalDelayMs({ ...base, random: () => 0 })).toBe(50_000);
    expect(renewalDelayMs({ ...base, jitter: 0.1, random: () => 0.999 })).toBeGreaterThanOrEqual(45_000);
    expect(renewalDelayMs({ ...base, nowMs: 80_000, random: () => 0 })).toBe(0);
  });
  it("backs off exponentially with a cap", () => {
    const mid = () => 0.5;
    const delays = [0, 1, 2, 3, 10, 50].map((a) =>
      backoffDelayMs(a, { baseMs: 1000, maxMs: 8000, random: mid }),
    );
    expect(delays).toEqual([750, 1500, 3000, 6000, 6000, 6000]);
    expect(backoffDelayMs(5, { baseMs: 1000, maxMs: 8000, random: () => 0.999 })).toBeLessThanOrEqual(8000);
  });
});

describe("workload path", () => {
  it("reads /role/<role>/<workload...>", () => {
    expect(parseWorkloadPath("/role/ci/build/42")).toEqual({ role: "ci", workload: "build/42" });
    expect(workloadPath("db.readers", "api")).toBe("/role/db.readers/api");
  });
  it.each(["/role/ci", "/svc/ci/x", "role/ci/x", "/role/CI/x", "/role/ci//x", "/role/ci/../x", "/role//x"])(
    "refuses %j",
    (p) => {
      expect(() => parseWorkloadPath(p)).toThrow(BadParameterError);
    },
  );
});
