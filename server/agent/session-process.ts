// Starts what an SSH session runs (a login shell or `shell -c command`), on a real PTY (node-pty)
// when one was requested, else on pipes. When the agent runs as root and the login is someone
// else, the process is started through setpriv with the login's uid, gid and groups.
import { spawn } from "node:child_process";
import { constants } from "node:os";
import * as pty from "node-pty";
import type { PasswdEntry } from "./passwd.ts";

export interface PtyRequest {
  term: string;
  cols: number;
  rows: number;
}

export interface SessionProcessSpec {
  user: PasswdEntry;
  /** start through setpriv as `user` (the agent is root and the login is not) */
  dropPrivileges: boolean;
  /** undefined: an interactive login shell */
  command?: string;
  pty?: PtyRequest;
  env: Record<string, string>;
}

export interface ExitInfo {
  code: number | null;
  /** signal name without "SIG" (as SSH's exit-signal wants), when killed by one */
  signal?: string;
}

export interface SessionProcess {
  write(data: Buffer): boolean;
  endInput(): void;
  resize(cols: number, rows: number): void;
  kill(signal: NodeJS.Signals): void;
  pauseOutput(): void;
  resumeOutput(): void;
  onData(cb: (data: Buffer) => void): void;
  onStderr(cb: (data: Buffer) => void): void;
  onExit(cb: (exit: ExitInfo) => void): void;
}

const SIGNAL_NAMES = new Map<number, string>(
  Object.entries(constants.signals).map(([name, num]) => [num, name.replace(/^SIG/, "")]),
);

function argv(spec: SessionProcessSpec): { file: string; args: string[] } {
  const shell = spec.user.shell;
  const inner = spec.command === undefined ? [shell, "-l"] : [shell, "-c", spec.command];
  if (!spec.dropPrivileges) return { file: inner[0] as string, args: inner.slice(1) };
  return {
    file: "setpriv",
    args: [`--reuid=${spec.user.uid}`, `--regid=${spec.user.gid}`, "--init-groups", "--", ...inner],
  };
}

const clamp = (n: number, lo: number, hi: number): number => Math.min(hi, Math.max(lo, Math.floor(n) || lo));

export function startSessionProcess(spec: SessionProcessSpec): SessionProcess {
  const { file, args } = argv(spec);
  const cwd = spec.user.home;
  if (spec.pty) {
    const p = pty.spawn(file, args, {
      name: spec.pty.term || "xterm",
      cols: clamp(spec.pty.cols, 1, 1000),
      rows: clamp(spec.pty.rows, 1, 1000),
      cwd,
      env: spec.env,
      encoding: null,
    });
    let exited: ExitInfo | undefined;
    const exitCbs: Array<(e: ExitInfo) => void> = [];
    p.onExit(({ exitCode, signal }) => {
      const name = signal ? SIGNAL_NAMES.get(signal) : undefined;
      exited = name ? { code: null, signal: name } : { code: exitCode };
      for (const cb of exitCbs) cb(exited);
    });
    return {
      write: (data) => {
        if (!exited) p.write(data);
        return true;
      },
      endInput: () => {
        if (!exited) p.write(Buffer.of(4)); // ^D: a PTY has no half-close
      },
      resize: (cols, rows) => {
        if (!exited) p.resize(clamp(cols, 1, 1000), clamp(rows, 1, 1000));
      },
      kill: (signal) => {
        if (!exited) p.kill(signal);
      },
      pauseOutput: () => p.pause(),
      resumeOutput: () => p.resume(),
      onData: (cb) => {
        p.onData((d: string | Buffer) => cb(typeof d === "string" ? Buffer.from(d) : d));
      },
      onStderr: () => {},
      onExit: (cb) => {
        if (exited) cb(exited);
        else exitCbs.push(cb);
      },
    };
  }
  const child = spawn(file, args, { cwd, env: spec.env, stdio: ["pipe", "pipe", "pipe"] });
  let exited: ExitInfo | undefined;
  const exitCbs: Array<(e: ExitInfo) => void> = [];
  const finish = (e: ExitInfo): void => {
    if (exited) return;
    exited = e;
    for (const cb of exitCbs) cb(e);
  };
  // "close" (not "exit"): all output has been read by then.
  child.on("close", (code, signal) =>
    finish(signal ? { code: null, signal: signal.replace(/^SIG/, "") } : { code: code ?? 0 }),
  );
  child.on("error", () => finish({ code: 127 })); // could not start
  child.stdin.on("error", () => {}); // EPIPE when the command does not read its input
  return {
    write: (data) => child.stdin.write(data),
    endInput: () => child.stdin.end(),
    resize: () => {},
    kill: (signal) => {
      if (!exited) child.kill(signal);
    },
    pauseOutput: () => {
      child.stdout.pause();
      child.stderr.pause();
    },
    resumeOutput: () => {
      child.stdout.resume();
      child.stderr.resume();
    },
    onData: (cb) => child.stdout.on("data", cb),
    onStderr: (cb) => child.stderr.on("data", cb),
    onExit: (cb) => {
      if (exited) cb(exited);
      else exitCbs.push(cb);
    },
  };
}
