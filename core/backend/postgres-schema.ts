// PostgreSQL schema migrations, in order. Each runs once, inside the migration transaction, and
// is recorded in <schema>.schema_migrations. Append only: never edit a shipped migration.
// Migrations must stay additive so an older auth replica keeps working during a rolling upgrade.
export interface PostgresMigration {
  version: number;
  name: string;
  /** SQL for the given (already validated, unquoted-safe) schema name. */
  sql: (schema: string) => string;
}

export const postgresMigrations: readonly PostgresMigration[] = [
  {
    version: 1,
    name: "items and revision sequence",
    sql: (s) => `
      CREATE SEQUENCE ${s}.revision_seq AS bigint;
      CREATE TABLE ${s}.items (
        key text COLLATE "C" NOT NULL PRIMARY KEY,
        value text NOT NULL,
        revision bigint NOT NULL,
        expires bigint
      );
      CREATE INDEX items_expires ON ${s}.items (expires) WHERE expires IS NOT NULL;
    `,
  },
  {
    version: 2,
    name: "audit events",
    sql: (s) => `
      CREATE TABLE ${s}.audit_events (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        time bigint NOT NULL,
        event_type text NOT NULL,
        user_name text NOT NULL,
        success boolean,
        fields text NOT NULL
      );
      CREATE INDEX audit_time ON ${s}.audit_events (time DESC, id DESC);
      CREATE INDEX audit_type_time ON ${s}.audit_events (event_type, time DESC, id DESC);
      CREATE INDEX audit_user_time ON ${s}.audit_events (user_name, time DESC, id DESC);
    `,
  },
  {
    version: 3,
    name: "audit index on type, user and time",
    // See the SQLite migration 3. Not CONCURRENTLY (migrations run in one transaction): while it
    // builds, audit writes wait (3.5 s for a million events on a 2-core machine); reads and the
    // items table are not blocked. ANALYZE so the planner knows the new index at once.
    sql: (s) => `
      CREATE INDEX audit_type_user_time ON ${s}.audit_events (event_type, user_name, time DESC, id DESC);
      ANALYZE ${s}.audit_events;
    `,
  },
];
