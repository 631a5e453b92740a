// Compare-and-swap throughput of the state backends against the same database driven raw in the
// same run: a guarded single-row UPDATE with no layer of ours (no validation, no global revision
// sequence, no transaction wrapper). The ratio is what our layer costs.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import pg from "pg";
import type { Backend, Item } from "../core/backend/backend.ts";
import { PostgresBackend } from "../core/backend/postgres.ts";
import { SqliteBackend } from "../core/backend/sqlite.ts";
import { systemClock } from "../core/clock.ts";
import { dropSchema, startPostgres, uniqueSchemaName } from "../test/harness/postgres.ts";
import type { BenchReport, BenchRow } from "./report.ts";
import { percentile } from "./report.ts";

const SQLITE_OPS = 4_000;
const PG_OPS = 2_000;
const PARALLEL = 8;
const WARMUP = 100;
const ROUNDS = 4;

interface Measured {
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
}

type Op = (lane: number) => Promise<void> | void;

interface Run {
  samples: number[];
  ms: number;
}

/** Runs `lanes` independent loops of `op` concurrently, `total` ops in all. */
async function runLanes(total: number, lanes: number, op: Op): Promise<Run> {
  const samples: number[] = [];
  const perLane = Math.ceil(total / lanes);
  const start = performance.now();
  await Promise.all(
    Array.from({ length: lanes }, async (_, lane) => {
      for (let i = 0; i < perLane; i++) {
        const t = performance.now();
        await op(lane);
        samples.push(performance.now() - t);
      }
    }),
  );
  return { samples, ms: performance.now() - start };
}

function summarize(runs: Run[]): Measured {
  const samples = runs.flatMap((r) => r.samples);
  const seconds = runs.reduce((s, r) => s + r.ms, 0) / 1000;
  return {
    perSecond: samples.length / seconds,
    p50Ms: percentile(samples, 50),
    p99Ms: percentile(samples, 99),
  };
}

/**
 * Measures the candidate and its baseline in alternating rounds, so noise from other work on a
 * shared machine lands on both sides of the ratio rather than on one.
 */
async function compare(
  total: number,
  lanes: number,
  ops: Record<string, Op>,
): Promise<Record<string, Measured>> {
  for (const op of Object.values(ops)) for (let i = 0; i < WARMUP; i++) await op(i % lanes);
  const runs: Record<string, Run[]> = {};
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, op] of Object.entries(ops)) {
      const r = await runLanes(Math.ceil(total / ROUNDS), lanes, op);
      runs[name] = [...(runs[name] ?? []), r];
    }
  }
  return Object.fromEntries(Object.entries(runs).map(([name, r]) => [name, summarize(r)]));
}

const row = (name: string, m: Measured, note?: string): BenchRow => ({
  name,
  perSecond: m.perSecond,
  unit: "CAS",
  p50Ms: m.p50Ms,
  p99Ms: m.p99Ms,
  ...(note ? { note } : {}),
});

/** One chain of swaps per lane, each on its own key, always at the revision it just wrote. */
async function casLanes(backend: Backend, lanes: number): Promise<(lane: number) => Promise<void>> {
  const items: Item[] = [];
  for (let i = 0; i < lanes; i++) items.push(await backend.put(`/bench/cas/${i}`, 0));
  return async (lane) => {
    const cur = items[lane] as Item;
    items[lane] = await backend.compareAndSwap(cur.key, cur.revision, (cur.value as number) + 1);
  };
}

async function benchSqlite(dir: string): Promise<Record<string, Measured>> {
  const ours = new SqliteBackend({ path: join(dir, "ours.db"), clock: systemClock, sweepIntervalMs: 0 });
  const raw = new DatabaseSync(join(dir, "raw.db"));
  try {
    // Same file settings as the backend, so the difference is our layer, not the pragmas.
    raw.exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL");
    raw.exec("CREATE TABLE t (k TEXT PRIMARY KEY, v TEXT NOT NULL, rev INTEGER NOT NULL)");
    raw.prepare("INSERT INTO t VALUES ('k', '0', 1)").run();
    const update = raw.prepare("UPDATE t SET v = ?, rev = rev + 1 WHERE k = 'k' AND rev = ?");
    let rev = 1;
    return await compare(SQLITE_OPS, 1, {
      ours: await casLanes(ours, 1),
      raw: () => {
        if (update.run(String(rev), rev).changes !== 1) throw new Error("raw swap lost");
        rev++;
      },
    });
  } finally {
    await ours.close();
    raw.close();
  }
}

