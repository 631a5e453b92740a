// Reading secrets: from a file (--password-file, for scripts and tests) or from the terminal
// without echo. Never from a command-line argument (it would show up in `ps` and shell history).
import { readFile } from "node:fs/promises";
import { CliError, EXIT } from "./exit-codes.ts";

export async function readSecretFile(path: string): Promise<string> {
  try {
    return (await readFile(path, "utf8")).replace(/\r?\n$/, "");
  } catch (err) {
    throw new CliError(`cannot read ${path}: ${(err as Error).message}`, EXIT.usage);
  }
}

/** Asks on the controlling terminal without echo; refuses when stdin is not a TTY. */
export function promptHidden(question: string): Promise<string> {
  const stdin = process.stdin;
  if (!stdin.isTTY) {
    return Promise.reject(
      new CliError("no terminal to ask the password on: use --password-file", EXIT.usage),
    );
  }
  return new Promise((resolve, reject) => {
    process.stderr.write(question);
    stdin.setRawMode(true);
    stdin.resume();
    let value = "";
    const done = (err?: Error): void => {
      stdin.setRawMode(false);
      stdin.pause();
      stdin.off("data", onData);
      process.stderr.write("\n");
      if (err) reject(err);
      else resolve(value);
    };
    const onData = (buf: Buffer): void => {
      for (const ch of buf.toString("utf8")) {
        if (ch === "\r" || ch === "\n") {
          done();
          return;
        }
        if (ch === "\u0003") {
          done(new CliError("interrupted", EXIT.error));
          return;
        }
        if (ch === "\u007f" || ch === "\b") value = value.slice(0, -1);
        else value += ch;
      }
    };
    stdin.on("data", onData);
  });
}

export function promptLine(question: string): Promise<string> {
  const stdin = process.stdin;
  if (!stdin.isTTY) return Promise.reject(new CliError("no terminal to ask on: use --user", EXIT.usage));
  return new Promise((resolve) => {
    process.stderr.write(question);
    stdin.resume();
    stdin.once("data", (buf: Buffer) => {
      stdin.pause();
      resolve(buf.toString("utf8").trim());
    });
  });
}

/** A new password: from the file, or asked twice on the terminal. */
export async function newPassword(passwordFile: string | undefined): Promise<string> {
  if (passwordFile) return readSecretFile(passwordFile);
  const first = await promptHidden("New password (at least 12 characters): ");
  const again = await promptHidden("Repeat the new password: ");
  if (first !== again) throw new CliError("the two passwords differ", EXIT.usage);
  return first;
}
