// The token buckets forget the least recently used key first, whether a key taken again was the
// last one taken (left where it is) or an older one (moved to the end).
import { describe, expect, it } from "vitest";
import { TokenBuckets } from "./session-rate-limit.ts";

describe("token buckets, recency", () => {
  it("a full table forgets the key taken longest ago; a forgotten key starts with a full bucket", () => {
    // One token each, no refill within the test: a refusal means the bucket was kept.
    const b = new TokenBuckets({ perSecond: 0.001, burst: 1, maxKeys: 2, now: () => 0 });
    expect(b.take("a")).toBe(0);
    expect(b.take("b")).toBe(0);
    expect(b.take("a")).toBeGreaterThan(0); // a moves after b
    expect(b.take("a")).toBeGreaterThan(0); // a is the last already
    expect(b.take("c")).toBe(0); // forgets b
    expect(b.take("a")).toBeGreaterThan(0); // a was kept
    expect(b.take("b")).toBe(0); // b starts full again; forgets c
    expect(b.take("c")).toBe(0); // c starts full again; forgets a
    expect(b.take("b")).toBeGreaterThan(0); // b was kept
    expect(b.take("a")).toBe(0); // a was forgotten
    expect(b.size).toBe(2);
  });
});
