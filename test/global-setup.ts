// Starts the real peers shared by every test file (once per `vitest run`) and tears them down.
// Each harness exports start/stop; the connection details reach the test workers through env
// (vitest forks its workers after global setup, and they inherit this process's environment).
import { PG_URL_ENV, startPostgres } from "./harness/postgres.ts";
import { startShellLockGuard } from "./harness/shell-lock-guard.ts";

export default async function setup(): Promise<() => Promise<void>> {
  const teardowns: Array<() => Promise<void>> = [];
  const teardown = async (): Promise<void> => {
    for (const t of teardowns.reverse()) await t();
  };
  const stopGuard = startShellLockGuard((line) => process.stderr.write(`global setup: ${line}\n`));
  teardowns.push(async () => stopGuard());
  try {
    // PostgreSQL (≈2-3 s): the backend conformance and concurrency tests, and auth on PostgreSQL.
    const hadUrl = process.env[PG_URL_ENV];
    const pgServer = await startPostgres();
    process.env[PG_URL_ENV] = pgServer.url;
    teardowns.push(async () => {
      await pgServer.stop();
      if (hadUrl === undefined) delete process.env[PG_URL_ENV];
    });
  } catch (err) {
    await teardown();
    throw err;
  }
  return teardown;
}
