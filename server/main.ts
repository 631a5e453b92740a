// svcd: the single daemon entry point. `svcd start` runs auth and proxy in one process on the
// embedded default; each other subcommand runs one role. Only roles that exist are registered,
// so --help never lists a command that cannot run.
import { Command, CommanderError } from "commander";
import { isSvcError } from "../core/errors.ts";
import { SERVER_VERSION } from "./version.ts";

const program = new Command("svcd")
  .description("svc platform daemon: auth, proxy and the node/bot/operator roles")
  .version(SERVER_VERSION, "-v, --version")
  .showHelpAfterError()
  .exitOverride();

program
  .command("start")
  .description("run auth and proxy in one process on the embedded default (data in $SVC_DATA_DIR or ./data)")
  .option("-c, --config <file>", "config file (default: <data dir>/svc.yaml, created on the first start)")
  .option("-d, --data-dir <dir>", "data folder (overrides $SVC_DATA_DIR)")
  .option("--auth-listen <host:port>", "auth gRPC listen address for this run (config: auth.listen_addr)")
  .option("--proxy-listen <host:port>", "proxy HTTPS listen address for this run (config: proxy.listen_addr)")
  .option(
    "--diag-listen <host:port>",
    "diagnostics listen address for this run (config: auth.diagnostics_addr)",
  )
  .action(
    async (opts: {
      config?: string;
      dataDir?: string;
      authListen?: string;
      proxyListen?: string;
      diagListen?: string;
    }) => {
      const { runEmbedded } = await import("./embedded/start.ts");
      await runEmbedded(opts);
    },
  );

try {
  await program.parseAsync(process.argv);
} catch (err) {
  if (err instanceof CommanderError) {
    process.exitCode = err.exitCode;
  } else {
    const message = isSvcError(err) || err instanceof Error ? err.message : String(err);
    process.stderr.write(`svcd: ${message}\n`);
    process.exitCode = 1;
  }
}
