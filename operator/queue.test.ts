import { afterEach, describe, expect, it } from "vitest";
import { WorkQueue, type WorkQueueOptions } from "./queue.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(check: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("condition not reached in time");
    await sleep(5);
  }
}

const queues: WorkQueue[] = [];
function queue(opts: WorkQueueOptions): WorkQueue {
  const q = new WorkQueue(opts);
  queues.push(q);
  return q;
}
afterEach(async () => {
  await Promise.all(queues.splice(0).map((q) => q.stop()));
});

describe("WorkQueue", () => {
  it("deduplicates keys added while they wait", async () => {
    const seen: string[] = [];
    const q = queue({
      handler: async (key) => {
        seen.push(key);
        return undefined;
      },
    });
    q.add("a");
    q.add("a");
    q.add("b");
    q.add("a");
    q.start();
    await q.idle();
    expect(seen.sort()).toEqual(["a", "b"]);
  });

  it("never runs one key twice at once, and runs it again when re-added during processing", async () => {
    let active = 0;
    let maxActive = 0;
    let runs = 0;
    let release: (() => void) | undefined;
    const q = queue({
      concurrency: 4,
      handler: async () => {
        active++;
        maxActive = Math.max(maxActive, active);
        runs++;
        if (runs === 1) await new Promise<void>((r) => (release = r));
        active--;
        return undefined;
      },
    });
    q.start();
    q.add("k");
    await until(() => release !== undefined);
    q.add("k"); // dirty while processing
    q.add("k");
    await sleep(20);
    expect(active).toBe(1);
    release?.();
    await until(() => runs === 2);
    await q.idle();
    expect(maxActive).toBe(1);
    expect(runs).toBe(2);
  });

  it("processes different keys in parallel up to the concurrency", async () => {
    let active = 0;
    let maxActive = 0;
    const q = queue({
      concurrency: 3,
      handler: async () => {
        active++;
        maxActive = Math.max(maxActive, active);
        await sleep(30);
        active--;
        return undefined;
      },
    });
    for (const k of ["a", "b", "c", "d", "e"]) q.add(k);
    q.start();
    await q.idle();
    expect(maxActive).toBe(3);
  });

  it("retries failures with growing, capped backoff and forgets them after a success", async () => {
    let calls = 0;
    const delays: number[] = [];
    const q = queue({
      backoffBaseMs: 5,
      backoffMaxMs: 20,
      jitter: 0,
      onError: (_key, _err, failures, retryInMs) => delays.push(failures * 1000 + retryInMs),
      handler: async () => {
        calls++;
        if (calls <= 4) throw new Error("transient");
        return undefined;
      },
    });
    q.add("x");
    q.start();
    await until(() => calls === 5);
    expect(delays).toEqual([1005, 2010, 3020, 4020]);
    await until(() => q.failures("x") === 0);
  });

  it("spreads backoff delays with jitter within the configured fraction", () => {
    const low = new WorkQueue({
      handler: async () => undefined,
      backoffBaseMs: 100,
      jitter: 0.5,
      random: () => 0,
    });
    const high = new WorkQueue({
      handler: async () => undefined,
      backoffBaseMs: 100,
      backoffMaxMs: 10_000,
      jitter: 0.5,
      random: () => 0.999,
    });
    expect(low.backoffMs(3)).toBe(200); // 400 * 0.5
    expect(high.backoffMs(3)).toBeGreaterThan(590); // ~400 * 1.5
    expect(high.backoffMs(30)).toBe(10_000); // capped
  });

  it("requeues after the delay a handler asks for", async () => {
    let calls = 0;
    const q = queue({
      handler: async () => {
        calls++;
        return calls === 1 ? { requeueAfterMs: 20 } : undefined;
      },
    });
    q.add("t");
    q.start();
    await until(() => calls === 2);
    await sleep(60);
    expect(calls).toBe(2);
  });

  it("resync adds every known key periodically", async () => {
    const counts = new Map<string, number>();
    const q = queue({
      resyncMs: 15,
      resyncKeys: () => ["r1", "r2"],
      handler: async (key) => {
        counts.set(key, (counts.get(key) ?? 0) + 1);
        return undefined;
      },
    });
    q.start();
    await until(() => (counts.get("r1") ?? 0) >= 2 && (counts.get("r2") ?? 0) >= 2);
  });

  it("stop waits for running handlers and drops pending retries", async () => {
    let calls = 0;
    let finished = false;
    const q = queue({
      backoffBaseMs: 10,
      handler: async () => {
        calls++;
        await sleep(20);
        finished = true;
        throw new Error("fails");
      },
    });
    q.add("s");
    q.start();
    await until(() => calls === 1);
    await q.stop();
    expect(finished).toBe(true);
    await sleep(50);
    expect(calls).toBe(1);
    q.add("s");
    await sleep(20);
    expect(calls).toBe(1);
  });
});
