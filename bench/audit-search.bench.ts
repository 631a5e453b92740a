// Audit search over 1,000,000 events, in SQLite and in PostgreSQL: the console's filtered page
// (event type + user + a 7-day range, newest first, limit 50, with its total count) through the
// backend's searchAudit, against the same query as a full scan of the same store in the same run
// (SQLite: NOT INDEXED; PostgreSQL: index and bitmap scans switched off for the transaction).
// The store starts at schema version 2 (before the type+user+time index), is bulk-loaded in one
// transaction (SQLite) or 50,000-row INSERT ... unnest batches (PostgreSQL), and is then opened
// by the backend, which upgrades it in place: the migration's time is reported too.
// SVC_BENCH_AUDIT_EVENTS sets the event count (default 1,000,000).
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync, type SQLInputValue } from "node:sqlite";
import pg from "pg";
import type { AuditQuery, Backend } from "../core/backend/backend.ts";
import { PostgresBackend } from "../core/backend/postgres.ts";
import { SqliteBackend } from "../core/backend/sqlite.ts";
import { systemClock } from "../core/clock.ts";
import { createPostgresAtVersion, createSqliteAtVersion } from "../test/harness/backend-old-schema.ts";
import { startPostgres, uniqueSchemaName } from "../test/harness/postgres.ts";
import type { BenchRatio, BenchReport, BenchRow } from "./report.ts";
import { percentile } from "./report.ts";

const EVENTS = Number(process.env.SVC_BENCH_AUDIT_EVENTS ?? 1_000_000);
const DAYS = 90;
const DAY_MS = 86_400_000;
const QUERIES = 300;
const SCAN_QUERIES = 12;
const GOAL_P99_MS = 20;
const PAGE = 50;

// Event types with the weights a busy cluster shows: logins and session traffic dominate.
const TYPES: Array<[string, number]> = [
  ["session.start", 30],
  ["session.end", 30],
  ["session.data", 20],
  ["user.login", 25],
  ["user.logout", 10],
  ["cert.create", 25],
  ["exec", 15],
  ["scp", 4],
  ["port_forward", 3],
  ["node.join", 2],
  ["node.renew", 6],
  ["node.delete", 0.3],
  ["user.create", 0.3],
  ["user.update", 0.5],
  ["user.delete", 0.1],
  ["role.update", 0.2],
  ["lock.create", 0.1],
  ["lock.delete", 0.1],
  ["join_token.create", 0.5],
  ["sso.login", 8],
  ["mfa.register", 0.2],
  ["recording.upload", 15],
  ["access.denied", 3],
  ["password.change", 0.2],
];
const USERS = 500;

/** Deterministic PRNG (mulberry32): every run loads the same events. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function weighted<T>(items: Array<[T, number]>): (r: number) => T {
  const total = items.reduce((s, [, w]) => s + w, 0);
  const cum: number[] = [];
  let acc = 0;
  for (const [, w] of items) {
    acc += w / total;
    cum.push(acc);
  }
  return (r) => {
    let lo = 0;
    let hi = cum.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((cum[mid] as number) < r) lo = mid + 1;
      else hi = mid;
    }
    return (items[lo] as [T, number])[0];
  };
}

interface Events {
  time: Float64Array;
  type: string[];
  user: string[];
  success: Array<number | null>;
  fields: string[];
  t0: number;
}

/** Events in time order over DAYS days; users follow a Zipf-like spread (a few very busy). */
function generate(n: number): Events {
  const r = rng(17);
  const pickType = weighted(TYPES);
  const pickUser = weighted(
    Array.from({ length: USERS }, (_, i): [string, number] => [`user${i}`, 1 / (i + 1) ** 0.9]),
  );
  const t0 = Date.UTC(2026, 0, 1);
  const step = (DAYS * DAY_MS) / n;
  const ev: Events = { time: new Float64Array(n), type: [], user: [], success: [], fields: [], t0 };
  for (let i = 0; i < n; i++) {
    ev.time[i] = Math.floor(t0 + i * step + r() * step);
    const type = pickType(r());
    ev.type.push(type);
    ev.user.push(pickUser(r()));
    const s = r();
    ev.success.push(s < 0.1 ? 0 : s < 0.8 ? 1 : null);
    const node = Math.floor(r() * 10_000);
    ev.fields.push(
      JSON.stringify({
        node: `node-${node}`,
        addr: `10.${node >> 8}.${node & 255}.7:22`,
        emitted_by: "auth",
      }),
    );
  }
  return ev;
}

interface Query {
  type?: string;
  user?: string;
  start: number;
  end: number;
}

