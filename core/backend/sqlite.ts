// The embedded state backend on node:sqlite. Every write runs in BEGIN IMMEDIATE, which takes the
// file's write lock up front, so compare-and-swap is atomic across processes sharing one file
// (WAL lets readers continue meanwhile; busy_timeout makes a second writer wait, not fail).
import { DatabaseSync, type SQLOutputValue, type StatementSync } from "node:sqlite";
import type { Clock } from "../clock.ts";
import { AlreadyExistsError, CompareFailedError, NotFoundError, UnavailableError } from "../errors.ts";
import type { JsonValue } from "../json.ts";
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
import { checkChannel, checkPayload, sqliteNotifier } from "./notify.ts";
import { sqliteMigrations } from "./sqlite-schema.ts";
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

export interface SqliteBackendOptions {
  /** A file path, or ":memory:" for a private in-process database. */
  path: string;
  clock: Clock;
  /** How often expired items are removed; 0 disables the timer. Default 60 s. */
  sweepIntervalMs?: number;
  /** How long a writer waits for another process's write lock. Default 10 s. */
  busyTimeoutMs?: number;
  /** Audit group commit (audit-batcher.ts): window and size. */
  auditBatch?: AuditBatcherOptions;
  /** Group commit of puts with `batch` (WriteOptions): window and size, as for audit. */
  putBatch?: AuditBatcherOptions;
}

interface BatchedPut {
  key: string;
  text: string;
  expires: number | null;
}

const DEFAULT_SWEEP_MS = 60_000;
const DEFAULT_BUSY_MS = 10_000;
const SQLITE_BUSY = 5;
const SQLITE_LOCKED = 6;

type Row = Record<string, SQLOutputValue>;

export class SqliteBackend implements Backend {
  readonly #db: DatabaseSync;
  readonly #clock: Clock;
  readonly #stmts: ReturnType<typeof prepareStatements>;
  #sweeper: NodeJS.Timeout | undefined;
  #closed = false;
  /** In-process notifications (one process serves an embedded file); shared per file. */
  readonly #notify: ReturnType<typeof sqliteNotifier>;
  readonly #subscriptions = new Set<() => boolean>();
  /** Audit appends committed in groups (audit-batcher.ts). */
  readonly #audit: AuditBatcher<CheckedAuditEvent, AuditEvent>;
  /** Puts with `batch` committed in groups, as audit appends are (node heartbeats). */
  readonly #puts: AuditBatcher<BatchedPut, Row>;

  /** The database file (":memory:" for a private one): another backend opened on it shares it. */
  readonly path: string;

