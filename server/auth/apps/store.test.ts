// The app-session store's per-user bounds on a real SQLite backend: pending one-time codes are
// capped (a script asking in a loop is refused, spent codes free their place), and app sessions
// past the cap end the user's oldest with reason "limit", never another user's.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Backend, openBackend } from "../../../core/backend/index.ts";
import { ManualClock } from "../../../core/clock.ts";
import { LimitExceededError } from "../../../core/errors.ts";
import {
  AppSessionStore,
  type AppSessionSubject,
  type EndReason,
  MAX_PENDING_CODES_PER_USER,
  MAX_SESSIONS_PER_USER,
} from "./store.ts";

const clock = new ManualClock(Date.now());
let dir: string;
let backend: Backend;
let store: AppSessionStore;
const ended: Array<{ user: string; reason: EndReason; created: number }> = [];

const subject = (username: string): AppSessionSubject => ({
  username,
  roles: ["dev"],
  traits: {},
  app: "grafana",
  publicAddr: "grafana.localhost",
  webSessionHash: "w".repeat(64),
  expires: new Date(clock.now().getTime() + 3_600_000),
});

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "svc-app-store-"));
  backend = await openBackend({ type: "sqlite", path: join(dir, "state.db") }, { clock });
  store = new AppSessionStore({
    backend,
    clock,
    onEnded: async (s, reason) => {
      ended.push({ user: s.username, reason, created: s.created.getTime() });
    },
  });
});

afterAll(async () => {
  await backend?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("AppSessionStore bounds", () => {
  it("refuses a user's code past the pending cap until one is spent or expires; others unaffected", async () => {
    const codes: string[] = [];
    for (let i = 0; i < MAX_PENDING_CODES_PER_USER; i++)
      codes.push((await store.createCode(subject("ana"))).code);
    await expect(store.createCode(subject("ana"))).rejects.toBeInstanceOf(LimitExceededError);
    await store.createCode(subject("bob"));
    // a spent code frees its place
    await store.exchange(codes[0] ?? "", "grafana.localhost", async () => true);
    await store.createCode(subject("ana"));
    await expect(store.createCode(subject("ana"))).rejects.toBeInstanceOf(LimitExceededError);
    // and so does time (codes live 60 s)
    clock.advance(61_000);
    await store.createCode(subject("ana"));
  });

  it("ends the user's oldest app session past the session cap (reason limit)", async () => {
    ended.length = 0;
    const first = (await store.ofUser("ana")).length;
    for (let i = first; i < MAX_SESSIONS_PER_USER; i++) {
      clock.advance(1);
      const { code } = await store.createCode(subject("ana"));
      await store.exchange(code, "grafana.localhost", async () => true);
    }
    expect(await store.ofUser("ana")).toHaveLength(MAX_SESSIONS_PER_USER);
    expect(ended).toEqual([]);
    const oldest = Math.min(...(await store.ofUser("ana")).map((s) => s.created.getTime()));
    clock.advance(1);
    const { code } = await store.createCode(subject("ana"));
    await store.exchange(code, "grafana.localhost", async () => true);
    expect(await store.ofUser("ana")).toHaveLength(MAX_SESSIONS_PER_USER);
    expect(ended).toEqual([{ user: "ana", reason: "limit", created: oldest }]);
  });
});