/** Filters people search for: the type and user of a real event, a range around it. */
function queries(ev: Events, n: number, kind: "type+user" | "time" | "all"): Query[] {
  const r = rng(99 + kind.length);
  return Array.from({ length: n }, () => {
    const j = Math.floor(r() * ev.type.length);
    const at = ev.time[j] as number;
    if (kind === "all") return { start: ev.t0 - DAY_MS, end: ev.t0 + (DAYS + 1) * DAY_MS };
    if (kind === "time") return { start: at - DAY_MS / 2, end: at + DAY_MS / 2 };
    const end = at + Math.floor(r() * 3 * DAY_MS);
    return { type: ev.type[j] as string, user: ev.user[j] as string, start: end - 7 * DAY_MS, end };
  });
}

function toAuditQuery(q: Query): AuditQuery {
  return {
    ...(q.type !== undefined ? { type: q.type } : {}),
    ...(q.user !== undefined ? { user: q.user } : {}),
    startTime: new Date(q.start),
    endTime: new Date(q.end),
    limit: PAGE,
    offset: 0,
  };
}

async function timed<T>(qs: T[], run: (q: T) => Promise<number>): Promise<{ ms: number[]; count: number }> {
  const ms: number[] = [];
  let count = 0;
  for (const q of qs) {
    const t = performance.now();
    count += await run(q);
    ms.push(performance.now() - t);
  }
  return { ms, count: count / Math.max(1, qs.length) };
}

function row(name: string, m: { ms: number[]; count: number }, note = ""): BenchRow {
  return {
    name,
    p50Ms: percentile(m.ms, 50),
    p99Ms: percentile(m.ms, 99),
    note: `${m.ms.length} queries, mean total_count ${Math.round(m.count)}${note ? `; ${note}` : ""}`,
  };
}

/** WHERE clause with `?` placeholders, in the order the backends build it. */
function where(q: Query): { cond: string; params: Array<string | number> } {
  const c: string[] = [];
  const params: Array<string | number> = [];
  if (q.type !== undefined) {
    c.push("event_type = ?");
    params.push(q.type);
  }
  if (q.user !== undefined) {
    c.push("user_name = ?");
    params.push(q.user);
  }
  c.push("time >= ?", "time < ?");
  params.push(q.start, q.end);
  return { cond: `WHERE ${c.join(" AND ")}`, params };
}

interface Side {
  label: string;
  migrationMs: number;
  loadMs: number;
  backend: Backend;
  /** the same query as a full scan of the table, returning total_count */
  fullScan(q: Query): Promise<number>;
  close(): Promise<void>;
}

async function measureSide(side: Side, ev: Events): Promise<{ rows: BenchRow[]; ratios: BenchRatio[] }> {
  const search = async (q: Query) => (await side.backend.searchAudit(toAuditQuery(q))).totalCount;
  const filtered = queries(ev, QUERIES, "type+user");
  for (const q of filtered.slice(0, 20)) await search(q); // warm-up: caches, statement plans
  const indexed = await timed(filtered, search);
  const scan = await timed(filtered.slice(0, SCAN_QUERIES), (q) => side.fullScan(q));
  const day = await timed(queries(ev, 50, "time"), search);
  const all = await timed(queries(ev, 10, "all"), search);
  const p99 = percentile(indexed.ms, 99);
  return {
    rows: [
      { name: `${side.label}: bulk load ${EVENTS} events`, note: `${(side.loadMs / 1000).toFixed(1)} s` },
      {
        name: `${side.label}: open + migrations from version 2 (index builds)`,
        note: `${(side.migrationMs / 1000).toFixed(2)} s on ${EVENTS} events`,
      },
      row(`${side.label}: type+user+7 days, limit ${PAGE}`, indexed, "searchAudit"),
      row(`${side.label}: same query, full scan`, scan, "baseline"),
      row(`${side.label}: 1-day range only, limit ${PAGE}`, day, "searchAudit"),
      row(`${side.label}: no filter (count of all), limit ${PAGE}`, all, "searchAudit"),
    ],
    ratios: [
      {
        name: `${side.label} filtered p99 / full-scan p99`,
        ratio: p99 / percentile(scan.ms, 99),
        goal: 0.1,
        lowerIsBetter: true,
      },
      {
        name: `${side.label} filtered p99 / ${GOAL_P99_MS} ms`,
        ratio: p99 / GOAL_P99_MS,
        goal: 1,
        lowerIsBetter: true,
      },
    ],
  };
}

