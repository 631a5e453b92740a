// SQLite schema migrations, applied in order; PRAGMA user_version records how many ran.
// Append only: never edit a migration that has shipped, add a new one.
export interface SqliteMigration {
  version: number;
  name: string;
  sql: string;
}

export const sqliteMigrations: readonly SqliteMigration[] = [
  {
    version: 1,
    name: "items and revision sequence",
    sql: `
      CREATE TABLE revision_seq (id INTEGER PRIMARY KEY CHECK (id = 1), value INTEGER NOT NULL);
      INSERT INTO revision_seq (id, value) VALUES (1, 0);
      CREATE TABLE items (
        key TEXT NOT NULL PRIMARY KEY,
        value TEXT NOT NULL,
        revision INTEGER NOT NULL,
        expires INTEGER
      );
      CREATE INDEX items_expires ON items (expires) WHERE expires IS NOT NULL;
    `,
  },
  {
    version: 2,
    name: "audit events",
    sql: `
      CREATE TABLE audit_events (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        time INTEGER NOT NULL,
        event_type TEXT NOT NULL,
        user_name TEXT NOT NULL,
        success INTEGER,
        fields TEXT NOT NULL
      );
      CREATE INDEX audit_time ON audit_events (time DESC, id DESC);
      CREATE INDEX audit_type_time ON audit_events (event_type, time DESC, id DESC);
      CREATE INDEX audit_user_time ON audit_events (user_name, time DESC, id DESC);
    `,
  },
  {
    version: 3,
    name: "audit index on type, user and time",
    // The console's filtered search (type + user + time range, newest first) walked one of the
    // single-column indexes and filtered the other column row by row: with a million events the
    // rows of a busy type had to be read to find one user's. This index serves the page and its
    // count from the matching rows only. Built in the migration transaction (one pass over the
    // table: about a second per million events).
    sql: `
      CREATE INDEX audit_type_user_time ON audit_events (event_type, user_name, time DESC, id DESC);
    `,
  },
];
