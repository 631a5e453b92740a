// Run one command or open an interactive shell over an authenticated ssh2 client.
import type { ClientChannel, PseudoTtyOptions } from "ssh2";
import { LimitExceededError, UnavailableError } from "../errors.ts";
import type { SshClient } from "./connect.ts";

export interface ExecResult {
  stdout: Buffer;
  stderr: Buffer;
  /** exit status, or null when the command died by a signal (see `signal`) */
  code: number | null;
  signal?: string;
}

export interface ExecOptions {
  /** written to the command's stdin, which is then closed */
  stdin?: string | Buffer;
  /** stdout+stderr bytes kept at most; default 16 MiB (more -> LimitExceededError) */
  maxOutputBytes?: number;
  timeoutMs?: number;
}

/** Runs `command` and collects its output and exit status. */
export async function exec(client: SshClient, command: string, opts: ExecOptions = {}): Promise<ExecResult> {
  const max = opts.maxOutputBytes ?? 16 * 1024 * 1024;
  const channel = await new Promise<ClientChannel>((resolve, reject) => {
    client.exec(command, (err, ch) =>
      err ? reject(new UnavailableError(`exec failed: ${err.message}`)) : resolve(ch),
    );
  });
  return new Promise<ExecResult>((resolve, reject) => {
    const out: Buffer[] = [];
    const errOut: Buffer[] = [];
    let size = 0;
    let code: number | null = null;
    let signal: string | undefined;
    let done = false;
    const finish = (err?: Error): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      if (err) {
        channel.close();
        reject(err);
        return;
      }
      const result: ExecResult = { stdout: Buffer.concat(out), stderr: Buffer.concat(errOut), code };
      if (signal !== undefined) result.signal = signal;
      resolve(result);
    };
    const timer =
      opts.timeoutMs === undefined
        ? undefined
        : setTimeout(() => finish(new UnavailableError("command timed out")), opts.timeoutMs);
    const keep = (into: Buffer[]) => (chunk: Buffer) => {
      size += chunk.length;
      if (size > max) finish(new LimitExceededError(`command output exceeds ${max} bytes`));
      else into.push(chunk);
    };
    channel.on("data", keep(out));
    channel.stderr.on("data", keep(errOut));
    channel.on("exit", (c: number | null, sig?: string) => {
      code = c;
      if (sig !== undefined) signal = sig;
    });
    channel.on("close", () => finish());
    if (opts.stdin !== undefined) channel.end(opts.stdin);
    else channel.end();
  });
}

export interface ShellOptions {
  term?: string;
  cols?: number;
  rows?: number;
}

/** Opens an interactive shell on a PTY; resize it with channel.setWindow(rows, cols, 0, 0). */
export async function shell(client: SshClient, opts: ShellOptions = {}): Promise<ClientChannel> {
  const pty: PseudoTtyOptions = {
    term: opts.term ?? "xterm-256color",
    cols: opts.cols ?? 80,
    rows: opts.rows ?? 24,
  };
  return new Promise((resolve, reject) => {
    client.shell(pty, (err, ch) =>
      err ? reject(new UnavailableError(`shell failed: ${err.message}`)) : resolve(ch),
    );
  });
}
