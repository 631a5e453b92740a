// The state backend: the interface plus its two implementations, and one way to open either from
// configuration (the embedded default uses SQLite; several auth replicas share PostgreSQL).
import type { Clock } from "../clock.ts";
import { BadParameterError } from "../errors.ts";
import type { Backend } from "./backend.ts";
import { PostgresBackend } from "./postgres.ts";
import { SqliteBackend } from "./sqlite.ts";

export type * from "./backend.ts";
export {
  DEFAULT_POSTGRES_SCHEMA,
  openPostgresBackend,
  PostgresBackend,
  type PostgresBackendOptions,
} from "./postgres.ts";
export { openSqliteBackend, SqliteBackend, type SqliteBackendOptions } from "./sqlite.ts";
export { MAX_AUDIT_LIMIT, MAX_KEY_LENGTH } from "./validate.ts";

export type BackendConfig =
  | { type: "sqlite"; path: string; sweepIntervalMs?: number; busyTimeoutMs?: number }
  | {
      type: "postgres";
      connectionString: string;
      poolSize?: number;
      schema?: string;
      sweepIntervalMs?: number;
    };

export interface BackendDeps {
  clock: Clock;
  /** Errors of idle PostgreSQL connections; ignored for SQLite. */
  onError?: (err: Error) => void;
}

/** Opens (and migrates) the backend the configuration names. */
export async function openBackend(config: BackendConfig, deps: BackendDeps): Promise<Backend> {
  switch (config.type) {
    case "sqlite":
      return new SqliteBackend({ ...config, clock: deps.clock });
    case "postgres": {
      const opts = { ...config, clock: deps.clock };
      return PostgresBackend.open(deps.onError ? { ...opts, onError: deps.onError } : opts);
    }
    default:
      throw new BadParameterError(`unknown backend type ${String((config as { type: unknown }).type)}`);
  }
}
