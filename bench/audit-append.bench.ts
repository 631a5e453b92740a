// Audit appends as auth makes them (one per certificate, login, session event): appendAudit on
// both backends, many callers at once and one at a time, against the same database driven raw in
// the same run: one single-row INSERT per event, each its own transaction, no layer of ours. The
// ratio is what group commit (core/backend/audit-batcher.ts) gains over writing each event alone.
// CPU per event: this thread (the backend's caller) and, on PostgreSQL, the server's processes.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import pg from "pg";
import type { AuditEventInput, Backend } from "../core/backend/backend.ts";
import { PostgresBackend } from "../core/backend/postgres.ts";
import { SqliteBackend } from "../core/backend/sqlite.ts";
import { systemClock } from "../core/clock.ts";
import { dropSchema, startPostgres, uniqueSchemaName } from "../test/harness/postgres.ts";
import { processTreeCpuMs } from "./proc-cpu.ts";
import type { BenchReport, BenchRow } from "./report.ts";

const CONCURRENT = 32;
const EVENTS = 20_000;
const ALONE_EVENTS = 2_000;
const ROUNDS = 3;

/** A certificate's event, as IssueUserCerts writes it. */
const event = (i: number): AuditEventInput => ({
  event_type: "cert.create",
  user_name: `user${i % 8}`,
  success: true,
  fields: {
    emitted_by: "user:bench",
    cert_type: "user",
    key_id: "user=bench session=0123456789abcdef",
    serial: String(i),
    principals: ["bench", "root"],
    valid_before: new Date().toISOString(),
    public_key_fingerprint: "SHA256:abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG",
  },
});

interface Measured {
  perSecond: number;
  cpuUs: number;
  dbCpuUs: number;
}

/** `total` appends from `lanes` concurrent callers; CPU of this thread and of `dbPid`'s tree. */
async function measure(
  total: number,
  lanes: number,
  dbPid: number | undefined,
  append: (i: number) => Promise<unknown> | unknown,
): Promise<Measured> {
  for (let i = 0; i < 200; i++) await append(i);
  let next = 0;
  const cpu = process.threadCpuUsage();
  const db = processTreeCpuMs(dbPid);
  const start = performance.now();
  await Promise.all(
    Array.from({ length: lanes }, async () => {
      while (next < total) await append(next++);
    }),
  );
  const ms = performance.now() - start;
  const used = process.threadCpuUsage(cpu);
  return {
    perSecond: total / (ms / 1000),
    cpuUs: (used.user + used.system) / total,
    dbCpuUs: ((processTreeCpuMs(dbPid) - db) * 1000) / total,
  };
}

const median = (xs: Measured[], k: keyof Measured): number =>
  [...xs.map((x) => x[k])].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;

function row(name: string, runs: Measured[]): BenchRow {
  const db = median(runs, "dbCpuUs");
  return {
    name,
    perSecond: median(runs, "perSecond"),
    unit: "events",
    note: `median of ${runs.length}, ${median(runs, "cpuUs").toFixed(1)} us CPU/event here${
      Number.isFinite(db) ? `, server ${db.toFixed(1)} us` : ""
    }`,
  };
}

const fieldsText = (i: number): string => JSON.stringify(event(i).fields);

