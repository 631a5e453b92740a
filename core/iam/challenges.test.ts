import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SqliteBackend } from "../backend/sqlite.ts";
import { ManualClock } from "../clock.ts";
import { AccessDeniedError } from "../errors.ts";
import { IAM_CHALLENGE_TTL_MS, IamChallenges } from "./challenges.ts";

describe("IamChallenges", () => {
  let dir: string;
  const clock = new ManualClock(Date.UTC(2026, 10, 23, 2, 0, 0));
  const backends: SqliteBackend[] = [];
  const open = (): SqliteBackend => {
    const b = new SqliteBackend({ path: join(dir, "state.db"), clock, sweepIntervalMs: 0 });
    backends.push(b);
    return b;
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "iam-challenges-"));
  });
  afterAll(async () => {
    for (const b of backends) await b.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("issues 256-bit random challenges and stores only a hash of each", async () => {
    const backend = open();
    const challenges = new IamChallenges({ backend, clock });
    const a = await challenges.issue();
    const b = await challenges.issue();
    expect(a.challenge).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(a.challenge, "base64url")).toHaveLength(32);
    expect(a.challenge).not.toBe(b.challenge);
    expect(a.expires.getTime()).toBe(clock.now().getTime() + IAM_CHALLENGE_TTL_MS);
    const stored = JSON.stringify(await backend.range("/iam/challenges/"));
    expect(stored).not.toContain(a.challenge);
    expect(stored).not.toContain(b.challenge);
  });

  it("accepts a challenge once", async () => {
    const challenges = new IamChallenges({ backend: open(), clock });
    const { challenge } = await challenges.issue();
    await challenges.consume(challenge);
    await expect(challenges.consume(challenge)).rejects.toBeInstanceOf(AccessDeniedError);
  });

  it("refuses unknown and malformed challenges", async () => {
    const challenges = new IamChallenges({ backend: open(), clock });
    await expect(challenges.consume("A".repeat(43))).rejects.toBeInstanceOf(AccessDeniedError);
    await expect(challenges.consume("short")).rejects.toBeInstanceOf(AccessDeniedError);
  });

  it("refuses a challenge after its TTL", async () => {
    const challenges = new IamChallenges({ backend: open(), clock, ttlMs: 30_000 });
    const { challenge } = await challenges.issue();
    clock.advance(30_001);
    await expect(challenges.consume(challenge)).rejects.toBeInstanceOf(AccessDeniedError);
  });

  it("lets exactly one of two replicas sharing the backend accept a challenge", async () => {
    const first = new IamChallenges({ backend: open(), clock });
    const second = new IamChallenges({ backend: open(), clock });
    for (let round = 0; round < 20; round++) {
      const { challenge } = await first.issue();
      const outcomes = await Promise.allSettled([
        first.consume(challenge),
        second.consume(challenge),
        second.consume(challenge),
      ]);
      expect(outcomes.filter((o) => o.status === "fulfilled")).toHaveLength(1);
      for (const o of outcomes)
        if (o.status === "rejected") expect(o.reason).toBeInstanceOf(AccessDeniedError);
    }
  });
});