async function sqliteSide(dir: string, ev: Events): Promise<Side> {
  const path = join(dir, "audit.db");
  createSqliteAtVersion(path, 2);
  const raw = new DatabaseSync(path);
  const t0 = performance.now();
  raw.exec("BEGIN");
  const ins = raw.prepare(
    "INSERT INTO audit_events (time, event_type, user_name, success, fields) VALUES (?, ?, ?, ?, ?)",
  );
  for (let i = 0; i < ev.type.length; i++) {
    ins.run(
      ev.time[i] as number,
      ev.type[i] as string,
      ev.user[i] as string,
      ev.success[i] ?? null,
      ev.fields[i] as string,
    );
  }
  raw.exec("COMMIT");
  const loadMs = performance.now() - t0;
  const t1 = performance.now();
  const backend = new SqliteBackend({ path, clock: systemClock, sweepIntervalMs: 0 });
  const migrationMs = performance.now() - t1;
  return {
    label: "sqlite",
    loadMs,
    migrationMs,
    backend,
    async fullScan(q) {
      const { cond, params } = where(q);
      const n = raw.prepare(`SELECT count(*) AS n FROM audit_events NOT INDEXED ${cond}`).get(...params);
      raw
        .prepare(
          `SELECT id, time, event_type, user_name, success, fields FROM audit_events NOT INDEXED ${cond}
           ORDER BY time DESC, id DESC LIMIT ${PAGE}`,
        )
        .all(...(params as SQLInputValue[]));
      return Number(n?.["n"]);
    },
    async close() {
      raw.close();
      await backend.close();
    },
  };
}

async function postgresSide(url: string, ev: Events): Promise<Side> {
  const schema = uniqueSchemaName("auditbench");
  await createPostgresAtVersion(url, schema, 2);
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const t0 = performance.now();
  await client.query("BEGIN");
  const BATCH = 50_000;
  for (let i = 0; i < ev.type.length; i += BATCH) {
    const end = Math.min(ev.type.length, i + BATCH);
    await client.query(
      `INSERT INTO ${schema}.audit_events (time, event_type, user_name, success, fields)
       SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::boolean[], $5::text[])`,
      [
        Array.from(ev.time.subarray(i, end)),
        ev.type.slice(i, end),
        ev.user.slice(i, end),
        ev.success.slice(i, end).map((s) => (s === null ? null : s === 1)),
        ev.fields.slice(i, end),
      ],
    );
  }
  await client.query("COMMIT");
  await client.query(`VACUUM ANALYZE ${schema}.audit_events`);
  const loadMs = performance.now() - t0;
  const t1 = performance.now();
  const backend = await PostgresBackend.open({
    connectionString: url,
    clock: systemClock,
    schema,
    sweepIntervalMs: 0,
  });
  const migrationMs = performance.now() - t1;
  const table = `${schema}.audit_events`;
  return {
    label: "postgres",
    loadMs,
    migrationMs,
    backend,
    async fullScan(q) {
      const { cond, params } = where(q);
      let i = 0;
      const pgCond = cond.replace(/\?/g, () => `$${++i}`);
      await client.query("BEGIN");
      try {
        await client.query("SET LOCAL enable_indexscan = off");
        await client.query("SET LOCAL enable_bitmapscan = off");
        await client.query("SET LOCAL enable_indexonlyscan = off");
        const res = await client.query<{ total: string }>(
          `SELECT (SELECT count(*) FROM ${table} ${pgCond}) AS total,
                  (SELECT json_agg(p) FROM (SELECT id, time, event_type, user_name, success, fields
                     FROM ${table} ${pgCond} ORDER BY time DESC, id DESC LIMIT ${PAGE}) p) AS items`,
          params,
        );
        return Number(res.rows[0]?.total);
      } finally {
        await client.query("COMMIT");
      }
    },
    async close() {
      await backend.close();
      await client.query(`DROP SCHEMA ${schema} CASCADE`);
      await client.end();
    },
  };
}

export default async function auditSearchBench(): Promise<BenchReport> {
  const ev = generate(EVENTS);
  const rows: BenchRow[] = [];
  const ratios: BenchRatio[] = [];
  const dir = await mkdtemp(join(tmpdir(), "svc-audit-bench-"));
  try {
    const sqlite = await sqliteSide(dir, ev);
    try {
      const m = await measureSide(sqlite, ev);
      rows.push(...m.rows);
      ratios.push(...m.ratios);
    } finally {
      await sqlite.close();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  const server = await startPostgres();
  try {
    const side = await postgresSide(server.url, ev);
    try {
      const m = await measureSide(side, ev);
      rows.push(...m.rows);
      ratios.push(...m.ratios);
    } finally {
      await side.close();
    }
  } finally {
    await server.stop();
  }
  return { title: `audit search, ${EVENTS} events (SQLite and PostgreSQL)`, rows, ratios };
}