  constructor(opts: SqliteBackendOptions) {
    this.path = opts.path;
    this.#clock = opts.clock;
    this.#db = new DatabaseSync(opts.path);
    this.#notify = sqliteNotifier(opts.path);
    try {
      this.#db.exec(
        `PRAGMA busy_timeout = ${Math.max(0, Math.floor(opts.busyTimeoutMs ?? DEFAULT_BUSY_MS))}`,
      );
      if (opts.path !== ":memory:") this.#db.exec("PRAGMA journal_mode = WAL");
      // NORMAL is durable across application crashes in WAL mode; only an OS crash may lose the
      // last transactions, which is acceptable for sessions and heartbeats.
      this.#db.exec("PRAGMA synchronous = NORMAL");
      migrate(this.#db);
      this.#stmts = prepareStatements(this.#db);
    } catch (err) {
      this.#db.close();
      this.#notify.release();
      throw mapError(err);
    }
    this.#audit = new AuditBatcher((events) => this.#commitAudit(events), opts.auditBatch);
    this.#puts = new AuditBatcher((puts) => this.#commitPuts(puts), opts.putBatch);
    const every = opts.sweepIntervalMs ?? DEFAULT_SWEEP_MS;
    if (every > 0) {
      this.#sweeper = setInterval(() => {
        this.sweepExpired().catch(() => {
          // A busy file is retried on the next tick; nothing to report per tick.
        });
      }, every);
      this.#sweeper.unref();
    }
  }

  async get(key: string): Promise<Item> {
    checkKey(key);
    if (this.#closed) throw new UnavailableError("backend is closed");
    // Every authenticated RPC reads its session here: its own statement returns the row as an
    // array without the key the caller already has (no per-call object or closure).
    let row: unknown[] | undefined;
    try {
      row = this.#stmts.getValue.get(key, this.#now()) as unknown[] | undefined;
    } catch (err) {
      throw mapError(err);
    }
    if (row === undefined) throw new NotFoundError(`key ${key} not found`);
    const [value, revision, expires] = row as [SQLOutputValue, SQLOutputValue, SQLOutputValue];
    const item: Item = { key, value: decodeValue(str(value)), revision: num(revision) };
    if (expires !== null) item.expires = new Date(num(expires));
    return item;
  }

  async put(key: string, value: JsonValue, opts?: WriteOptions): Promise<Item> {
    checkKey(key);
    const text = encodeValue(value);
    const expires = resolveExpiry(opts, this.#clock);
    if (opts?.batch) {
      if (this.#closed) throw new UnavailableError("backend is closed");
      return toItem(await this.#puts.add({ key, text, expires }));
    }
    return this.#write(() => {
      const revision = this.#nextRevision();
      return toItem(must(this.#stmts.upsert.get(key, text, revision, expires)));
    });
  }

  #commitPuts(puts: BatchedPut[]): Row[] {
    return this.#write(() =>
      puts.map((p) => must(this.#stmts.upsert.get(p.key, p.text, this.#nextRevision(), p.expires))),
    );
  }

  async create(key: string, value: JsonValue, opts?: WriteOptions): Promise<Item> {
    checkKey(key);
    const text = encodeValue(value);
    const expires = resolveExpiry(opts, this.#clock);
    return this.#write(() => {
      if (this.#stmts.get.get(key, this.#now()) !== undefined)
        throw new AlreadyExistsError(`key ${key} already exists`);
      const revision = this.#nextRevision();
      // An expired row may still be stored; it counts as absent and is replaced.
      return toItem(must(this.#stmts.upsert.get(key, text, revision, expires)));
    });
  }

  async createAll(entries: readonly CreateEntry[]): Promise<Item[]> {
    const checked = checkEntries(entries, this.#clock);
    return this.#write(() =>
      checked.map(({ key, text, expires }) => {
        if (this.#stmts.get.get(key, this.#now()) !== undefined)
          throw new AlreadyExistsError(`key ${key} already exists`);
        return toItem(must(this.#stmts.upsert.get(key, text, this.#nextRevision(), expires)));
      }),
    );
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
    return this.#write(() => {
      // Guarded UPDATE first; only a miss pays for the lookup that explains it (and rolls back).
      const revision = this.#nextRevision();
      const row = this.#stmts.cas.get(text, revision, expires, key, expectedRevision, this.#now());
      if (row === undefined) this.#expectRevision(key, expectedRevision);
      return toItem(must(row));
    });
  }

  async delete(key: string): Promise<void> {
    checkKey(key);
    this.#write(() => {
      const now = this.#now();
      if (this.#stmts.get.get(key, now) === undefined) throw new NotFoundError(`key ${key} not found`);
      this.#stmts.delete.run(key);
    });
  }

  async compareAndDelete(key: string, expectedRevision: number): Promise<void> {
    checkKey(key);
    checkRevision(expectedRevision);
    this.#write(() => {
      this.#expectRevision(key, expectedRevision);
      this.#stmts.delete.run(key);
    });
  }

  async range(prefix: string, opts?: RangeOptions): Promise<Item[]> {
    checkPrefix(prefix, true);
    const limit = checkRangeLimit(opts) ?? -1;
    const upper = prefixUpperBound(prefix);
    const rows = this.#run(() =>
      upper === undefined
        ? this.#stmts.rangeOpen.all(prefix, this.#now(), limit)
        : this.#stmts.range.all(prefix, upper, this.#now(), limit),
    );
    return rows.map(toItem);
  }

  async deleteRange(prefix: string): Promise<number> {
    checkPrefix(prefix, false);
    const upper = prefixUpperBound(prefix);
    return this.#write(() => {
      const now = this.#now();
      // Expired rows go too, but only visible ones are counted as deleted.
      if (upper === undefined) {
        const n = num(must(this.#stmts.countOpen.get(prefix, now)).n);
        this.#stmts.deleteOpen.run(prefix);
        return n;
      }
      const n = num(must(this.#stmts.count.get(prefix, upper, now)).n);
      this.#stmts.deleteBetween.run(prefix, upper);
      return n;
    });
  }

  async sweepExpired(): Promise<number> {
    return this.#write(() => Number(this.#stmts.sweep.run(this.#now()).changes));
  }

  async appendAudit(event: AuditEventInput): Promise<AuditEvent> {
    const e = checkAuditInput(event, this.#clock);
    if (this.#closed) throw new UnavailableError("backend is closed");
    // Settles after the COMMIT holding this event; a failed commit rejects it (audit-batcher.ts).
    return await this.#audit.add(e);
  }

  /** The stored event is built from what was written (no RETURNING row to read back and decode). */
  #commitAudit(events: CheckedAuditEvent[]): AuditEvent[] {
    return this.#write(() =>
      events.map((e) => {
        const success = e.success === null ? null : e.success ? 1 : 0;
        const r = this.#stmts.appendAudit.run(e.time, e.event_type, e.user_name, success, e.fieldsText);
        const event: AuditEvent = {
          id: String(r.lastInsertRowid),
          time: new Date(e.time),
          event_type: e.event_type,
          user_name: e.user_name,
          // As a search reads it back: the stored JSON, not the caller's object.
          fields: decodeValue(e.fieldsText) as AuditEvent["fields"],
        };
        if (e.success !== null) event.success = e.success;
        return event;
      }),
    );
  }

  async searchAudit(query: AuditQuery): Promise<AuditPage> {
    const q = checkAuditQuery(query);
    const where: string[] = [];
    const params: Array<string | number> = [];
    if (q.type !== undefined) {
      where.push("event_type = ?");
      params.push(q.type);
    }
    if (q.user !== undefined) {
      where.push("user_name = ?");
      params.push(q.user);
    }
    if (q.start !== undefined) {
      where.push("time >= ?");
      params.push(q.start);
    }
    if (q.end !== undefined) {
      where.push("time < ?");
      params.push(q.end);
    }
    const cond = where.length > 0 ? `WHERE ${where.join(" AND ")}` : "";
    // One read transaction: the count and the page come from the same snapshot.
    return this.#tx(this.#stmts.begin, () => {
      // Counted up to q.countCap (validate.ts AUDIT_COUNT_CAP says why).
      const total = num(
        must(
          this.#db
            .prepare(`SELECT count(*) AS n FROM (SELECT 1 FROM audit_events ${cond} LIMIT ?)`)
            .get(...params, q.countCap),
        ).n,
      );
      const rows = this.#db
        .prepare(
          `SELECT id, time, event_type, user_name, success, fields FROM audit_events ${cond}
           ORDER BY time DESC, id DESC LIMIT ? OFFSET ?`,
        )
        .all(...params, q.limit, q.offset);
      return { items: rows.map(toAuditEvent), totalCount: total };
    });
  }

  async publish(channel: string, payload: string): Promise<void> {
    checkChannel(channel);
    checkPayload(payload);
    if (this.#closed) throw new UnavailableError("backend is closed");
    this.#notify.notifier.deliver(channel, payload);
  }

  async subscribe(channel: string, handler: NotificationHandler): Promise<() => Promise<void>> {
    checkChannel(channel);
    if (this.#closed) throw new UnavailableError("backend is closed");
    const off = this.#notify.notifier.add(channel, handler);
    this.#subscriptions.add(off);
    handler.listening?.(true);
    return async () => {
      this.#subscriptions.delete(off);
      off();
    };
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    // Appends and puts already accepted are committed before the file closes.
    this.#audit.flush();
    this.#puts.flush();
    this.#closed = true;
    for (const off of this.#subscriptions) off();
    this.#subscriptions.clear();
    this.#notify.release();
    if (this.#sweeper !== undefined) clearInterval(this.#sweeper);
    this.#db.close();
  }

  #now(): number {
    return this.#clock.now().getTime();
  }

  #nextRevision(): number {
    return num(must(this.#stmts.nextRevision.get()).value);
  }

  /** Inside a write transaction: the key must be visible at exactly this revision. */
  #expectRevision(key: string, expected: number): void {
    const row = this.#stmts.get.get(key, this.#now());
    if (row === undefined) throw new NotFoundError(`key ${key} not found`);
    const current = num(row.revision);
    if (current !== expected) {
      throw new CompareFailedError(`key ${key} is at revision ${current}, not ${expected}`);
    }
  }

  #run<T>(fn: () => T): T {
    if (this.#closed) throw new UnavailableError("backend is closed");
    try {
      return fn();
    } catch (err) {
      throw mapError(err);
    }
  }

  #write<T>(fn: () => T): T {
    return this.#tx(this.#stmts.beginImmediate, fn);
  }

  #tx<T>(begin: StatementSync, fn: () => T): T {
    return this.#run(() => {
      begin.run();
      try {
        const result = fn();
        this.#stmts.commit.run();
        return result;
      } catch (err) {
        if (this.#db.isTransaction) this.#stmts.rollback.run();
        throw err;
      }
    });
  }
}

/** Convenience factory with the same options; async only for symmetry with PostgreSQL. */
export async function openSqliteBackend(opts: SqliteBackendOptions): Promise<SqliteBackend> {
  return new SqliteBackend(opts);
}

function migrate(db: DatabaseSync): void {
  // IMMEDIATE: two processes opening a fresh file at once must not both run migration 1.
  db.exec("BEGIN IMMEDIATE");
  try {
    const current = num(must(db.prepare("PRAGMA user_version").get()).user_version);
    for (const m of sqliteMigrations) {
      if (m.version <= current) continue;
      db.exec(m.sql);
      db.exec(`PRAGMA user_version = ${m.version}`);
    }
    db.exec("COMMIT");
  } catch (err) {
    if (db.isTransaction) db.exec("ROLLBACK");
    throw err;
  }
}

function prepareStatements(db: DatabaseSync) {
  const cols = "key, value, revision, expires";
  const visible = "(expires IS NULL OR expires > ?)";
  const p = (sql: string): StatementSync => db.prepare(sql);
  return {
    nextRevision: p("UPDATE revision_seq SET value = value + 1 WHERE id = 1 RETURNING value"),
    get: p(`SELECT ${cols} FROM items WHERE key = ? AND ${visible}`),
    getValue: arrays(p(`SELECT value, revision, expires FROM items WHERE key = ? AND ${visible}`)),
    cas: p(
      `UPDATE items SET value = ?, revision = ?, expires = ? WHERE key = ? AND revision = ? AND ${visible}
       RETURNING ${cols}`,
    ),
    begin: p("BEGIN"),
    beginImmediate: p("BEGIN IMMEDIATE"),
    commit: p("COMMIT"),
    rollback: p("ROLLBACK"),
    upsert: p(
      `INSERT INTO items (key, value, revision, expires) VALUES (?, ?, ?, ?)
       ON CONFLICT (key) DO UPDATE SET value = excluded.value, revision = excluded.revision,
       expires = excluded.expires RETURNING ${cols}`,
    ),
    delete: p("DELETE FROM items WHERE key = ?"),
    range: p(`SELECT ${cols} FROM items WHERE key >= ? AND key < ? AND ${visible} ORDER BY key LIMIT ?`),
    rangeOpen: p(`SELECT ${cols} FROM items WHERE key >= ? AND ${visible} ORDER BY key LIMIT ?`),
    count: p(`SELECT count(*) AS n FROM items WHERE key >= ? AND key < ? AND ${visible}`),
    countOpen: p(`SELECT count(*) AS n FROM items WHERE key >= ? AND ${visible}`),
    deleteBetween: p("DELETE FROM items WHERE key >= ? AND key < ?"),
    deleteOpen: p("DELETE FROM items WHERE key >= ?"),
    sweep: p("DELETE FROM items WHERE expires IS NOT NULL AND expires <= ?"),
    appendAudit: p(
      "INSERT INTO audit_events (time, event_type, user_name, success, fields) VALUES (?, ?, ?, ?, ?)",
    ),
  };
}

function arrays(st: StatementSync): StatementSync {
  st.setReturnArrays(true);
  return st;
}

function must(row: Row | undefined): Row {
  if (row === undefined) throw new Error("statement returned no row");
  return row;
}

function num(v: SQLOutputValue | undefined): number {
  if (typeof v === "number") return v;
  if (typeof v === "bigint") return Number(v);
  throw new Error(`expected a number column, got ${typeof v}`);
}

function str(v: SQLOutputValue | undefined): string {
  if (typeof v === "string") return v;
  throw new Error(`expected a text column, got ${typeof v}`);
}

function toItem(row: Row): Item {
  const item: Item = { key: str(row.key), value: decodeValue(str(row.value)), revision: num(row.revision) };
  if (row.expires !== null && row.expires !== undefined) item.expires = new Date(num(row.expires));
  return item;
}

function toAuditEvent(row: Row): AuditEvent {
  const event: AuditEvent = {
    id: String(num(row.id)),
    time: new Date(num(row.time)),
    event_type: str(row.event_type),
    user_name: str(row.user_name),
    fields: decodeValue(str(row.fields)) as AuditEvent["fields"],
  };
  if (row.success !== null && row.success !== undefined) event.success = num(row.success) === 1;
  return event;
}

/** Lock contention that outlasted busy_timeout is a transient condition, not a bug. */
function mapError(err: unknown): unknown {
  if (err instanceof Error && "errcode" in err && typeof err.errcode === "number") {
    const primary = err.errcode & 0xff;
    if (primary === SQLITE_BUSY || primary === SQLITE_LOCKED) {
      return new UnavailableError("state database is busy", { cause: err });
    }
  }
  return err;
}
