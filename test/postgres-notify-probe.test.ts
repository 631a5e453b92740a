// The PostgreSQL listener behind WatchSessions (core/backend/postgres-notify.ts): a LISTEN
// connection that goes quiet without an error (a half-open TCP link, a stalled network path) hears
// no more notifications, so auth would keep vouching for its proxies' session caches while missing
// other replicas' revocations. It must notice within its probe interval, tell subscribers
// (listening false: they end their streams), and listen again once PostgreSQL is reachable.
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PostgresNotifier } from "../core/backend/postgres-notify.ts";
import { waitFor } from "./cli-fixture.ts";
import { testPostgresUrl, uniqueSchemaName } from "./harness/postgres.ts";
import { startTcpGate, type TcpGate } from "./harness/tcp-gate.ts";

const url = testPostgresUrl();

describe("PostgreSQL notifications: a stalled listening connection", () => {
  let gate: TcpGate;
  let notifier: PostgresNotifier;
  const schema = uniqueSchemaName("probe");

  beforeAll(async () => {
    const u = new URL(url);
    gate = await startTcpGate(Number(u.port), u.hostname);
    u.port = String(gate.port);
    notifier = new PostgresNotifier(u.toString(), schema, { probeMs: 300 });
  });

  afterAll(async () => {
    await notifier.close();
    await gate.close();
  });

  it("is given up (listening false) and listens again when the path is back", async () => {
    const states: boolean[] = [];
    const messages: string[] = [];
    await notifier.subscribe("svc_probe", {
      message: (m) => messages.push(m),
      listening: (on) => states.push(on),
    });
    await waitFor(() => states.at(-1) === true, "listening", 10_000);
    const publisher = new pg.Client({ connectionString: url });
    await publisher.connect();
    try {
      await publisher.query("SELECT pg_notify($1, $2)", [notifier.pgChannel("svc_probe"), "one"]);
      await waitFor(() => messages.includes("one"), "first notification", 10_000);

      gate.mode("stall");
      await waitFor(() => states.at(-1) === false, "the stalled listener given up", 10_000);

      gate.mode("open");
      await waitFor(() => states.at(-1) === true, "listening again", 15_000);
      await publisher.query("SELECT pg_notify($1, $2)", [notifier.pgChannel("svc_probe"), "two"]);
      await waitFor(() => messages.includes("two"), "notification after the stall", 10_000);
      // Each change told once: listening, lost, listening again.
      expect(states.filter((on, i) => i === 0 || on !== states[i - 1])).toEqual([true, false, true]);
    } finally {
      await publisher.end();
    }
  });
});
