// One behavioural suite for every Backend implementation: each implementation's test file calls
// backendConformance with a factory, so SQLite and PostgreSQL are held to the same contract.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ManualClock } from "../clock.ts";
import { AlreadyExistsError, BadParameterError, CompareFailedError, NotFoundError } from "../errors.ts";
import type { JsonValue } from "../json.ts";
import type { Backend } from "./backend.ts";

export interface ConformanceTarget {
  backend: Backend;
  /** Runs after backend.close(), e.g. to drop a per-test schema. */
  cleanup?: () => Promise<void>;
}

/** The factory must return an empty backend whose clock is the given one. */
export type ConformanceFactory = (clock: ManualClock) => Promise<ConformanceTarget>;

const T0 = Date.UTC(2026, 0, 1, 12, 0, 0);

export function backendConformance(name: string, open: ConformanceFactory): void {
  describe(`${name} backend conformance`, () => {
    let clock: ManualClock;
    let b: Backend;
    let cleanup: (() => Promise<void>) | undefined;

    beforeEach(async () => {
      clock = new ManualClock(T0);
      const target = await open(clock);
      b = target.backend;
      cleanup = target.cleanup;
    });

    afterEach(async () => {
      await b.close();
      await cleanup?.();
    });

    describe("get, put, create", () => {
      it("get of a missing key is NotFoundError", async () => {
        await expect(b.get("/missing")).rejects.toBeInstanceOf(NotFoundError);
      });

      it("round-trips every kind of JSON value", async () => {
        const values: JsonValue[] = [
          { nested: { list: [1, "two", null, true], empty: {} }, unicode: "héllo ✓ 😀", nul: "a\u0000b" },
          [1, 2, 3],
          "plain string",
          42.5,
          0,
          false,
          null,
        ];
        for (const [i, v] of values.entries()) {
          const put = await b.put(`/values/${i}`, v);
          expect(put.value).toEqual(v);
          expect((await b.get(`/values/${i}`)).value).toEqual(v);
        }
      });

      it("put replaces and every write gets a larger revision from one global sequence", async () => {
        const a1 = await b.put("/a", 1);
        const other = await b.put("/other", "x");
        const a2 = await b.put("/a", 2);
        expect(other.revision).toBeGreaterThan(a1.revision);
        expect(a2.revision).toBeGreaterThan(other.revision);
        const got = await b.get("/a");
        expect(got).toEqual({ key: "/a", value: 2, revision: a2.revision });
      });

      it("create succeeds once, then AlreadyExistsError without changing the value", async () => {
        const first = await b.create("/c", { v: 1 });
        expect(first.value).toEqual({ v: 1 });
        await expect(b.create("/c", { v: 2 })).rejects.toBeInstanceOf(AlreadyExistsError);
        expect(await b.get("/c")).toEqual(first);
      });

      it("createAll writes every item or none", async () => {
        const made = await b.createAll([
          { key: "/all/a", value: 1 },
          { key: "/all/b", value: 2, opts: { ttlMs: 1000 } },
        ]);
        expect(made.map((i) => i.value)).toEqual([1, 2]);
        expect(made[1]?.revision).toBeGreaterThan(made[0]?.revision ?? Infinity);
        expect((await b.get("/all/b")).expires).toEqual(new Date(T0 + 1000));
        // One existing key refuses the whole batch; the keys before it are not written.
        await expect(
          b.createAll([
            { key: "/all/c", value: 3 },
            { key: "/all/a", value: 9 },
          ]),
        ).rejects.toBeInstanceOf(AlreadyExistsError);
        await expect(b.get("/all/c")).rejects.toBeInstanceOf(NotFoundError);
        expect((await b.get("/all/a")).value).toBe(1);
        // An expired item counts as absent.
        clock.advance(1000);
        await b.createAll([{ key: "/all/b", value: 3 }]);
        expect((await b.get("/all/b")).value).toBe(3);
        await expect(b.createAll([])).rejects.toBeInstanceOf(BadParameterError);
        await expect(
          b.createAll([
            { key: "/all/d", value: 1 },
            { key: "/all/d", value: 2 },
          ]),
        ).rejects.toBeInstanceOf(BadParameterError);
      });
    });

    describe("compare-and-swap and delete", () => {
      it("swaps only at the expected revision", async () => {
        const v1 = await b.create("/cas", 1);
        const v2 = await b.compareAndSwap("/cas", v1.revision, 2);
        expect(v2.value).toBe(2);
        expect(v2.revision).toBeGreaterThan(v1.revision);
        await expect(b.compareAndSwap("/cas", v1.revision, 3)).rejects.toBeInstanceOf(CompareFailedError);
        expect(await b.get("/cas")).toEqual(v2);
      });

      it("swap of a missing key is NotFoundError", async () => {
        await expect(b.compareAndSwap("/nope", 1, 1)).rejects.toBeInstanceOf(NotFoundError);
      });

      it("delete removes; a second delete is NotFoundError", async () => {
        await b.put("/d", 1);
        await b.delete("/d");
        await expect(b.get("/d")).rejects.toBeInstanceOf(NotFoundError);
        await expect(b.delete("/d")).rejects.toBeInstanceOf(NotFoundError);
      });

      it("compareAndDelete deletes only at the expected revision", async () => {
        const v1 = await b.put("/cd", 1);
        const v2 = await b.put("/cd", 2);
        await expect(b.compareAndDelete("/cd", v1.revision)).rejects.toBeInstanceOf(CompareFailedError);
        expect(await b.get("/cd")).toEqual(v2);
        await b.compareAndDelete("/cd", v2.revision);
        await expect(b.get("/cd")).rejects.toBeInstanceOf(NotFoundError);
        await expect(b.compareAndDelete("/cd", v2.revision)).rejects.toBeInstanceOf(NotFoundError);
      });

      it("a deleted and re-created key starts a new revision", async () => {
        const v1 = await b.create("/re", 1);
        await b.delete("/re");
        const v2 = await b.create("/re", 1);
        expect(v2.revision).toBeGreaterThan(v1.revision);
        await expect(b.compareAndSwap("/re", v1.revision, 2)).rejects.toBeInstanceOf(CompareFailedError);
      });
    });

    describe("range and deleteRange", () => {
      beforeEach(async () => {
        for (const k of ["/a/2", "/a/1", "/a/3", "/a0", "/ab", "/a", "/b/1"]) await b.put(k, k);
      });

      it("returns exactly the keys under the prefix, ordered by key", async () => {
        const keys = (await b.range("/a/")).map((i) => i.key);
        expect(keys).toEqual(["/a/1", "/a/2", "/a/3"]);
        expect((await b.range("/a")).map((i) => i.key)).toEqual(["/a", "/a/1", "/a/2", "/a/3", "/a0", "/ab"]);
        expect(await b.range("/zzz")).toEqual([]);
        expect((await b.range("")).length).toBe(7);
      });

      it("honours the limit", async () => {
        expect((await b.range("/a/", { limit: 2 })).map((i) => i.key)).toEqual(["/a/1", "/a/2"]);
      });

      it("orders non-ASCII keys by code point and handles the largest code point in a prefix", async () => {
        const astral = "/u/\u{1F600}";
        const bmp = "/u/\uFFFD";
        const top = "/u/\u{10FFFF}x";
        await b.put(astral, 1);
        await b.put(bmp, 2);
        await b.put(top, 3);
        await b.put("/u/\u00e9", 4);
        expect((await b.range("/u/")).map((i) => i.key)).toEqual(["/u/\u00e9", bmp, astral, top]);
        expect((await b.range("/u/\u{10FFFF}")).map((i) => i.key)).toEqual([top]);
      });

      it("deleteRange removes only the prefix and says how many", async () => {
        expect(await b.deleteRange("/a/")).toBe(3);
        expect((await b.range("/")).map((i) => i.key)).toEqual(["/a", "/a0", "/ab", "/b/1"]);
        expect(await b.deleteRange("/a/")).toBe(0);
      });

      it("deleteRange refuses the empty prefix", async () => {
        await expect(b.deleteRange("")).rejects.toBeInstanceOf(BadParameterError);
        expect((await b.range("")).length).toBe(7);
      });
    });

    describe("TTL", () => {
      it("an item is visible until its expiry, then gone from get and range", async () => {
        const item = await b.put("/ttl/x", 1, { ttlMs: 10_000 });
        expect(item.expires).toEqual(new Date(T0 + 10_000));
        clock.advance(9_999);
        expect((await b.get("/ttl/x")).expires).toEqual(new Date(T0 + 10_000));
        expect(await b.range("/ttl/")).toHaveLength(1);
        clock.advance(1);
        await expect(b.get("/ttl/x")).rejects.toBeInstanceOf(NotFoundError);
        expect(await b.range("/ttl/")).toEqual([]);
      });

      it("an absolute expiry wins over ttlMs", async () => {
        const at = new Date(T0 + 5_000);
        const item = await b.put("/ttl/abs", 1, { ttlMs: 60_000, expires: at });
        expect(item.expires).toEqual(at);
      });

      it("expired items count as absent for create, swap and delete", async () => {
        const old = await b.create("/ttl/k", "old", { ttlMs: 1_000 });
        clock.advance(1_000);
        await expect(b.compareAndSwap("/ttl/k", old.revision, "x")).rejects.toBeInstanceOf(NotFoundError);
        await expect(b.compareAndDelete("/ttl/k", old.revision)).rejects.toBeInstanceOf(NotFoundError);
        await expect(b.delete("/ttl/k")).rejects.toBeInstanceOf(NotFoundError);
        const fresh = await b.create("/ttl/k", "new");
        expect(fresh.value).toBe("new");
        expect(fresh.expires).toBeUndefined();
        expect(await b.get("/ttl/k")).toEqual(fresh);
      });

      it("a write without TTL clears an earlier expiry; a swap can set one", async () => {
        const a = await b.put("/ttl/p", 1, { ttlMs: 1_000 });
        const c = await b.compareAndSwap("/ttl/p", a.revision, 2);
        expect(c.expires).toBeUndefined();
        const d = await b.compareAndSwap("/ttl/p", c.revision, 3, { ttlMs: 500 });
        expect(d.expires).toEqual(new Date(T0 + 500));
        clock.advance(2_000);
        await expect(b.get("/ttl/p")).rejects.toBeInstanceOf(NotFoundError);
      });

      it("sweepExpired removes only expired items and counts them", async () => {
        await b.put("/s/1", 1, { ttlMs: 1_000 });
        await b.put("/s/2", 2, { ttlMs: 1_000 });
        await b.put("/s/3", 3, { ttlMs: 5_000 });
        await b.put("/s/4", 4);
        expect(await b.sweepExpired()).toBe(0);
        clock.advance(1_000);
        expect(await b.sweepExpired()).toBe(2);
        expect(await b.sweepExpired()).toBe(0);
        expect((await b.range("/s/")).map((i) => i.key)).toEqual(["/s/3", "/s/4"]);
      });

      it("deleteRange counts only visible items", async () => {
        await b.put("/dr/1", 1, { ttlMs: 1_000 });
        await b.put("/dr/2", 2);
        clock.advance(1_000);
        expect(await b.deleteRange("/dr/")).toBe(1);
        expect(await b.sweepExpired()).toBe(0);
      });
    });

    describe("audit", () => {
      it("appends with the clock's time and an id, and round-trips every field", async () => {
        const e = await b.appendAudit({
          event_type: "user.login",
          user_name: "alice",
          success: false,
          fields: { method: "local", nested: { n: 1 } },
        });
        expect(e.time).toEqual(new Date(T0));
        expect(typeof e.id).toBe("string");
        expect(e.id.length).toBeGreaterThan(0);
        const page = await b.searchAudit({ limit: 10, offset: 0 });
        expect(page).toEqual({ items: [e], totalCount: 1 });
        expect(page.items[0]?.success).toBe(false);
        const plain = await b.appendAudit({ event_type: "x", user_name: "" });
        expect(plain.success).toBeUndefined();
        expect(plain.fields).toEqual({});
      });

      describe("queries", () => {
        beforeEach(async () => {
          // 30 events, one second apart: types cycle a/b/c, users cycle u0..u4.
          for (let i = 0; i < 30; i++) {
            await b.appendAudit({
              event_type: `type.${"abc"[i % 3]}`,
              user_name: `u${i % 5}`,
              fields: { i },
              time: new Date(T0 + i * 1_000),
            });
          }
        });

        const indexes = (page: { items: Array<{ fields: { [k: string]: JsonValue } }> }): JsonValue[] =>
          page.items.map((e) => e.fields["i"] ?? null);

        it("returns newest first with the total count", async () => {
          const page = await b.searchAudit({ limit: 5, offset: 0 });
          expect(page.totalCount).toBe(30);
          expect(indexes(page)).toEqual([29, 28, 27, 26, 25]);
        });

        it("pages with limit and offset", async () => {
          const p2 = await b.searchAudit({ limit: 5, offset: 5 });
          expect(indexes(p2)).toEqual([24, 23, 22, 21, 20]);
          expect(p2.totalCount).toBe(30);
          const last = await b.searchAudit({ limit: 500, offset: 28 });
          expect(indexes(last)).toEqual([1, 0]);
          const beyond = await b.searchAudit({ limit: 10, offset: 100 });
          expect(beyond).toEqual({ items: [], totalCount: 30 });
        });

        it("filters by type and user, combined", async () => {
          const byType = await b.searchAudit({ type: "type.a", limit: 500, offset: 0 });
          expect(byType.totalCount).toBe(10);
          expect(byType.items.every((e) => e.event_type === "type.a")).toBe(true);
          const byUser = await b.searchAudit({ user: "u1", limit: 500, offset: 0 });
          expect(indexes(byUser)).toEqual([26, 21, 16, 11, 6, 1]);
          const both = await b.searchAudit({ type: "type.b", user: "u1", limit: 500, offset: 0 });
          expect(indexes(both)).toEqual([16, 1]);
          expect(both.totalCount).toBe(2);
          expect(await b.searchAudit({ type: "type.z", limit: 5, offset: 0 })).toEqual({
            items: [],
            totalCount: 0,
          });
        });

        it("filters by a time window: start inclusive, end exclusive", async () => {
          const page = await b.searchAudit({
            startTime: new Date(T0 + 10_000),
            endTime: new Date(T0 + 15_000),
            limit: 500,
            offset: 0,
          });
          expect(indexes(page)).toEqual([14, 13, 12, 11, 10]);
          expect(page.totalCount).toBe(5);
          const since = await b.searchAudit({ startTime: new Date(T0 + 27_000), limit: 500, offset: 0 });
          expect(indexes(since)).toEqual([29, 28, 27]);
        });

        it("orders events with the same time by insertion, newest first", async () => {
          const x = await b.appendAudit({ event_type: "tie", user_name: "t", time: new Date(T0) });
          const y = await b.appendAudit({ event_type: "tie", user_name: "t", time: new Date(T0) });
          const page = await b.searchAudit({ type: "tie", limit: 10, offset: 0 });
          expect(page.items.map((e) => e.id)).toEqual([y.id, x.id]);
        });
      });
    });

    describe("notifications", () => {
      /** Polls (bounded) until `ok`: delivery crosses a connection on PostgreSQL. */
      const eventually = async (ok: () => boolean): Promise<boolean> => {
        for (let i = 0; i < 200 && !ok(); i++) await new Promise((r) => setTimeout(r, 10));
        return ok();
      };

      it("a subscriber listens, gets its channel's payloads in order and no other channel's", async () => {
        const got: string[] = [];
        const other: string[] = [];
        let listening = false;
        const off = await b.subscribe("feed_a", {
          message: (p) => got.push(p),
          listening: (on) => {
            listening = on;
          },
        });
        const offOther = await b.subscribe("feed_b", { message: (p) => other.push(p) });
        expect(listening).toBe(true);
        await b.publish("feed_a", "one");
        await b.publish("feed_a", '{"two":"é"}');
        await b.publish("feed_c", "nobody");
        expect(await eventually(() => got.length === 2)).toBe(true);
        expect(got).toEqual(["one", '{"two":"é"}']);
        expect(other).toEqual([]);
        await off();
        await b.publish("feed_a", "after");
        await b.publish("feed_b", "b");
        expect(await eventually(() => other.length === 1)).toBe(true);
        expect(got).toEqual(["one", '{"two":"é"}']);
        await offOther();
      });

      it("refuses a bad channel name and an oversized payload", async () => {
        await expect(b.publish("Bad-Name", "x")).rejects.toBeInstanceOf(BadParameterError);
        await expect(b.subscribe("", { message: () => {} })).rejects.toBeInstanceOf(BadParameterError);
        await expect(b.publish("ok", "x".repeat(8_000))).rejects.toBeInstanceOf(BadParameterError);
      });
    });

    describe("bad input is BadParameterError", () => {
      it("keys", async () => {
        for (const key of ["", "a\u0000b", "x".repeat(1025), "\uD800"]) {
          await expect(b.get(key)).rejects.toBeInstanceOf(BadParameterError);
          await expect(b.put(key, 1)).rejects.toBeInstanceOf(BadParameterError);
          await expect(b.create(key, 1)).rejects.toBeInstanceOf(BadParameterError);
          await expect(b.delete(key)).rejects.toBeInstanceOf(BadParameterError);
        }
        const longest = "k".repeat(1024);
        expect((await b.put(longest, 1)).key).toBe(longest);
      });

      it("revisions, values and expiry", async () => {
        const item = await b.put("/bad", 1);
        for (const rev of [0, -1, 1.5, Number.NaN]) {
          await expect(b.compareAndSwap("/bad", rev, 2)).rejects.toBeInstanceOf(BadParameterError);
          await expect(b.compareAndDelete("/bad", rev)).rejects.toBeInstanceOf(BadParameterError);
        }
        await expect(b.put("/bad", undefined as unknown as JsonValue)).rejects.toBeInstanceOf(
          BadParameterError,
        );
        for (const ttlMs of [0, -5, Number.NaN, Number.POSITIVE_INFINITY]) {
          await expect(b.put("/bad", 2, { ttlMs })).rejects.toBeInstanceOf(BadParameterError);
        }
        await expect(b.put("/bad", 2, { expires: new Date(T0) })).rejects.toBeInstanceOf(BadParameterError);
        await expect(b.put("/bad", 2, { expires: new Date(Number.NaN) })).rejects.toBeInstanceOf(
          BadParameterError,
        );
        await expect(b.range("/", { limit: 0 })).rejects.toBeInstanceOf(BadParameterError);
        expect(await b.get("/bad")).toEqual(item);
      });

      it("audit queries and events", async () => {
        for (const limit of [0, -1, 501, 2.5]) {
          await expect(b.searchAudit({ limit, offset: 0 })).rejects.toBeInstanceOf(BadParameterError);
        }
        await expect(b.searchAudit({ limit: 10, offset: -1 })).rejects.toBeInstanceOf(BadParameterError);
        await expect(
          b.searchAudit({ limit: 10, offset: 0, startTime: new Date(T0 + 1), endTime: new Date(T0) }),
        ).rejects.toBeInstanceOf(BadParameterError);
        await expect(b.appendAudit({ event_type: "", user_name: "u" })).rejects.toBeInstanceOf(
          BadParameterError,
        );
        await expect(
          b.appendAudit({
            event_type: "x",
            user_name: "u",
            fields: [] as unknown as { [k: string]: JsonValue },
          }),
        ).rejects.toBeInstanceOf(BadParameterError);
        expect((await b.searchAudit({ limit: 500, offset: 0 })).totalCount).toBe(0);
      });
    });
  });
}
