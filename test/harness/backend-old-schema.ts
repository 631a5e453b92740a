// A state store as an older release left it: only the first `version` migrations applied, the
// way that release's own migrate step recorded them. Opening the current backend on it must
// upgrade it in place (the migration tests and bench/audit-search.bench.ts start from this).
import { DatabaseSync } from "node:sqlite";
import pg from "pg";
import { postgresMigrations } from "../../core/backend/postgres-schema.ts";
import { sqliteMigrations } from "../../core/backend/sqlite-schema.ts";

/** Creates (or completes) a SQLite file at schema version `version`. */
export function createSqliteAtVersion(path: string, version: number): void {
  const db = new DatabaseSync(path);
  try {
    db.exec("PRAGMA journal_mode = WAL");
    db.exec("BEGIN IMMEDIATE");
    for (const m of sqliteMigrations) {
      if (m.version > version) break;
      db.exec(m.sql);
      db.exec(`PRAGMA user_version = ${m.version}`);
    }
    db.exec("COMMIT");
  } finally {
    db.close();
  }
}

/** Creates a PostgreSQL schema at version `version`, recorded in its schema_migrations. */
export async function createPostgresAtVersion(url: string, schema: string, version: number): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query("BEGIN");
    await client.query(`CREATE SCHEMA ${schema}`);
    await client.query(
      `CREATE TABLE ${schema}.schema_migrations (
         version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
    );
    for (const m of postgresMigrations) {
      if (m.version > version) break;
      await client.query(m.sql(schema));
      await client.query(`INSERT INTO ${schema}.schema_migrations (version, name) VALUES ($1, $2)`, [
        m.version,
        m.name,
      ]);
    }
    await client.query("COMMIT");
  } finally {
    await client.end();
  }
}
