// Exit codes shared by svc and svcctl (docs/cli.md), and the one place a failure becomes a line
// on stderr plus a code. Typed core errors (also those mapped back from HTTP and gRPC) pick the code.
import { CommanderError } from "commander";
import { isSvcError } from "../core/errors.ts";

export const EXIT = {
  ok: 0,
  error: 1,
  usage: 2,
  notLoggedIn: 3,
  accessDenied: 4,
  notFound: 5,
  unavailable: 6,
  clientTooOld: 7,
} as const;

/** A failure whose exit code is chosen by the CLI itself (not derived from a server error). */
export class CliError extends Error {
  readonly exitCode: number;
  constructor(message: string, exitCode: number = EXIT.error) {
    super(message);
    this.exitCode = exitCode;
  }
}

export function exitCodeOf(err: unknown): number {
  if (err instanceof CliError) return err.exitCode;
  if (err instanceof CommanderError) return err.exitCode === 0 ? EXIT.ok : EXIT.usage;
  if (isSvcError(err)) {
    switch (err.code) {
      case "not_authenticated":
        return EXIT.notLoggedIn;
      case "access_denied":
        return EXIT.accessDenied;
      case "not_found":
        return EXIT.notFound;
      case "bad_parameter":
        return EXIT.usage;
      case "unavailable":
        return EXIT.unavailable;
      default:
        return EXIT.error;
    }
  }
  return EXIT.error;
}

/** The message for stderr: typed errors and CLI errors say what happened; anything else too, briefly. */
export function messageOf(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}

/** Runs a CLI main: prints `<prog>: error: ...` on failure and sets the exit code. */
export async function runCli(prog: string, main: () => Promise<number | undefined>): Promise<void> {
  try {
    const code = await main();
    process.exitCode = code ?? EXIT.ok;
  } catch (err) {
    const code = exitCodeOf(err);
    // Commander already printed usage errors and help.
    if (!(err instanceof CommanderError)) {
      let msg = messageOf(err);
      if (code === EXIT.notLoggedIn && !/svc login|token/.test(msg)) msg += " (run: svc login)";
      process.stderr.write(`${prog}: error: ${msg}\n`);
    }
    process.exitCode = code;
  }
}
