// The lock service on a memory resource source (also its writer): what is in force as the clock
// moves, the change notifications, and sweeping by several replicas at once.
import pino from "pino";
import { describe, expect, it, vi } from "vitest";
import { ManualClock, systemClock } from "../../core/clock.ts";
import { API_VERSION, type Lock } from "../../core/resources/index.ts";
import { MemorySource } from "../../core/sources/memory.ts";
import { LockService } from "./locks.ts";

const logger = pino({ level: "silent" });
const audit = async () => undefined;
const lockResource = (name: string, expires?: string): Lock => ({
  apiVersion: API_VERSION,
  kind: "Lock",
  metadata: { name },
  spec: { target: { user: name }, ...(expires ? { expires } : {}) },
});

describe("LockService", () => {
  it("counts a lock until its expiry, then not; several replicas sweep it without errors", async () => {
    const clock = new ManualClock(new Date("2026-06-01T00:00:00Z"));
    const source = new MemorySource([lockResource("a", "2026-06-01T01:00:00Z"), lockResource("b")]);
    const warn = vi.fn();
    const replicas = [1, 2, 3].map(
      () =>
        new LockService({
          source,
          writer: source,
          clock,
          logger: { ...logger, warn, info: () => undefined } as unknown as typeof logger,
          audit,
        }),
    );
    const [one] = replicas;
    expect(one?.inForce().map((l) => l.name)).toEqual(["a", "b"]);
    expect(one?.covering({ user: "a" })?.name).toBe("a");
    clock.advance(3600_000);
    expect(one?.inForce().map((l) => l.name)).toEqual(["b"]);
    expect(one?.covering({ user: "a" })).toBeUndefined();
    await Promise.all(replicas.map((r) => r.sweep()));
    expect(source.get("Lock", "a")).toBeUndefined();
    expect(source.get("Lock", "b")).toBeDefined();
    expect(warn).not.toHaveBeenCalled();
    for (const r of replicas) r.close();
  });

  it("tells listeners when a Lock is written, removed, and when one expires", async () => {
    const source = new MemorySource([]);
    const locks = new LockService({ source, writer: source, clock: systemClock, logger, audit });
    const changes = vi.fn();
    locks.onChange(changes);
    await source.apply(lockResource("soon", new Date(Date.now() + 150).toISOString()));
    expect(changes).toHaveBeenCalledTimes(1);
    expect(locks.inForce().map((l) => l.name)).toEqual(["soon"]);
    // Nothing else changes meanwhile: the next call is the expiry timer.
    await vi.waitFor(() => expect(changes.mock.calls.length).toBeGreaterThanOrEqual(2), { timeout: 2000 });
    expect(locks.inForce()).toEqual([]);
    // The expiry timer also swept it.
    await vi.waitFor(() => expect(source.get("Lock", "soon")).toBeUndefined());
    await source.apply(lockResource("other"));
    await source.remove("Lock", "other");
    const before = changes.mock.calls.length;
    await source.apply(lockResource("third"));
    expect(changes.mock.calls.length).toBe(before + 1);
    locks.close();
  });
});
