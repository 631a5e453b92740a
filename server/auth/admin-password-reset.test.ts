// Password-reset tokens on a real SQLite backend: one-time, hashed at rest, expiring, replaced by
// a newer token, and a bad password does not burn the token.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Backend } from "../../core/backend/backend.ts";
import { openBackend } from "../../core/backend/index.ts";
import { ManualClock } from "../../core/clock.ts";
import { PasswordResets, RESET_TOKEN_TTL_MS } from "./admin-password-reset.ts";
import { getPasswordHash, verifyPassword } from "./passwords.ts";

let dir: string;
let backend: Backend;
let clock: ManualClock;
let resets: PasswordResets;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "svc-resets-"));
  clock = new ManualClock(Date.now());
  backend = await openBackend({ type: "sqlite", path: join(dir, "state.db") }, { clock });
  resets = new PasswordResets({ backend, clock });
});
afterEach(async () => {
  await backend.close();
  await rm(dir, { recursive: true, force: true });
});

describe("PasswordResets", () => {
  it("sets the password once; the token is stored only as a hash", async () => {
    const r = await resets.issue("alice");
    expect(r.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const stored = JSON.stringify(await backend.range(""));
    expect(stored).not.toContain(r.token);
    expect(await resets.consume(r.token, "a-long-new-password")).toBe("alice");
    expect(await verifyPassword("a-long-new-password", (await getPasswordHash(backend, "alice")) ?? "")).toBe(
      true,
    );
    await expect(resets.consume(r.token, "another-long-password")).rejects.toThrow(/not valid/);
  });

  it("a too-short password is refused without spending the token", async () => {
    const r = await resets.issue("alice");
    await expect(resets.consume(r.token, "short")).rejects.toThrow(/at least 12/);
    expect(await resets.consume(r.token, "a-long-new-password")).toBe("alice");
  });

  it("expires after its TTL and is replaced by a newer token", async () => {
    const first = await resets.issue("alice");
    const second = await resets.issue("alice");
    await expect(resets.consume(first.token, "a-long-new-password")).rejects.toThrow(/not valid/);
    clock.advance(RESET_TOKEN_TTL_MS + 1000);
    await expect(resets.consume(second.token, "a-long-new-password")).rejects.toThrow(/not valid/);
  });

  it("concurrent consumers of one token: exactly one wins", async () => {
    const r = await resets.issue("alice");
    const outcomes = await Promise.allSettled(
      Array.from({ length: 5 }, (_, i) => resets.consume(r.token, `password-number-${i}-long`)),
    );
    expect(outcomes.filter((o) => o.status === "fulfilled")).toHaveLength(1);
  });

  it("malformed tokens are a bad parameter, unknown ones unauthenticated", async () => {
    await expect(resets.consume("", "a-long-new-password")).rejects.toMatchObject({ code: "bad_parameter" });
    await expect(resets.consume("A".repeat(43), "a-long-new-password")).rejects.toMatchObject({
      code: "not_authenticated",
    });
  });
});
