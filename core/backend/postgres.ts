// The state backend for several auth replicas, on PostgreSQL through a `pg` Pool. Every write is
// one statement, so its atomicity is PostgreSQL's own: compare-and-swap is an UPDATE guarded by
// `revision = $expected`, which a concurrent writer re-checks after the first one commits.
import pg from "pg";
import type { Clock } from "../clock.ts";
import {
  AlreadyExistsError,
  BadParameterError,
  CompareFailedError,
  NotFoundError,
  UnavailableError,
} from "../errors.ts";
import type { JsonObject, JsonValue } from "../json.ts";
import { AuditBatcher, type AuditBatcherOptions } from "./audit-batcher.ts";
import type {
  AuditEvent,
  AuditEventInput,
  AuditPage,
  AuditQuery,
  Backend,
  CreateEntry,
  Item,
  NotificationHandler,
  RangeOptions,
  WriteOptions,
} from "./backend.ts";
import { checkPayload } from "./notify.ts";
import { PostgresNotifier } from "./postgres-notify.ts";
import { postgresMigrations } from "./postgres-schema.ts";
import {
  type CheckedAuditEvent,
  checkAuditInput,
  checkAuditQuery,
  checkEntries,
  checkKey,
  checkPrefix,
  checkRangeLimit,
  checkRevision,
  decodeValue,
  encodeValue,
  prefixUpperBound,
  resolveExpiry,
} from "./validate.ts";

export interface PostgresBackendOptions {
  /** postgres://user[:password]@host:port/database (libpq URL syntax) */
  connectionString: string;
  clock: Clock;
  /** Connections in the pool. Default 10. */
  poolSize?: number;
  /** Schema holding the tables; created when missing. Lowercase identifier. Default "svc". */
  schema?: string;
  /** How often expired items are removed; 0 disables the timer. Default 60 s. */
  sweepIntervalMs?: number;
  /** How long to wait for a connection before UnavailableError. Default 10 s. */
  connectTimeoutMs?: number;
  /** Errors of idle pooled connections (e.g. the server restarted); they are otherwise dropped. */
  onError?: (err: Error) => void;
  /** Group commit of audit appends (audit-batcher.ts); the defaults suit auth. */
  auditBatch?: AuditBatcherOptions;
}

export const DEFAULT_POSTGRES_SCHEMA = "svc";
const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;
const DEFAULT_SWEEP_MS = 60_000;

type Row = Record<string, unknown>;

export class PostgresBackend implements Backend {
  readonly #pool: pg.Pool;
  readonly #clock: Clock;
  readonly #sql: ReturnType<typeof statements>;
  readonly #schema: string;
  #sweeper: NodeJS.Timeout | undefined;
  #closed = false;
  #closing = false;
  readonly #notifier: PostgresNotifier;
  // One INSERT per group of audit events instead of one per event: measured at 32 concurrent
  // appends (local server), 50-70 us of auth's CPU and 125-140 us of the server's per event as
  // single-row INSERTs, each its own transaction.
  readonly #audit: AuditBatcher<CheckedAuditEvent, AuditEvent>;

  /** Use `PostgresBackend.open` (or openPostgresBackend): it also applies migrations. */
  private constructor(pool: pg.Pool, schema: string, opts: PostgresBackendOptions) {
    this.#pool = pool;
    this.#schema = schema;
    this.#clock = opts.clock;
    this.#sql = statements(schema);
    this.#notifier = new PostgresNotifier(opts.connectionString, schema);
    this.#audit = new AuditBatcher((events) => this.#commitAudit(events), opts.auditBatch);
  }

  static async open(opts: PostgresBackendOptions): Promise<PostgresBackend> {
    const schema = opts.schema ?? DEFAULT_POSTGRES_SCHEMA;
    if (!SCHEMA_NAME.test(schema)) throw new BadParameterError("schema must be a lowercase SQL identifier");
    const poolSize = opts.poolSize ?? 10;
    if (!Number.isSafeInteger(poolSize) || poolSize < 1) throw new BadParameterError("poolSize must be >= 1");
    // A bounded connect wait: an unreachable server becomes UnavailableError instead of a hang.
    const pool = new pg.Pool({
      connectionString: opts.connectionString,
      max: poolSize,
      connectionTimeoutMillis: opts.connectTimeoutMs ?? 10_000,
    });
    pool.on("error", (err) => opts.onError?.(err));
    try {
      await migrate(pool, schema);
    } catch (err) {
      await pool.end();
      throw mapError(err);
    }
    const backend = new PostgresBackend(pool, schema, opts);
    backend.#startSweeper(opts.sweepIntervalMs ?? DEFAULT_SWEEP_MS);
    return backend;
  }