async function benchPostgres(url: string): Promise<Record<string, Measured>> {
  const schema = uniqueSchemaName("bench");
  const rawSchema = uniqueSchemaName("bench_raw");
  const ours = await PostgresBackend.open({
    connectionString: url,
    clock: systemClock,
    schema,
    poolSize: PARALLEL,
    sweepIntervalMs: 0,
  });
  const pool = new pg.Pool({ connectionString: url, max: PARALLEL });
  try {
    await pool.query(`CREATE SCHEMA ${rawSchema}`);
    await pool.query(
      `CREATE TABLE ${rawSchema}.t (k text PRIMARY KEY, v text NOT NULL, rev bigint NOT NULL)`,
    );
    const revs: number[] = [];
    for (let i = 0; i < PARALLEL; i++) {
      await pool.query(`INSERT INTO ${rawSchema}.t VALUES ($1, '0', 1)`, [`k${i}`]);
      revs.push(1);
    }
    const sql = `UPDATE ${rawSchema}.t SET v = $1, rev = rev + 1 WHERE k = $2 AND rev = $3`;
    const rawOp = async (lane: number): Promise<void> => {
      const rev = revs[lane] as number;
      const res = await pool.query(sql, [String(rev), `k${lane}`, rev]);
      if (res.rowCount !== 1) throw new Error("raw swap lost");
      revs[lane] = rev + 1;
    };
    const seq = await compare(PG_OPS, 1, {
      ours: await casLanes(ours, 1),
      raw: rawOp,
      select1: async () => {
        await pool.query("SELECT 1");
      },
    });
    const par = await compare(PG_OPS * 2, PARALLEL, { ours: await casLanes(ours, PARALLEL), raw: rawOp });
    return {
      seq: seq.ours as Measured,
      rawSeq: seq.raw as Measured,
      select1: seq.select1 as Measured,
      par: par.ours as Measured,
      rawPar: par.raw as Measured,
    };
  } finally {
    await ours.close();
    await pool.end();
    await dropSchema(url, schema);
    await dropSchema(url, rawSchema);
  }
}

export default async function backendBench(): Promise<BenchReport> {
  const dir = await mkdtemp(join(tmpdir(), "svc-bench-backend-"));
  const server = await startPostgres();
  try {
    const lite = await benchSqlite(dir);
    const pgm = await benchPostgres(server.url);
    const get = (k: string): Measured => pgm[k] as Measured;
    const sq = (k: string): Measured => lite[k] as Measured;
    return {
      title: "state backend compare-and-swap (sequential unless noted; PostgreSQL over loopback TCP)",
      rows: [
        row("sqlite: backend compareAndSwap", sq("ours"), "WAL, synchronous=NORMAL"),
        row("sqlite: raw guarded UPDATE (baseline)", sq("raw")),
        row("postgres: backend compareAndSwap", get("seq")),
        row("postgres: raw guarded UPDATE (baseline)", get("rawSeq")),
        row(`postgres: backend compareAndSwap x${PARALLEL} keys`, get("par"), `pool ${PARALLEL}`),
        row(`postgres: raw guarded UPDATE x${PARALLEL} keys (baseline)`, get("rawPar"), `pool ${PARALLEL}`),
        row("postgres: SELECT 1 round trip (reference)", get("select1")),
      ],
      ratios: [
        { name: "sqlite CAS / raw UPDATE", ratio: sq("ours").perSecond / sq("raw").perSecond },
        { name: "postgres CAS / raw UPDATE", ratio: get("seq").perSecond / get("rawSeq").perSecond },
        {
          name: `postgres CAS / raw UPDATE x${PARALLEL}`,
          ratio: get("par").perSecond / get("rawPar").perSecond,
        },
      ],
    };
  } finally {
    await server.stop();
    await rm(dir, { recursive: true, force: true });
  }
}