export default async function bench(): Promise<BenchReport> {
  const dir = await mkdtemp(join(tmpdir(), "svc-audit-append-"));
  const server = await startPostgres();
  const schema = uniqueSchemaName("auditappend");
  const sqlite = new SqliteBackend({ path: join(dir, "ours.db"), clock: systemClock, sweepIntervalMs: 0 });
  const postgres = await PostgresBackend.open({
    connectionString: server.url,
    clock: systemClock,
    schema,
    sweepIntervalMs: 0,
  });
  // The raw side writes into copies of our own tables (same columns and indexes).
  const rawSqlite = new SqliteBackend({ path: join(dir, "raw.db"), clock: systemClock, sweepIntervalMs: 0 });
  await rawSqlite.close();
  const rawDb = new DatabaseSync(join(dir, "raw.db"));
  rawDb.exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL");
  const rawInsert = rawDb.prepare(
    "INSERT INTO audit_events (time, event_type, user_name, success, fields) VALUES (?, ?, ?, ?, ?)",
  );
  const rawSchema = uniqueSchemaName("auditraw");
  await (
    await PostgresBackend.open({ connectionString: server.url, clock: systemClock, schema: rawSchema })
  ).close();
  const pool = new pg.Pool({ connectionString: server.url, max: 10 });
  const rawPg = `INSERT INTO ${rawSchema}.audit_events (time, event_type, user_name, success, fields)
                 VALUES ($1, $2, $3, $4, $5) RETURNING id`;
  try {
    const ours = (b: Backend) => (i: number) => b.appendAudit(event(i));
    const cases: Array<
      [string, number, number, number | undefined, (i: number) => Promise<unknown> | unknown]
    > = [
      [`sqlite appendAudit, ${CONCURRENT} at once`, EVENTS, CONCURRENT, undefined, ours(sqlite)],
      [
        `sqlite raw INSERT per event, ${CONCURRENT} at once`,
        EVENTS,
        CONCURRENT,
        undefined,
        (i) => {
          const e = event(i);
          rawInsert.run(Date.now(), e.event_type, e.user_name, 1, fieldsText(i));
        },
      ],
      [`postgres appendAudit, ${CONCURRENT} at once`, EVENTS, CONCURRENT, server.pid, ours(postgres)],
      [
        `postgres raw INSERT per event, ${CONCURRENT} at once`,
        EVENTS,
        CONCURRENT,
        server.pid,
        (i) => {
          const e = event(i);
          return pool.query(rawPg, [Date.now(), e.event_type, e.user_name, true, fieldsText(i)]);
        },
      ],
      ["postgres appendAudit, one at a time", ALONE_EVENTS, 1, server.pid, ours(postgres)],
      [
        "postgres raw INSERT per event, one at a time",
        ALONE_EVENTS,
        1,
        server.pid,
        (i) => {
          const e = event(i);
          return pool.query(rawPg, [Date.now(), e.event_type, e.user_name, true, fieldsText(i)]);
        },
      ],
    ];
    const runs = cases.map((): Measured[] => []);
    // Interleaved rounds: the machine's mood changes over a run.
    for (let round = 0; round < ROUNDS; round++) {
      for (const [i, [, total, lanes, pid, append]] of cases.entries()) {
        runs[i]?.push(await measure(total, lanes, pid, append));
      }
    }
    const rate = (i: number): number => median(runs[i] ?? [], "perSecond");
    const cpu = (i: number): number =>
      median(runs[i] ?? [], "cpuUs") +
      (Number.isFinite(median(runs[i] ?? [], "dbCpuUs")) ? median(runs[i] ?? [], "dbCpuUs") : 0);
    return {
      title: "audit appends: group commit against one INSERT per event",
      rows: cases.map(([name], i) => row(name, runs[i] ?? [])),
      ratios: [
        { name: `sqlite appendAudit / raw INSERT, ${CONCURRENT} at once`, ratio: rate(0) / rate(1) },
        { name: `postgres appendAudit / raw INSERT, ${CONCURRENT} at once`, ratio: rate(2) / rate(3) },
        {
          name: `postgres CPU per event (here + server): raw / appendAudit, ${CONCURRENT} at once`,
          ratio: cpu(3) / cpu(2),
        },
        { name: "postgres appendAudit / raw INSERT, one at a time", ratio: rate(4) / rate(5) },
      ],
    };
  } finally {
    await sqlite.close();
    await postgres.close();
    rawDb.close();
    await pool.end();
    await dropSchema(server.url, schema).catch(() => undefined);
    await dropSchema(server.url, rawSchema).catch(() => undefined);
    await server.stop();
    await rm(dir, { recursive: true, force: true });
  }
}