  /** The schema this backend reads and writes. */
  get schema(): string {
    return this.#schema;
  }

  async get(key: string): Promise<Item> {
    checkKey(key);
    const rows = await this.#query(this.#sql.get, [key, this.#now()]);
    const row = rows[0];
    if (row === undefined) throw new NotFoundError(`key ${key} not found`);
    return toItem(row);
  }

  async put(key: string, value: JsonValue, opts?: WriteOptions): Promise<Item> {
    checkKey(key);
    const text = encodeValue(value);
    const expires = resolveExpiry(opts, this.#clock);
    const rows = await this.#query(this.#sql.put, [key, text, expires]);
    return toItem(first(rows));
  }

  async create(key: string, value: JsonValue, opts?: WriteOptions): Promise<Item> {
    checkKey(key);
    const text = encodeValue(value);
    const expires = resolveExpiry(opts, this.#clock);
    const rows = await this.#query(this.#sql.create, [key, text, expires, this.#now()]);
    const row = rows[0];
    if (row === undefined) throw new AlreadyExistsError(`key ${key} already exists`);
    return toItem(row);
  }

  async createAll(entries: readonly CreateEntry[]): Promise<Item[]> {
    const checked = checkEntries(entries, this.#clock);
    if (this.#closed) throw new UnavailableError("backend is closed");
    let client: pg.PoolClient;
    try {
      client = await this.#pool.connect();
    } catch (err) {
      throw mapError(err);
    }
    let broken = false;
    try {
      await client.query("BEGIN");
      const out: Item[] = [];
      for (const { key, text, expires } of checked) {
        const res = await client.query<Row>(this.#sql.create, [key, text, expires, this.#now()]);
        const row = res.rows[0];
        if (row === undefined) throw new AlreadyExistsError(`key ${key} already exists`);
        out.push(toItem(row));
      }
      await client.query("COMMIT");
      return out;
    } catch (err) {
      await client.query("ROLLBACK").catch(() => {
        broken = true;
      });
      throw mapError(err);
    } finally {
      // A connection whose ROLLBACK failed is not handed to the next caller.
      client.release(broken);
    }
  }

  async compareAndSwap(
    key: string,
    expectedRevision: number,
    value: JsonValue,
    opts?: WriteOptions,
  ): Promise<Item> {
    checkKey(key);
    checkRevision(expectedRevision);
    const text = encodeValue(value);
    const expires = resolveExpiry(opts, this.#clock);
    const rows = await this.#query(this.#sql.cas, [key, expectedRevision, text, expires, this.#now()]);
    const row = rows[0];
    if (row === undefined) return this.#explainMiss(key, expectedRevision);
    return toItem(row);
  }

  async delete(key: string): Promise<void> {
    checkKey(key);
    const rows = await this.#query(this.#sql.delete, [key, this.#now()]);
    if (rows.length === 0) throw new NotFoundError(`key ${key} not found`);
  }

  async compareAndDelete(key: string, expectedRevision: number): Promise<void> {
    checkKey(key);
    checkRevision(expectedRevision);
    const rows = await this.#query(this.#sql.cad, [key, expectedRevision, this.#now()]);
    if (rows.length === 0) await this.#explainMiss(key, expectedRevision);
  }

  async range(prefix: string, opts?: RangeOptions): Promise<Item[]> {
    checkPrefix(prefix, true);
    const limit = checkRangeLimit(opts);
    const upper = prefixUpperBound(prefix);
    const rows =
      upper === undefined
        ? await this.#query(this.#sql.rangeOpen, [prefix, this.#now(), limit])
        : await this.#query(this.#sql.range, [prefix, upper, this.#now(), limit]);
    return rows.map(toItem);
  }

  async deleteRange(prefix: string): Promise<number> {
    checkPrefix(prefix, false);
    const upper = prefixUpperBound(prefix);
    const rows =
      upper === undefined
        ? await this.#query(this.#sql.deleteRangeOpen, [prefix, this.#now()])
        : await this.#query(this.#sql.deleteRange, [prefix, upper, this.#now()]);
    return toNumber(first(rows).n);
  }

  async sweepExpired(): Promise<number> {
    const rows = await this.#query(this.#sql.sweep, [this.#now()]);
    return toNumber(first(rows).n);
  }

  async appendAudit(event: AuditEventInput): Promise<AuditEvent> {
    const e = checkAuditInput(event, this.#clock);
    if (this.#closed || this.#closing) throw new UnavailableError("backend is closed");
    // Settles after the statement holding this event committed; a failed one rejects it.
    return await this.#audit.add(e);
  }

  /**
   * One statement for the group: the rows come from arrays in the callers' order, and the identity
   * column numbers them in that order, so sorting the returned ids gives each caller its own.
   */
  async #commitAudit(events: CheckedAuditEvent[]): Promise<AuditEvent[]> {
    const one = events.length === 1 ? events[0] : undefined;
    // A lone event takes the plain INSERT: the server plans it for a fraction of the array form.
    const rows = one
      ? await this.#query(this.#sql.appendAudit, [
          one.time,
          one.event_type,
          one.user_name,
          one.success,
          one.fieldsText,
        ])
      : await this.#query(this.#sql.appendAudits, [
          events.map((e) => e.time),
          events.map((e) => e.event_type),
          events.map((e) => e.user_name),
          events.map((e) => e.success),
          events.map((e) => e.fieldsText),
        ]);
    const ids = rows.map((r) => toNumber(r.id)).sort((a, b) => a - b);
    if (ids.length !== events.length) throw new Error("audit insert returned fewer rows than it was given");
    return events.map((e, i) => {
      const event: AuditEvent = {
        id: String(ids[i]),
        time: new Date(e.time),
        event_type: e.event_type,
        user_name: e.user_name,
        // As a search reads it back: the stored JSON, not the caller's object.
        fields: decodeValue(e.fieldsText) as JsonObject,
      };
      if (e.success !== null) event.success = e.success;
      return event;
    });
  }

  async searchAudit(query: AuditQuery): Promise<AuditPage> {
    const q = checkAuditQuery(query);
    const where: string[] = [];
    const params: Array<string | number> = [];
    const add = (cond: string, v: string | number): void => {
      params.push(v);
      where.push(cond.replace("?", `$${params.length}`));
    };
    if (q.type !== undefined) add("event_type = ?", q.type);
    if (q.user !== undefined) add("user_name = ?", q.user);
    if (q.start !== undefined) add("time >= ?", q.start);
    if (q.end !== undefined) add("time < ?", q.end);
    const cond = where.length > 0 ? `WHERE ${where.join(" AND ")}` : "";
    params.push(q.limit, q.offset, q.countCap);
    const n = params.length - 1;
    const table = `${this.#schema}.audit_events`;
    // One statement, so the count and the page come from the same snapshot. The count stops at
    // q.countCap (validate.ts AUDIT_COUNT_CAP says why).
    const sql = `
      SELECT (SELECT count(*) FROM (SELECT 1 FROM ${table} ${cond} LIMIT $${n + 1}) c) AS total,
             COALESCE((SELECT json_agg(p ORDER BY p.time DESC, p.id DESC) FROM (
               SELECT id, time, event_type, user_name, success, fields FROM ${table} ${cond}
               ORDER BY time DESC, id DESC LIMIT $${n - 1} OFFSET $${n}) p), '[]'::json) AS items`;
    const row = first(await this.#query(sql, params));
    const items = row.items;
    if (!Array.isArray(items)) throw new Error("audit page is not an array");
    return { items: items.map((r) => toAuditEvent(r as Row)), totalCount: toNumber(row.total) };
  }

  async publish(channel: string, payload: string): Promise<void> {
    const name = this.#notifier.pgChannel(channel);
    checkPayload(payload);
    await this.#query("SELECT pg_notify($1, $2)", [name, payload]);
  }

  subscribe(channel: string, handler: NotificationHandler): Promise<() => Promise<void>> {
    if (this.#closed) return Promise.reject(new UnavailableError("backend is closed"));
    return this.#notifier.subscribe(channel, handler);
  }

  async close(): Promise<void> {
    if (this.#closed || this.#closing) return;
    // Appends already accepted are committed before the pool ends; new ones are refused.
    this.#closing = true;
    await this.#audit.drain();
    this.#closed = true;
    if (this.#sweeper !== undefined) clearInterval(this.#sweeper);
    await this.#notifier.close();
    await this.#pool.end();
  }

  #startSweeper(every: number): void {
    if (every <= 0) return;
    this.#sweeper = setInterval(() => {
      this.sweepExpired().catch(() => {
        // The database may be briefly unreachable; the next tick retries.
      });
    }, every);
    this.#sweeper.unref();
  }

  async #explainMiss(key: string, expected: number): Promise<never> {
    const rows = await this.#query(this.#sql.get, [key, this.#now()]);
    const row = rows[0];
    if (row === undefined) throw new NotFoundError(`key ${key} not found`);
    throw new CompareFailedError(`key ${key} is at revision ${toNumber(row.revision)}, not ${expected}`);
  }

  #now(): number {
    return this.#clock.now().getTime();
  }

  async #query(sql: string, params: unknown[]): Promise<Row[]> {
    if (this.#closed) throw new UnavailableError("backend is closed");
    try {
      const res = await this.#pool.query<Row>(sql, params);
      return res.rows;
    } catch (err) {
      throw mapError(err);
    }
  }
}

export function openPostgresBackend(opts: PostgresBackendOptions): Promise<PostgresBackend> {
  return PostgresBackend.open(opts);
}

/**
 * Applies missing migrations in one transaction under an advisory lock keyed by the schema, so
 * replicas starting together take turns and the second one finds the work done.
 */
async function migrate(pool: pg.Pool, schema: string): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    await client.query("SELECT pg_advisory_xact_lock(hashtext($1))", [`svc.schema_migrations:${schema}`]);
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
    await client.query(
      `CREATE TABLE IF NOT EXISTS ${schema}.schema_migrations (
         version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
    );
    const done = await client.query<{ version: number }>(`SELECT version FROM ${schema}.schema_migrations`);
    const applied = new Set(done.rows.map((r) => r.version));
    for (const m of postgresMigrations) {
      if (applied.has(m.version)) continue;
      await client.query(m.sql(schema));
      await client.query(`INSERT INTO ${schema}.schema_migrations (version, name) VALUES ($1, $2)`, [
        m.version,
        m.name,
      ]);
    }
    await client.query("COMMIT");
  } catch (err) {
    await client.query("ROLLBACK").catch(() => {
      // The connection may be gone; the original error is the one worth reporting.
    });
    throw err;
  } finally {
    client.release();
  }
}

function statements(s: string) {
  const cols = "key, value, revision, expires";
  const next = `nextval('${s}.revision_seq')`;
  return {
    get: `SELECT ${cols} FROM ${s}.items WHERE key = $1 AND (expires IS NULL OR expires > $2)`,
    put: `INSERT INTO ${s}.items AS i (key, value, revision, expires) VALUES ($1, $2, ${next}, $3)
          ON CONFLICT (key) DO UPDATE SET value = excluded.value, revision = excluded.revision,
          expires = excluded.expires RETURNING ${cols}`,
    // A stored but expired row counts as absent and is replaced; a live one makes the row vanish
    // from RETURNING, which means "already exists".
    create: `INSERT INTO ${s}.items AS i (key, value, revision, expires) VALUES ($1, $2, ${next}, $3)
             ON CONFLICT (key) DO UPDATE SET value = excluded.value, revision = excluded.revision,
             expires = excluded.expires WHERE i.expires IS NOT NULL AND i.expires <= $4 RETURNING ${cols}`,
    cas: `UPDATE ${s}.items SET value = $3, revision = ${next}, expires = $4
          WHERE key = $1 AND revision = $2 AND (expires IS NULL OR expires > $5) RETURNING ${cols}`,
    delete: `DELETE FROM ${s}.items WHERE key = $1 AND (expires IS NULL OR expires > $2) RETURNING key`,
    cad: `DELETE FROM ${s}.items WHERE key = $1 AND revision = $2 AND (expires IS NULL OR expires > $3)
          RETURNING key`,
    range: `SELECT ${cols} FROM ${s}.items WHERE key >= $1 AND key < $2 AND (expires IS NULL OR expires > $3)
            ORDER BY key LIMIT $4`,
    rangeOpen: `SELECT ${cols} FROM ${s}.items WHERE key >= $1 AND (expires IS NULL OR expires > $2)
                ORDER BY key LIMIT $3`,
    // Expired rows go too, but only visible ones are counted as deleted.
    deleteRange: `WITH d AS (DELETE FROM ${s}.items WHERE key >= $1 AND key < $2 RETURNING expires)
                  SELECT count(*) FILTER (WHERE expires IS NULL OR expires > $3) AS n FROM d`,
    deleteRangeOpen: `WITH d AS (DELETE FROM ${s}.items WHERE key >= $1 RETURNING expires)
                      SELECT count(*) FILTER (WHERE expires IS NULL OR expires > $2) AS n FROM d`,
    sweep: `WITH d AS (DELETE FROM ${s}.items WHERE expires IS NOT NULL AND expires <= $1 RETURNING 1)
            SELECT count(*) AS n FROM d`,
    appendAudit: `INSERT INTO ${s}.audit_events (time, event_type, user_name, success, fields)
                  VALUES ($1, $2, $3, $4, $5) RETURNING id`,
    appendAudits: `INSERT INTO ${s}.audit_events (time, event_type, user_name, success, fields)
                  SELECT time, event_type, user_name, success, fields
                  FROM unnest($1::bigint[], $2::text[], $3::text[], $4::boolean[], $5::text[])
                    WITH ORDINALITY AS e(time, event_type, user_name, success, fields, n)
                  ORDER BY n
                  RETURNING id`,
  };
}

function first(rows: Row[]): Row {
  const row = rows[0];
  if (row === undefined) throw new Error("statement returned no row");
  return row;
}

/** int8 arrives as a string from pg (and as a number inside json_agg). */
function toNumber(v: unknown): number {
  if (typeof v === "number") return v;
  if (typeof v === "string" && /^-?\d+$/.test(v)) return Number(v);
  throw new Error(`expected an integer column, got ${typeof v}`);
}

function toText(v: unknown): string {
  if (typeof v === "string") return v;
  throw new Error(`expected a text column, got ${typeof v}`);
}

function toItem(row: Row): Item {
  const item: Item = {
    key: toText(row.key),
    value: decodeValue(toText(row.value)),
    revision: toNumber(row.revision),
  };
  if (row.expires !== null && row.expires !== undefined) item.expires = new Date(toNumber(row.expires));
  return item;
}

function toAuditEvent(row: Row): AuditEvent {
  const event: AuditEvent = {
    id: String(toNumber(row.id)),
    time: new Date(toNumber(row.time)),
    event_type: toText(row.event_type),
    user_name: toText(row.user_name),
    fields: decodeValue(toText(row.fields)) as JsonObject,
  };
  if (typeof row.success === "boolean") event.success = row.success;
  return event;
}

const TRANSIENT_NODE_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "EHOSTUNREACH",
  "ENOTFOUND",
]);

/** Connection trouble, server shutdown and overload become UnavailableError; the rest stays as is. */
function mapError(err: unknown): unknown {
  if (!(err instanceof Error)) return err;
  const code = "code" in err && typeof err.code === "string" ? err.code : "";
  const transient =
    code.startsWith("08") ||
    code.startsWith("57P") ||
    code === "53300" ||
    code === "40001" ||
    code === "40P01" ||
    TRANSIENT_NODE_CODES.has(code) ||
    /Connection terminated|timeout exceeded when trying to connect/i.test(err.message);
  return transient ? new UnavailableError("state database is unavailable", { cause: err }) : err;
}
